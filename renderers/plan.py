"""The resolved fabric: every device, port, link, address, ASN and queue, as plain frozen data.

The planner builds it once; every renderer, check and artifact reads it and decides nothing more. It dumps
to JSON (`rocefab plan --json`) so operators and other tools can consume the same truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from enum import StrEnum
from ipaddress import IPv4Network
from itertools import compress
from operator import attrgetter

from rocefab.models.resolve import Role
from rocefab.renderers.headroom import Headroom
from rocefab.renderers.jsontext import dumps_outline
from rocefab.renderers.nic_headroom import nic_cable_len
from rocefab.renderers.record import record
from rocefab.renderers.services import SiteServices

__all__ = ["Role"]  # the tiers, as the resolution names them; the plan's other types are defined here


class PortRole(StrEnum):
    HOST = "host"  # leaf port facing a host NIC
    UPLINK = "uplink"  # port facing the next tier up (leaf to spine, spine to super-spine)
    DOWNLINK = "downlink"  # port facing the tier below (spine to leaf, super-spine to spine)
    PEER_LINK = "peer-link"  # leaf port facing its MLAG/vPC peer


class LinkKind(StrEnum):
    HOST = "host"
    FABRIC = "fabric"
    PEER_LINK = "peer-link"


def network_of(interface: str) -> str:
    """The network of an IPv4 interface the planner wrote ("10.0.0.5/31" -> "10.0.0.4/31"), as str(ip_interface(
    interface).network) gives it: by integer arithmetic, for 98,304 NICs (ipaddress took a second)."""
    address, _, length = interface.partition("/")
    bits = int(length)
    a, b, c, d = map(int, address.split("."))
    value = (a << 24 | b << 16 | c << 8 | d) & (0xFFFFFFFF ^ (1 << (32 - bits)) - 1)
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}/{bits}"


@record
class Endpoint:
    device: str
    port: str


@record
class Link:
    kind: LinkKind
    a: Endpoint  # the switch side for host links; the leaf side for fabric links
    b: Endpoint
    speed_gbps: int
    # Cable values (see `cable_values`), left out of the repr
    medium: str = field(default="", repr=False)  # models.media.Medium, from rack placement (cable_lengths.py)
    length_m: int = field(default=0, repr=False)  # the cable's length as the intent gives or estimates it


@record
class Breakout:
    """A front-panel cage split into `factor` children of `child_speed_gbps` each."""

    cage: int
    parent: str  # the cage's unbroken port name
    factor: int
    child_speed_gbps: int
    lanes_per_child: int
    children: tuple[str, ...]


@record
class SwitchPort:
    name: str
    cage: int
    role: PortRole
    speed_gbps: int
    lanes: int
    broken_out: bool
    peer: Endpoint
    description: str
    ipv4: str | None = None  # "10.0.64.1/31" for numbered routed links
    unnumbered: bool = False  # BGP over the IPv6 link-local address
    lag: str | None = None  # name of the LAG this port is a member of
    # A routed fabric port whose neighbour takes a smaller MTU (EOS's 9214 facing a 9216 NX-OS or NVUE port): the
    # link's one IP MTU. None: the switch's own.
    mtu_bytes: int | None = None


@record
class Lag:
    name: str  # platform interface name: Port-Channel1, port-channel1, bond1, peerlink
    number: int
    role: PortRole  # HOST or PEER_LINK
    members: tuple[str, ...]
    description: str
    access_vlan: int | None = None  # host LAGs
    mlag_id: int | None = None  # host LAGs: the MLAG/vPC id shared by both leaves
    host: str | None = None
    host_bond: str | None = None


@record
class Svi:
    vlan: int
    name: str
    ipv4: str  # this leaf's own address, with prefix length
    virtual_ipv4: str | None  # anycast gateway shared by the pair (training VLANs only)
    prefix: str  # the routed slice, advertised into BGP
    peer_link: bool = False


@record
class BgpNeighbor:
    peer_device: str
    remote_asn: int
    description: str
    group: str  # SPINES, LEAVES or MLAG-PEER
    interface: str | None = None  # unnumbered: the local interface
    address: str | None = None  # numbered: the peer's address


@record
class BfdTimers:
    interval_ms: int
    min_rx_ms: int
    multiplier: int


@record
class EcnMarking:
    """ECN marking on the RoCE queue of one switch: the intent's, or its ASIC family's published profile."""

    min_threshold: int
    max_threshold: int
    unit: str  # "kbytes" or "segments"
    max_mark_percent: int
    source: str


@record
class LoadBalancing:
    fields: tuple[str, ...]  # what ECMP hashes on: source-ip, destination-ip, ip-protocol, source-port, ...
    rotate: int | None  # the hash rotation of this switch's tier, where the platform takes one (None: its own)
    adaptive_routing: bool  # on this switch's adaptive-routing ports (the intent asked, and the ASIC has it)
    adaptive_routing_requested: bool
    roce_qp_hash: bool = False  # the hash also takes the RoCE destination queue pair
    dynamic: str | None = None  # dynamic load balancing: "flowlet" or "per-packet"; None: hashing only
    dynamic_ports: tuple[str, ...] = ()  # the ports it runs on, where the NOS lists them (NX-OS dlb-interface)
    dlb_mac: str | None = None  # NX-OS: the fabric-wide virtual next-hop MAC of DLB
    flow_set_size: int | None = None  # EOS: the DLB flow-set size (None: the platform's)
    # Top-level config sections of this switch that its NOS applies only after a reload (NX-OS DLB)
    reload_sections: tuple[str, ...] = ()


@record
class Bgp:
    asn: int
    router_id: str
    max_paths: int
    networks: tuple[str, ...]
    neighbors: tuple[BgpNeighbor, ...]
    uses_unnumbered: bool
    bfd: BfdTimers | None = None  # BFD on every session, with these timers; None: off
    # Summary-only aggregates (a rail leaf's host /31s): the `networks` inside one stay in BGP as its contributors,
    # and peers receive only the aggregate.
    aggregates: tuple[str, ...] = ()

    @property
    def advertised(self) -> tuple[str, ...]:
        """What peers receive from this switch: its networks outside every aggregate, then the aggregates.

        >>> Bgp(1, "10.0.0.1", 1, ("10.0.0.1/32", "10.2.0.0/31", "10.2.0.2/31"), (), False,
        ...     aggregates=("10.2.0.0/30",)).advertised
        ('10.0.0.1/32', '10.2.0.0/30')
        """
        inside = [IPv4Network(a) for a in self.aggregates]
        kept = tuple(n for n in self.networks
                     if not any((net := IPv4Network(n)) != a and net.subnet_of(a) for a in inside))
        return kept + self.aggregates


@record
class Mlag:
    kind: str  # "mlag" or "vpc"
    domain_id: int
    domain_name: str
    peer: str
    primary: bool  # leaf a of the pair
    peer_link: str  # LAG name
    peer_vlan: int
    local_ipv4: str  # "/31" address on the peer SVI
    peer_ipv4: str
    system_mac: str  # Cumulus MLAG system MAC
    peer_loopback_ipv4: str  # Cumulus MLAG backup link / in-band vPC keepalive
    # Management addresses for the out-of-band vPC keepalive and EOS MLAG heartbeat, when the intent
    # gives management addressing.
    keepalive_source: str | None
    keepalive_destination: str | None


@record
class Management:
    interface: str
    ipv4: str
    gateway: str


@record
class Switch:
    name: str
    role: Role
    model: str
    platform: str
    release: str
    pair: str | None  # the leaf pair (ToR dual-homed designs)
    pod: int | None  # the pod of a leaf or spine in a three-tier fabric
    rail: int | None  # the NIC index a rail-optimized leaf serves
    asn: int
    loopback_ipv4: str
    mtu_bytes: int
    queue_keyword: str
    breakouts: tuple[Breakout, ...]
    ports: tuple[SwitchPort, ...]
    lags: tuple[Lag, ...]
    vlans: tuple[int, ...]  # training VLANs present on this switch
    svis: tuple[Svi, ...]
    bgp: Bgp
    mlag: Mlag | None
    management: Management | None
    rack: str  # see renderers/placement.py
    # What the no-drop priority needs after a pause on the port that needs most (renderers/headroom.py), and the
    # longest cable of any port: a NOS that sizes headroom itself from a cable length must be given that one.
    # Cable values (see `cable_values`), left out of the repr.
    pfc_headroom: Headroom | None = field(default=None, repr=False)
    longest_cable_m: int = field(default=0, repr=False)
    load_balancing: LoadBalancing | None = None
    ecn: EcnMarking | None = None

    def port_mtu(self, port: SwitchPort) -> int:
        """The MTU a port is given: its link's where the neighbour takes less, else the switch's."""
        return port.mtu_bytes or self.mtu_bytes


@record
class HostPort:
    netdev: str
    switch: str
    port: str
    # the planned length of its cable to the switch, which sizes both ends' PFC headroom; a cable value (see
    # `cable_values`), left out of the repr
    cable_m: int = field(default=0, repr=False)

    @property
    def nic_cable_len(self) -> int:
        """What the NIC's driver is told the cable is (renderers/nic_headroom.py)."""
        return nic_cable_len(self.cable_m)


