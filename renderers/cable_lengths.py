"""Every link's medium and cable length, from rack placement and the intent's cabling section.

The medium follows from where the two ends stand (models/media.py): the same rack, copper; racks of one pod,
multimode; different pods or a super-spine end, single-mode. The length is the intent's value for that class
(by default the medium's reach), or the measured length the intent gives for the link. A measured length must
name a planned switch port and stay within its medium's reach: a longer cable needs another medium than the
one the plan orders.
"""

from __future__ import annotations

from collections.abc import Mapping

from rocefab.models.findings import Finding, Severity
from rocefab.models.intent import Cabling
from rocefab.models.media import REACH_M, Medium
from rocefab.renderers.plan import Endpoint, Link, LinkKind, Role
from rocefab.renderers.record import record


@record
class End:
    """What the medium decision needs to know of a link end."""

    rack: str
    role: Role | None  # None: a server
    pod: int | None


def medium(a: End, b: End) -> Medium:
    if a.rack == b.rack:
        return Medium.COPPER
    if b.role is not None and (Role.SUPERSPINE in (a.role, b.role) or a.pod != b.pod):
        return Medium.SINGLE_MODE
    return Medium.MULTIMODE


def class_length(cabling: Cabling, kind: Medium) -> int:
    lengths = cabling.lengths
    return {Medium.COPPER: lengths.copper_m, Medium.MULTIMODE: lengths.multimode_m,
            Medium.SINGLE_MODE: lengths.single_mode_m}[kind]


class Cables:
    """Each link's medium and length, given as the planner makes the link (the racks are placed before any
    link is made), and the findings on the intent's measured cables."""

    def __init__(self, ends: Mapping[str, End], cabling: Cabling) -> None:
        self.ends = ends
        self.findings: list[Finding] = []
        self.measured: dict[tuple[str, str], tuple[int, int]] = {}  # (device, port) -> (length, index in intent)
        for i, cable in enumerate(cabling.measured):
            key = (cable.device, cable.port)
            if key in self.measured:
                self.findings.append(Finding("duplicate-cable", Severity.ERROR, ("cabling", "measured", i),
                                             f"{cable.device} {cable.port} is measured twice",
                                             "keep one entry per cable"))
            self.measured[key] = (cable.length_m, i)
        self.used: set[tuple[str, str]] = set()
        self.lengths = {kind: class_length(cabling, kind) for kind in Medium}
        self.values = {kind: kind.value for kind in Medium}  # Enum.value is a property: looked up per link

    def link(self, kind: LinkKind, a: Endpoint, b: Endpoint, speed_gbps: int) -> Link:
        """The link with its medium and length (runs once per link, 300,000 times at 98,304 GPUs)."""
        medium_ = medium(self.ends[a.device], self.ends[b.device])
        length = self.lengths[medium_]
        if self.measured:
            for key in ((a.device, a.port), (b.device, b.port)):
                if key in self.measured:
                    self.used.add(key)
                    length, i = self.measured[key]
                    if length > REACH_M[medium_]:
                        self.findings.append(Finding(
                            "cable-beyond-reach", Severity.ERROR, ("cabling", "measured", i, "length_m"),
                            f"{a.device} {a.port} - {b.device} {b.port} is {medium_} "
                            f"(reach {REACH_M[medium_]} m) but measured {length} m",
                            "the planned medium cannot span it: move the equipment closer or re-rack"))
        return Link(kind, a, b, speed_gbps, self.values[medium_], length)

    def all_findings(self) -> list[Finding]:
        """The findings so far and one for each measured cable no link ends at: call once every link is made."""
        return self.findings + [
            Finding("cable-unknown", Severity.ERROR, ("cabling", "measured", i, "port"),
                    f"no planned link ends at {key[0]} {key[1]}",
                    "name a switch port of the plan (`rocefab plan --json` lists them)")
            for key, (_, i) in self.measured.items() if key not in self.used]
