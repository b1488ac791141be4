"""PFC headroom per tier and platform, as `rocefab plan` and summary.md show it: the worst port's
arithmetic and what the platform's config says about it."""

from __future__ import annotations

from rocefab.renderers.nic_headroom import DRIVER_DEFAULT_CABLE_M, nic_xoff_bytes
from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.record import record

RENDERED_AS = {"cable-length": "cable-length {cable} m",
               "pause-buffer": "pause buffer-size {buffer} B, pause at {pause} B", "none": "not rendered"}


@record
class HeadroomRow:
    role: str
    platform: str
    switches: int  # devices: switches, or hosts in the NICs' row
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
    host = _host_row(plan)
    return rows + ([host] if host is not None else [])


def _host_row(plan: FabricPlan) -> HeadroomRow | None:
    """The hosts' NICs: the mlx5 driver's xoff for the longest host cable, as the host scripts tell it the length."""
    ports = [(m.cable_m, m.nic_cable_len, b.speed_gbps) for h in plan.hosts for b in h.bonds for m in b.members]
    ports += [(n.cable_m, n.nic_cable_len, n.speed_gbps) for h in plan.hosts for n in h.nics]
    if not ports:
        return None
    mtu = plan.host_profile.mtu_bytes
    _, told, speed = max(ports, key=lambda p: (nic_xoff_bytes(p[2], p[1], mtu), p[0]))
    return HeadroomRow("host", "mlx5 NIC", len(plan.hosts), max(p[0] for p in ports), speed,
                       nic_xoff_bytes(speed, told, mtu),
                       f"(301 + 2.16 x {told} m) x {speed}G + 2.72 x {mtu} B (the driver's xoff)",
                       f"mlnx_qos --cable_len {told} (driver default {DRIVER_DEFAULT_CABLE_M})")