@record
class HostBond:
    name: str
    members: tuple[HostPort, HostPort]
    rdma_device: str
    speed_gbps: int
    vlan: int
    ipv4: str  # with prefix length
    gateway: str
    routes: tuple[str, ...]  # prefixes reached through the gateway
    # With two or more bonds, each gets a routing table of its own for what it sources: the kernel resolves a
    # RoCE peer's address bound to the GID's netdev, and a route through another bond does not qualify.
    table: int | None = None
    table_routes: tuple[str, ...] = ()  # what that table routes through this bond's gateway: every training VLAN

    @property
    def source(self) -> str:
        """The address the bond's policy rule matches (its own, without the prefix length)."""
        return self.ipv4.split("/")[0]

    @property
    def connected(self) -> str:
        """The bond's own subnet (its training VLAN's), which its table reaches on-link: same-rack peers."""
        return network_of(self.ipv4)


@record
class HostNic:
    """A single-port NIC routed to its own leaf (rail-optimized): a /31 with the leaf, no bond."""

    netdev: str
    rdma_device: str
    speed_gbps: int
    rail: int
    switch: str
    port: str
    ipv4: str  # with prefix length
    gateway: str  # the leaf's side of the /31
    routes: tuple[str, ...]  # main table: this rail's prefix, reached through this NIC's leaf
    table: int  # a routing table of its own, so traffic sourced from this NIC leaves by this NIC
    table_routes: tuple[str, ...]  # what that table routes through the leaf: every rail's addresses
    # the planned length of its cable to the leaf, which sizes both ends' PFC headroom; a cable value (see
    # `cable_values`), left out of the repr
    cable_m: int = field(default=0, repr=False)

    @property
    def nic_cable_len(self) -> int:
        """What the NIC's driver is told the cable is (renderers/nic_headroom.py)."""
        return nic_cable_len(self.cable_m)

    @property
    def source(self) -> str:
        """The address the NIC's policy rule matches (its own, without the prefix length)."""
        return self.ipv4.split("/")[0]

    @property
    def connected(self) -> str:
        """The NIC's own /31 with its leaf, which its table reaches on-link."""
        return network_of(self.ipv4)


