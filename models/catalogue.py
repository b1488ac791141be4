"""Device catalogue: the switch models rocefab can configure, each on the platform unit of its network
operating system (rocefab/platforms/, which holds the platform's own spec and quirks).

A model's cages, speeds, breakouts and buffer are data here, read by checks, planner and renderers alike.
Figures come from `shared/reference/device-catalogue.md` and
`lossless-roce-vendor-reference.md`; packet-buffer sizes there are secondary sources and are used only as an
upper bound for ECN thresholds, never rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocefab.platforms import switch_specs
from rocefab.platforms.spec import Multihoming, PlatformSpec

__all__ = ["ECN_PROFILES", "MODELS", "PLATFORMS", "CageGroup", "EcnProfile", "Multihoming", "PlatformSpec",
           "SwitchModel", "ecn_family", "lookup_model"]


# The switch platforms, as their units declare them (rocefab/platforms/): key -> spec.
PLATFORMS: dict[str, PlatformSpec] = switch_specs()


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
class EcnProfile:
    """ECN marking on the RoCE queue for one ASIC family, in the unit its vendor documents it in."""

    min_threshold: int
    max_threshold: int
    unit: str  # "kbytes" or "segments" (buffer cells: EOS's unit on Broadcom chips)
    max_mark_percent: int
    source: str


# A RoCE buffer configuration for one ASIC does not carry to another (NVIDIA's Cumulus RoCE guide says so of
# Spectrum generations); these are each family's published starting points, used when the intent sets none.
ECN_PROFILES: dict[str, EcnProfile] = {
    "Spectrum": EcnProfile(150, 1500, "kbytes", 100, "Cumulus Linux 5.14 RoCE guide: `qos roce` marks ECN from "
                           "150,000 B to 1,500,000 B at 100 % (nv show qos roce)"),
    "CloudScale": EcnProfile(950, 3000, "kbytes", 7, "Cisco's public Nexus 9000 RoCE enablement script "
                             "(roce_enable.py): random-detect 950 kbytes / 3000 kbytes, drop-probability 7, weight 0, "
                             "ecn"),
    "StrataXGS": EcnProfile(2000, 10000, "segments", 20, "secondary: AMD ROCm RoCE network guide, Arista example "
                            "(2000 / 10000 segments, max-mark-probability 20, weight 0); no Arista figure found"),
}


def ecn_family(asic: str) -> str:
    """The ECN profile family of an ASIC.

    >>> ecn_family("Spectrum-4"), ecn_family("Tomahawk 5"), ecn_family("CloudScale GX2A")
    ('Spectrum', 'StrataXGS', 'CloudScale')
    """
    if asic.startswith("Spectrum"):
        return "Spectrum"
    if asic.startswith(("Tomahawk", "Trident")):
        return "StrataXGS"
    if asic.startswith("CloudScale"):
        return "CloudScale"
    raise KeyError(f"no ECN profile for ASIC {asic!r}")


@dataclass(frozen=True, slots=True)
class SwitchModel:
    name: str
    vendor: str
    platform: str  # the key of its platform unit
    asic: str
    buffer_mbytes: int
    cage_groups: tuple[CageGroup, ...]
    # EOS Strata (Tomahawk/Trident) chips have separate unicast queues, configured as `uc-tx-queue`.
    queue_keyword: str = ""

    @property
    def spec(self) -> PlatformSpec:
        return PLATFORMS[self.platform]

    @property
    def ecn_profile(self) -> EcnProfile:
        return ECN_PROFILES[ecn_family(self.asic)]

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
        SwitchModel("SN4600C", "NVIDIA", "cumulus", "Spectrum-3", 64,
                    (_all(1, 64, 100, 4, "QSFP28", 2),)),
        SwitchModel("SN4700", "NVIDIA", "cumulus", "Spectrum-3", 64,
                    (_all(1, 32, 400, 8, "QSFP-DD", 2, 4),)),
        SwitchModel("SN5400", "NVIDIA", "cumulus", "Spectrum-4", 160,
                    (_all(1, 64, 400, 8, "QSFP-DD", 2, 4),)),
        SwitchModel("SN5600", "NVIDIA", "cumulus", "Spectrum-4", 160,
                    (_all(1, 64, 800, 8, "OSFP", 2, 4),)),
        # Arista EOS, lane-named interfaces (EthernetN/1 unbroken).
        SwitchModel("DCS-7060DX5-64S", "Arista", "eos", "Tomahawk 4", 113,
                    (_all(1, 64, 400, 8, "QSFP-DD", 2, 4),), "uc-tx-queue"),
        SwitchModel("DCS-7060X6-64PE", "Arista", "eos", "Tomahawk 5", 165,
                    (_all(1, 64, 800, 8, "OSFP", 2, 4),), "uc-tx-queue"),
        SwitchModel("DCS-7050CX4-24D8", "Arista", "eos", "Trident 4", 82,
                    (_all(1, 24, 200, 4, "QSFP56"), _all(25, 8, 400, 8, "QSFP-DD", 2)), "uc-tx-queue"),
        # Cisco Nexus 9000, NX-OS. The two 10G SFP+ service ports (1/65-66, 1/33-34) are not fabric cages.
        SwitchModel("N9K-C9364D-GX2A", "Cisco", "nxos", "CloudScale GX2A", 120,
                    (_all(1, 64, 400, 8, "QSFP-DD", 2, 4),)),
        SwitchModel("N9K-C9332D-GX2B", "Cisco", "nxos", "CloudScale GX2B", 120,
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
