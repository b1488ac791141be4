"""PFC headroom per tier and platform, as `rocefab plan` and summary.md show it: the worst port's
arithmetic and what the platform's config says about it."""

from __future__ import annotations

from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.record import record

RENDERED_AS = {"cable-length": "cable-length {cable} m",
               "pause-buffer": "pause buffer-size {buffer} B, pause at {pause} B", "none": "not rendered"}


@record
class HeadroomRow:
    role: str
    platform: str
    switches: int
    longest_cable_m: int  # any port's
    speed_gbps: int  # the neediest port's, like `headroom_bytes` and `arithmetic`
    headroom_bytes: int
    arithmetic: str
    rendered_as: str


def headroom_rows(plan: FabricPlan) -> list[HeadroomRow]:
    from rocefab.platforms import unit  # here: the platform units import the renderers

    groups: dict[tuple[str, str], list[Switch]] = {}
    for sw in plan.switches:
        if sw.pfc_headroom is not None:
            groups.setdefault((sw.role.value, sw.platform), []).append(sw)
    rows = []
    for (role, platform), members in groups.items():
        worst = max(members, key=lambda sw: sw.pfc_headroom.bytes if sw.pfc_headroom else 0).pfc_headroom
        assert worst is not None
        longest = max(sw.longest_cable_m for sw in members)
        spec = unit(platform).spec
        how = "-" if spec is None else RENDERED_AS[spec.headroom_by].format(
            cable=longest, buffer=2 * worst.bytes, pause=worst.bytes)
        if spec and spec.headroom_by != "cable-length" and longest <= spec.headroom_rendered_above_m:
            how = f"platform default (<= {spec.headroom_rendered_above_m} m)"
        rows.append(HeadroomRow(role, platform, len(members), longest, worst.speed_gbps, worst.bytes,
                                worst.formula, how))
    return rows