@record
class Host:
    name: str
    pair: str | None
    pod: int | None
    bonds: tuple[HostBond, ...]
    nics: tuple[HostNic, ...] = ()
    rack: str = ""  # set when the plan is finished; see renderers/placement.py

    @property
    def rdma_devices(self) -> tuple[str, ...]:
        return tuple(b.rdma_device for b in self.bonds) + tuple(n.rdma_device for n in self.nics)


# Readers of one field of a link, for reading it off every link by C loops, `map(A_DEVICE, plan.links)`, where that
# measured faster than a loop in Python (294,912 links at 98,304 GPUs). Not always: where a comprehension reads
# several fields of each link, Python 3.11's specialised attribute loads beat these generic ones.
LINK_KIND, LINK_SPEED = attrgetter("kind"), attrgetter("speed_gbps")
A_DEVICE, B_DEVICE = attrgetter("a.device"), attrgetter("b.device")


def fabric_links(links: Sequence[Link]) -> list[Link]:
    """The links between switches, in plan order, picked by C loops."""
    return list(compress(links, map(LinkKind.FABRIC.__eq__, map(LINK_KIND, links))))


def cable_values(item: Switch | Host | Link) -> tuple[object, ...]:
    """A device's or a link's cable values: what follows from its cables' lengths and media (the PFC headroom a
    port needs, what a NIC is told its cable is, the cabling plan's lengths). They are the only fields the
    records leave out of their repr, which the input keys are made from (input_keys.py): a device's key covers
    them beside its repr; the fabric's topology key does not, so a cable measured anew re-renders the two
    devices at its ends and the cabling plan, not the monitoring or the bandwidth tests, which read no cable
    value (tests/test_input_keys.py)."""
    if isinstance(item, Link):
        return item.medium, item.length_m
    if isinstance(item, Switch):
        return item.pfc_headroom, item.longest_cable_m
    return (tuple(nic.cable_m for nic in item.nics),
            tuple(member.cable_m for bond in item.bonds for member in bond.members))


