"""The planner's working state: one mutable draft per switch while ports, links and sessions are added, and
the counters (switch index, /31 pool) that decide addresses in the order things are created."""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

from rocefab.models.catalogue import SwitchModel
from rocefab.models.findings import Finding, Path, Severity
from rocefab.models.intent import Intent
from rocefab.models.resolve import ResolvedFabric, Role, SwitchSlot
from rocefab.renderers.cable_lengths import Cables
from rocefab.renderers.plan import BgpNeighbor, Endpoint, Lag, Link, LinkKind, Management, Mlag, Source, Svi, SwitchPort
from rocefab.renderers.port_paths import PortPaths, SharedAllocator
from rocefab.renderers.ports import AllocationError


class PlanningError(Exception):
    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


@dataclass(slots=True)
class SwitchDraft:
    """Mutable working state for one switch while the planner fills it in."""

    name: str
    role: Role
    model: SwitchModel
    pair: str | None
    asn: int
    loopback: IPv4Address
    allocator: SharedAllocator
    ports: list[SwitchPort]
    lags: list[Lag]
    svis: list[Svi]
    neighbors: list[BgpNeighbor]
    networks: list[str]
    mlag: Mlag | None = None
    management: Management | None = None
    pod: int | None = None
    rail: int | None = None
    aggregates: list[str] = field(default_factory=list)  # summary-only BGP aggregates of its `networks`


def address(net: IPv4Network, offset: int) -> IPv4Address:
    return net.network_address + offset


def dotted(address: int) -> str:
    """An IPv4 address given as an integer, printed as `str(IPv4Address(...))` prints it, without the object: a
    rail fabric of 98,304 GPUs prints two for each of its NICs.

    >>> dotted(int(IPv4Address("10.128.1.1")))
    '10.128.1.1'
    """
    if not 0 <= address < 1 << 32:
        raise ValueError(f"{address} is no IPv4 address")
    return f"{address >> 24}.{address >> 16 & 255}.{address >> 8 & 255}.{address & 255}"


@dataclass
class PlanState:
    """What every planning step shares: the intent and its resolution, the drafts, the links so far, the
    findings, the next free /31 of the point-to-point pool, and, once every switch is drafted, the rack of each
    device and what gives each link its medium and length (`place`)."""

    intent: Intent
    fabric: ResolvedFabric
    source: Source
    drafts: dict[str, SwitchDraft] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    p2p_next: int = 0
    racks: dict[str, str] = field(default_factory=dict)
    cables: Cables | None = None
    port_paths: PortPaths = field(default_factory=PortPaths)  # requests the switches of a model share

    def link(self, kind: LinkKind, a: Endpoint, b: Endpoint, speed_gbps: int) -> Link:
        """A new link, with its cable's medium and length, added to the plan's links."""
        assert self.cables is not None, "links are made once the racks are placed"
        made = self.cables.link(kind, a, b, speed_gbps)
        self.links.append(made)
        return made

    def fail(self, exc: AllocationError, path: Path) -> None:
        self.findings.append(Finding(exc.code, Severity.ERROR, exc.path or path, exc.message, exc.hint))

    def draft(self, slot: SwitchSlot) -> SwitchDraft:
        """A new switch draft; loopback and management addresses follow the order switches are drafted."""
        index = len(self.drafts)
        lo = address(self.intent.underlay.loopback_subnet, index + 1)
        mgmt = None
        m = self.intent.management
        if m is not None:
            mgmt = Management(slot.model.spec.mgmt_interface,
                              f"{address(m.subnet, m.first_offset + index)}/{m.subnet.prefixlen}", str(m.gateway))
        allocator = SharedAllocator(slot.model, slot.name, self.port_paths)
        d = SwitchDraft(slot.name, slot.role, slot.model, slot.pair, slot.asn, lo, allocator, [], [], [], [],
                        [f"{lo}/32"], management=mgmt, pod=slot.pod, rail=slot.rail)
        self.drafts[slot.name] = d
        return d
