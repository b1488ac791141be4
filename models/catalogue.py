"""Device catalogue: network operating systems (platforms) and the switch models rocefab can configure.

Platform differences are data here, read by checks, planner and renderers alike, never re-derived from
`if platform == ...` branches. Figures come from `shared/reference/device-catalogue.md` and
`lossless-roce-vendor-reference.md`; packet-buffer sizes there are secondary sources and are used only as an
upper bound for ECN thresholds, never rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Platform(StrEnum):
    CUMULUS = "cumulus"
    EOS = "eos"
    NXOS = "nxos"


class Multihoming(StrEnum):
    MLAG = "mlag"
    VPC = "vpc"
    EVPN_MH = "evpn-mh"


@dataclass(frozen=True, slots=True)
class PlatformSpec:
    """What one network operating system accepts, for the release rocefab's templates target."""

    key: Platform
    display_name: str
    release: str
    mtu_max_bytes: int
    mgmt_interface: str
    # Port naming. `cage` is the front-panel cage number; a broken-out child also gets its 0-based index,
    # 1-based index and first electrical lane (EOS names children by lane).
    port_format: str
    child_format: str
    multihoming: tuple[Multihoming, ...]
    bgp_unnumbered: bool
    ecmp_max_paths: int
    # VLAN ids the platform keeps for itself (inclusive ranges); rocefab's own MLAG peer VLAN is added by
    # the planner per pair.
    reserved_vlans: tuple[tuple[int, int], ...]
    # Default VLAN of the routed SVI over the MLAG/vPC peer link (kept clear of the reserved ranges).
    peer_vlan_default: int
    lag_format: str  # name of LAG number n
    peer_link_lag: str  # name of the LAG forming the MLAG/vPC peer link
    # The leaf pair's backup BGP session rides the peer link: over this link-local interface where the
    # NOS creates one (Cumulus peerlink.4094), otherwise over a /31 on the peer VLAN's SVI.
    peer_session_interface: str | None

    def is_reserved_vlan(self, vlan: int) -> bool:
        return any(low <= vlan <= high for low, high in self.reserved_vlans)

    def port_name(self, cage: int) -> str:
        return self.port_format.format(cage=cage)

    def child_name(self, cage: int, index: int, lanes_per_child: int) -> str:
        return self.child_format.format(
            cage=cage, index0=index, index1=index + 1, lane=1 + index * lanes_per_child
        )


# NX-OS serves strict priority only on its highest-numbered qos-groups (N9K 10.5 QoS guide, queuing guidelines),
# so the CNP class takes group 7 there, as in Cisco's RoCE configurations, whatever its fabric priority.
NXOS_STRICT_QOS_GROUP = 7

PLATFORMS: dict[Platform, PlatformSpec] = {
    Platform.CUMULUS: PlatformSpec(
        key=Platform.CUMULUS,
        display_name="NVIDIA Cumulus Linux (NVUE)",
        release="5.14",
        mtu_max_bytes=9216,
        mgmt_interface="eth0",
        port_format="swp{cage}",
        child_format="swp{cage}s{index0}",
        multihoming=(Multihoming.MLAG,),
        bgp_unnumbered=True,
        ecmp_max_paths=128,
        # Cumulus keeps 3725-3999 for internal use by default (bridge reserved-vlan-range).
        reserved_vlans=((3725, 3999),),
        peer_vlan_default=4094,
        lag_format="bond{n}",
        peer_link_lag="peerlink",
        peer_session_interface="peerlink.4094",
    ),
    Platform.EOS: PlatformSpec(
        key=Platform.EOS,
        display_name="Arista EOS",
        release="4.34",
        mtu_max_bytes=9214,
        mgmt_interface="Management1",
        port_format="Ethernet{cage}/1",
        child_format="Ethernet{cage}/{lane}",
        multihoming=(Multihoming.MLAG,),
        bgp_unnumbered=True,
        ecmp_max_paths=128,
        reserved_vlans=(),
        peer_vlan_default=4094,
        lag_format="Port-Channel{n}",
        peer_link_lag="Port-Channel1000",
        peer_session_interface=None,
    ),
    Platform.NXOS: PlatformSpec(
        key=Platform.NXOS,
        display_name="Cisco NX-OS (Nexus 9000)",
        release="10.5",
        mtu_max_bytes=9216,
        mgmt_interface="mgmt0",
        port_format="Ethernet1/{cage}",
        child_format="Ethernet1/{cage}/{index1}",
        multihoming=(Multihoming.VPC,),
        bgp_unnumbered=False,
        ecmp_max_paths=64,
        # Default reserved block for internal VLANs on Nexus 9000.
        reserved_vlans=((3968, 4095),),
        peer_vlan_default=3967,
        lag_format="port-channel{n}",
        peer_link_lag="port-channel1000",
        peer_session_interface=None,
    ),
}