@record
class Qos:
    trust: str
    roce_dscp: int
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int
    dscp_to_priority: tuple[tuple[int, int], ...]  # every explicit mapping, sorted by DSCP
    lossless_priorities: tuple[int, ...]
    # Traffic class / queue of each priority. rocefab keeps it the identity on every platform so that
    # "priority 3", "traffic-class 3", "qos-group 3" and "queue 3" are one and the same thing.
    ets_roce_percent: int
    ets_default_percent: int
    watchdog_enabled: bool
    watchdog_polling_interval_ms: int
    watchdog_robustness: int
    watchdog_recovery_ms: int
    measured_headroom_bytes: int | None  # the intent's measured PFC headroom, replacing the estimate
    roce_tos: int  # IPv4 TOS byte hosts put on RoCE packets: DSCP << 2 | ECT(0)

    @property
    def dscp_classes(self) -> tuple[int, ...]:
        """The fabric's priority for each of the 64 DSCPs, the same on every switch and NIC: what the intent
        names, and the default class 0 for every other code point, so no traffic the intent did not name
        shares the lossless queue (how pause storms start) or the strict CNP queue (which it could starve
        others from). Each platform renders the entries its own default map gets wrong."""
        named = dict(self.dscp_to_priority)
        return tuple(named.get(d, 0) for d in range(64))

    @property
    def pfc_vector(self) -> tuple[int, ...]:
        """PFC enable flags for priorities 0-7, as `mlnx_qos --pfc` takes them."""
        return tuple(1 if p in self.lossless_priorities else 0 for p in range(8))


@record
class Vlan:
    id: int
    name: str
    subnet: str


@record
class HostProfile:
    mtu_bytes: int
    rx_ring: int
    tx_ring: int
    nccl_env: tuple[tuple[str, str], ...]  # without NCCL_IB_HCA, which is per host


@record
class Operations:
    """The intent's alert thresholds and bandwidth targets (models/operations.py), as the renderers read them."""

    error_rate_percent: float
    retransmit_rate_percent: float
    pause_surge_factor: int
    pause_baseline_s: int
    pause_surge_floor_per_s: int
    ecn_mark_percent: float
    rate_window_s: int
    for_s: int
    scrape_interval_s: int
    perftest_percent_of_line_rate: int
    allreduce_busbw_percent_of_line_rate: int


@record
class Source:
    """Where the plan came from, printed in every generated file's header."""

    fabric: str
    description: str
    intent_file: str
    intent_sha256: str
    rocefab_version: str


@record
class FabricPlan:
    source: Source
    qos: Qos
    vlans: tuple[Vlan, ...]
    switches: tuple[Switch, ...]
    hosts: tuple[Host, ...]
    links: tuple[Link, ...]
    host_profile: HostProfile
    operations: Operations
    services: SiteServices | None = None  # the intent's services section (renderers/services.py), if it has one

    def switch(self, name: str) -> Switch:
        for sw in self.switches:
            if sw.name == name:
                return sw
        raise KeyError(name)


def plan_to_json(plan: FabricPlan) -> str:
    return dumps_outline(plan)

