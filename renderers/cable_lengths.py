"""Every link's medium and cable length, from rack placement and the intent's cabling section.

The medium follows from where the two ends stand (models/media.py): the same rack, copper; racks of one pod,
multimode; different pods or a super-spine end, single-mode. The length is the intent's value for that class
(by default the medium's reach), or the measured length the intent gives for the link. A measured length must
name a planned switch port and stay within its medium's reach: a longer cable needs another medium than the
one the plan orders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rocefab.models.findings import Finding, Severity
from rocefab.models.intent import Cabling
from rocefab.models.media import REACH_M, Medium
from rocefab.renderers.plan import Link, Role
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


def measure(links: Sequence[Link], ends: Mapping[str, End], cabling: Cabling) -> tuple[list[Link], list[Finding]]:
    """The links with medium and length set, and the findings on the intent's measured cables."""
    measured: dict[tuple[str, str], tuple[int, int]] = {}  # (device, port) -> (length, index in the intent)
    findings: list[Finding] = []
    for i, cable in enumerate(cabling.measured):
        key = (cable.device, cable.port)
        if key in measured:
            findings.append(Finding("duplicate-cable", Severity.ERROR, ("cabling", "measured", i),
                                    f"{cable.device} {cable.port} is measured twice", "keep one entry per cable"))
        measured[key] = (cable.length_m, i)
    used: set[tuple[str, str]] = set()
    out: list[Link] = []
    lengths = {kind: class_length(cabling, kind) for kind in Medium}
    for link in links:
        kind = medium(ends[link.a.device], ends[link.b.device])
        length = lengths[kind]
        for key in ((link.a.device, link.a.port), (link.b.device, link.b.port)) if measured else ():
            if key in measured:
                used.add(key)
                length, i = measured[key]
                if length > REACH_M[kind]:
                    findings.append(Finding(
                        "cable-beyond-reach", Severity.ERROR, ("cabling", "measured", i, "length_m"),
                        f"{link.a.device} {link.a.port} - {link.b.device} {link.b.port} is {kind} "
                        f"(reach {REACH_M[kind]} m) but measured {length} m",
                        "the planned medium cannot span it: move the equipment closer or re-rack"))
        # the constructor, not dataclasses.replace: this runs once per link, 100,000+ times on large fabrics
        out.append(Link(link.kind, link.a, link.b, link.speed_gbps, kind.value, length))
    for key, (_, i) in measured.items():
        if key not in used:
            findings.append(Finding("cable-unknown", Severity.ERROR, ("cabling", "measured", i, "port"),
                                    f"no planned link ends at {key[0]} {key[1]}",
                                    "name a switch port of the plan (`rocefab plan --json` lists them)"))
    return out, findings