@dataclass(frozen=True, slots=True)
class CageGroup:
    """A run of identical front-panel cages: `count` cages numbered from `first`."""

    first: int
    count: int
    speed_gbps: int
    lanes: int
    form_factor: str
    # breakout factor -> cages that accept it (empty tuple: every cage of the group)
    breakouts: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def cages(self) -> range:
        return range(self.first, self.first + self.count)

    def breakout_factor(self, cage: int, speed_gbps: int) -> int | None:
        """The split factor that yields `speed_gbps` children on `cage`, or None if the cage cannot."""
        if speed_gbps == self.speed_gbps:
            return 1
        if self.speed_gbps % speed_gbps:
            return None
        factor = self.speed_gbps // speed_gbps
        allowed = self.breakouts.get(factor)
        if allowed is None or (allowed and cage not in allowed):
            return None
        return factor


@dataclass(frozen=True, slots=True)
class SwitchModel:
    name: str
    vendor: str
    platform: Platform
    asic: str
    buffer_mbytes: int
    cage_groups: tuple[CageGroup, ...]
    # EOS Strata (Tomahawk/Trident) chips have separate unicast queues, configured as `uc-tx-queue`.
    queue_keyword: str = ""

    @property
    def spec(self) -> PlatformSpec:
        return PLATFORMS[self.platform]

    def group_of(self, cage: int) -> CageGroup | None:
        for group in self.cage_groups:
            if cage in group.cages:
                return group
        return None

    @property
    def cage_count(self) -> int:
        return sum(g.count for g in self.cage_groups)

    def port_capacity(self, speed_gbps: int) -> int:
        """How many `speed_gbps` ports the whole front panel gives, breaking cages out where allowed."""
        return sum(g.breakout_factor(c, speed_gbps) or 0 for g in self.cage_groups for c in g.cages)

    def speeds_gbps(self) -> tuple[int, ...]:
        """Every port speed the model offers natively or by breakout, fastest first."""
        speeds = set()
        for g in self.cage_groups:
            speeds.add(g.speed_gbps)
            speeds.update(g.speed_gbps // k for k in g.breakouts)
        return tuple(sorted(speeds, reverse=True))


def _all(first: int, count: int, speed: int, lanes: int, form: str, *factors: int) -> CageGroup:
    return CageGroup(first, count, speed, lanes, form, dict.fromkeys(factors, ()))


MODELS: dict[str, SwitchModel] = {
    m.name: m
    for m in (
        # NVIDIA Spectrum, Cumulus Linux. Breakouts as Cumulus 5.16 "Switch Port Attributes" documents;
        # 4x on SN4600C and 8x on SN5600 need the neighbouring cage disabled, so they are left out.
        SwitchModel("SN4600C", "NVIDIA", Platform.CUMULUS, "Spectrum-3", 64,
                    (_all(1, 64, 100, 4, "QSFP28", 2),)),
        SwitchModel("SN4700", "NVIDIA", Platform.CUMULUS, "Spectrum-3", 64,
                    (_all(1, 32, 400, 8, "QSFP-DD", 2, 4),)),
        SwitchModel("SN5400", "NVIDIA", Platform.CUMULUS, "Spectrum-4", 160,
                    (_all(1, 64, 400, 8, "QSFP-DD", 2, 4),)),
        SwitchModel("SN5600", "NVIDIA", Platform.CUMULUS, "Spectrum-4", 160,
                    (_all(1, 64, 800, 8, "OSFP", 2, 4),)),
        # Arista EOS, lane-named interfaces (EthernetN/1 unbroken).
        SwitchModel("DCS-7060DX5-64S", "Arista", Platform.EOS, "Tomahawk 4", 113,
                    (_all(1, 64, 400, 8, "QSFP-DD", 2, 4),), "uc-tx-queue"),
        SwitchModel("DCS-7060X6-64PE", "Arista", Platform.EOS, "Tomahawk 5", 165,
                    (_all(1, 64, 800, 8, "OSFP", 2, 4),), "uc-tx-queue"),
        SwitchModel("DCS-7050CX4-24D8", "Arista", Platform.EOS, "Trident 4", 82,
                    (_all(1, 24, 200, 4, "QSFP56"), _all(25, 8, 400, 8, "QSFP-DD", 2)), "uc-tx-queue"),
        # Cisco Nexus 9000, NX-OS. The two 10G SFP+ service ports (1/65-66, 1/33-34) are not fabric cages.
        SwitchModel("N9K-C9364D-GX2A", "Cisco", Platform.NXOS, "CloudScale GX2A", 120,
                    (_all(1, 64, 400, 8, "QSFP-DD", 2, 4),)),
        SwitchModel("N9K-C9332D-GX2B", "Cisco", Platform.NXOS, "CloudScale GX2B", 120,
                    (_all(1, 32, 400, 8, "QSFP-DD", 2, 4),)),
    )
}


def lookup_model(name: str) -> SwitchModel | None:
    """Find a model by its catalogue name, case-insensitively and with or without the vendor prefix.

    >>> lookup_model("sn5600").name
    'SN5600'
    >>> lookup_model("7060X6-64PE").name
    'DCS-7060X6-64PE'
    """
    wanted = name.strip().upper()
    for key, model in MODELS.items():
        if wanted in (key.upper(), key.upper().removeprefix("DCS-"), key.upper().removeprefix("N9K-")):
            return model
    return None
