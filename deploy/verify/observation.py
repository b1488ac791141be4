"""What verify reads from a device, in words every platform shares.

Each platform's reader (rocefab/platforms/<platform>/observe.py) turns its own show commands into these; the
checks (deploy/verify/checks.py) compare them with the plan and never see a platform's output. A value the
platform did not report is None, which a check reports as "not reported" rather than guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


def count(value: object) -> int | None:
    """A counter as a device's JSON prints it: a number, or a string of digits (NX-API); anything else (a word such
    as "n/a", a negative, a boolean) is not a count: None, not reported.

    >>> count(12), count("12"), count(" 12 "), count("n/a"), count(-1), count(True)
    (12, 12, 12, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if text.isdigit() else None


def asn(text: object) -> int | None:
    """An AS number as devices print it: asplain ("4200000001") or asdot ("65001.1028" = 65001 x 65536 + 1028, as
    EOS and NX-OS print 4-byte ASNs when configured so); anything else is not reported."""
    word = str(text if text is not None else "").strip()
    high, dot, low = word.partition(".")
    if dot:
        return int(high) * 65536 + int(low) if high.isdigit() and low.isdigit() and int(high) < 65536 \
            and int(low) < 65536 else None
    return int(word) if word.isdigit() and int(word) < 2**32 else None


@dataclass(frozen=True, slots=True)
class Interface:
    name: str
    up: bool
    speed_gbps: float | None  # what the link trained at; None while down or not reported
    mtu: int | None


@dataclass(frozen=True, slots=True)
class Neighbor:
    """An LLDP neighbour seen on a local port."""

    device: str  # its system name, without a domain
    port: str


@dataclass(frozen=True, slots=True)
class BgpSession:
    interface: str | None  # unnumbered: the local interface the session runs on
    address: str | None  # numbered: the peer's address
    remote_asn: int | None
    state: str  # as the device words it: Established, Active, Idle, ...

    @property
    def established(self) -> bool:
        return self.state.lower() == "established"


@dataclass(frozen=True, slots=True)
class PortQos:
    """Effective QoS of one switch port: what its own lines and any profile applied to it add up to."""

    trust_dscp: bool
    pfc_priorities: frozenset[int]  # priorities PFC pauses on this port (empty: PFC off)
    watchdog: bool


@dataclass(frozen=True, slots=True)
class Ecn:
    min_threshold: int
    max_threshold: int
    unit: str  # "kbytes" or "segments", as the plan's EcnMarking
    max_mark_percent: int


@dataclass(frozen=True, slots=True)
class SwitchQos:
    dscp_priority: tuple[int, ...]  # the priority (traffic class) each of the 64 DSCPs lands in
    strict_priorities: frozenset[int]
    ecn: Mapping[int, Ecn]  # by priority / traffic class
    ports: Mapping[str, PortQos]


@dataclass(frozen=True, slots=True)
class Mlag:
    healthy: bool
    detail: str  # the device's own words, e.g. "state active, negotiation connected, peer-link up"


@dataclass(frozen=True, slots=True)
class NextHop:
    """One equal-cost next hop of an installed route."""

    address: str | None  # the gateway (an IPv6 link-local one for an unnumbered session); None: attached
    interface: str | None  # the local interface, by its long name; None where the device does not say


@dataclass(frozen=True, slots=True)
class SwitchObservation:
    device: str
    interfaces: Mapping[str, Interface]
    lldp: Mapping[str, tuple[Neighbor, ...]]  # by local port
    bgp: tuple[BgpSession, ...]
    qos: SwitchQos | None
    mlag: Mlag | None  # None: the switch runs no MLAG/vPC
    # the routes verify asked for, each with its next hops (a prefix without a route maps to ()); None: not read
    routes: Mapping[str, tuple[NextHop, ...]] | None = None


@dataclass(frozen=True, slots=True)
class HostNetdev:
    name: str
    up: bool
    speed_gbps: float | None
    mtu: int | None
    trust: str | None = None  # "dscp" / "pcp"; None where the port has no DCB (a bond)
    pfc: tuple[int, ...] | None = None  # enable flags of priorities 0-7
    dscp_priority: tuple[int, ...] | None = None  # the NIC's priority for each DSCP (64), under DSCP trust
    pause_rx: bool | None = None  # 802.3x global pause
    pause_tx: bool | None = None
    ecn_np: frozenset[int] | None = None  # priorities whose DCQCN notification point is enabled
    ecn_rp: frozenset[int] | None = None  # ... and reaction point
    bond_slaves: tuple[str, ...] | None = None  # bonds: their ports, and the LACP/mii state
    bond_mii_up: bool | None = None
    cable_m: int | None = None  # the cable length the NIC's driver sizes its lossless buffer for (`Cable len:`)


@dataclass(frozen=True, slots=True)
class RdmaDevice:
    name: str
    state: str  # the port state sysfs prints, e.g. "4: ACTIVE"
    roce_v2_gids: tuple[tuple[int, str, str], ...]  # (index, gid, netdev) of every RoCE v2 GID
    traffic_class: int | None  # tc/1/traffic_class
    cma_tos: int | None  # rdma_cm default ToS
    fw_version: str | None = None  # the NIC's firmware release, e.g. "28.39.1002"
    board_id: str | None = None  # its PSID, which names the board model (e.g. "MT_0000000834")
    why: Mapping[str, str] = field(default_factory=dict)  # a field that could not be read: why, and the fix

    @property
    def firmware(self) -> str | None:
        """As `ethtool -i` words it: "28.39.1002 (MT_0000000834)"."""
        if self.fw_version is None:
            return None
        return f"{self.fw_version} ({self.board_id})" if self.board_id else self.fw_version

    @property
    def active(self) -> bool:
        return self.state.split(":")[-1].strip().upper() == "ACTIVE"


@dataclass(frozen=True, slots=True)
class HostObservation:
    device: str
    netdevs: Mapping[str, HostNetdev]
    rdma: Mapping[str, RdmaDevice]
    nccl_conf: str | None  # /etc/nccl.conf, None when absent
    modules: frozenset[str] | None = None  # the loaded kernel modules verify asks about; None: not readable


@dataclass(frozen=True, slots=True)
class PortCounters:
    """One read of a switch port's counters (they only grow; verify compares two reads).

    None is "the device did not report it": a table, key or row the reader did not find, never a zero. Inside a
    per-class mapping a class without an entry is not reported either. `sources` names the command each field
    comes from (by field name), so a check that finds None can say which command did not answer it.
    """

    in_packets: int | None
    in_errors: int | None
    pfc_rx: int | None  # PFC pause frames received / sent, all priorities
    pfc_tx: int | None
    queue_drops: Mapping[int, int] | None  # egress drops per traffic class (qos-group)
    pfc_rx_priority: Mapping[int, int] | None = None  # per priority
    pfc_tx_priority: Mapping[int, int] | None = None
    watchdog_storms: Mapping[int, int] | None = None  # times the PFC watchdog shut the queue down, per class
    ecn_marked: Mapping[int, int] | None = None  # packets sent ECN-marked, per egress queue
    out_packets: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RdmaCounters:
    """One read of an RDMA port's counters (they only grow; verify compares two reads). A counter the NIC does
    not have is None, or absent from `retransmits`."""

    tx_packets: int | None  # RoCE packets the port sent
    retransmits: Mapping[str, int]  # what makes a sender retransmit, by the NIC's counter name
    ecn_marked: int | None  # ECN-marked RoCE packets received (notification point)
    cnp_sent: int | None  # CNPs sent for them
    cnp_handled: int | None  # CNPs received and acted on (reaction point)


@dataclass(frozen=True, slots=True)
class NetdevPause:
    """One read of a NIC port's PFC pause frames, by priority."""

    rx: Mapping[int, int]
    tx: Mapping[int, int]


@dataclass(frozen=True, slots=True)
class HostCounters:
    rdma: Mapping[str, RdmaCounters]  # by RDMA device
    pause: Mapping[str, NetdevPause]  # by netdev (ports, not bonds)


Observation = SwitchObservation | HostObservation
