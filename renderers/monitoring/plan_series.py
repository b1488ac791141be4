"""The plan as Prometheus series, in the text exposition format, for node_exporter's textfile collector on the
monitoring host: what every port should be (peer, tier, pod, rail, speed), which BGP sessions must be up and how
many equal-cost uplinks each switch has. The alert rules join the exporters' series to these on (device, port),
so an alert names the far end of the link and the tier it sits in, and "below plan" has a plan to compare with.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rocefab.renderers.monitoring.exporters import oc_queue_name, oc_speed
from rocefab.renderers.plan import FabricPlan, Host, Role, Switch

PORT_INFO = "rocefab_port_info"
PORT_SPEED = "rocefab_port_planned_speed_bytes_per_second"
BGP_SESSION = "rocefab_bgp_session_info"
ECMP_PATHS = "rocefab_ecmp_planned_paths"
LOSSLESS_QUEUE = "rocefab_lossless_queue_info"

TIER_RANK = {Role.LEAF: 0, Role.SPINE: 1, Role.SUPERSPINE: 2}


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    labels: tuple[tuple[str, str], ...]
    value: int


def _escape(value: str) -> str:
    """A label value as the exposition format quotes it (most values need nothing: checked first, it is cheaper)."""
    if "\\" not in value and '"' not in value and "\n" not in value:
        return value
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def exposition_line(series: Series) -> str:
    labels = ",".join(f'{k}="{_escape(v)}"' for k, v in series.labels)
    return f"{series.name}{{{labels}}} {series.value}"


def _placement(pod: int | None, rail: int | None) -> tuple[tuple[str, str], ...]:
    return (("pod", "" if pod is None else str(pod)), ("rail", "" if rail is None else str(rail)))


def _switch_series(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Series]:
    where = _placement(sw.pod, sw.rail)
    for port in sw.ports:
        yield Series(PORT_INFO, (("device", sw.name), ("port", port.name), ("peer", port.peer.device),
                                 ("peer_port", port.peer.port), ("tier", sw.role.value), ("kind", port.role.value),
                                 ("port_speed", oc_speed(port.speed_gbps)), *where), 1)
        yield Series(PORT_SPEED, (("device", sw.name), ("port", port.name)), port.speed_gbps * 125_000_000)
    uplinks = 0
    for n in sw.bgp.neighbors:
        peer_role = roles.get(n.peer_device)
        up = peer_role is not None and TIER_RANK[peer_role] > TIER_RANK[sw.role]
        uplinks += up
        direction = "up" if up else "peer" if peer_role is sw.role else "down"
        yield Series(BGP_SESSION, (("device", sw.name), ("neighbor", n.address or n.interface or ""),
                                   ("peer", n.peer_device), ("direction", direction), ("tier", sw.role.value),
                                   *where), 1)
    if uplinks:
        yield Series(ECMP_PATHS, (("device", sw.name), ("tier", sw.role.value), *where), uplinks)
    for priority in plan.qos.lossless_priorities:
        yield Series(LOSSLESS_QUEUE, (("device", sw.name), ("queue", oc_queue_name(sw.platform, priority)),
                                      ("priority", str(priority))), 1)


def _host_series(host: Host) -> Iterator[Series]:
    for bond in host.bonds:
        where = _placement(host.pod, None)
        yield Series(PORT_INFO, (("device", host.name), ("port", bond.rdma_device), ("peer", bond.members[0].switch),
                                 ("peer_port", bond.members[0].port), ("tier", "host"), ("kind", "rdma"),
                                 ("port_speed", oc_speed(bond.speed_gbps)), *where), 1)
        yield Series(PORT_SPEED, (("device", host.name), ("port", bond.rdma_device)), bond.speed_gbps * 125_000_000)
        for member in bond.members:
            yield Series(PORT_INFO, (("device", host.name), ("port", member.netdev), ("peer", member.switch),
                                     ("peer_port", member.port), ("tier", "host"), ("kind", "nic"),
                                     ("port_speed", oc_speed(bond.speed_gbps)), *where), 1)
    for nic in host.nics:
        where = _placement(host.pod, nic.rail)
        for port, kind in ((nic.rdma_device, "rdma"), (nic.netdev, "nic")):
            yield Series(PORT_INFO, (("device", host.name), ("port", port), ("peer", nic.switch),
                                     ("peer_port", nic.port), ("tier", "host"), ("kind", kind),
                                     ("port_speed", oc_speed(nic.speed_gbps)), *where), 1)
        yield Series(PORT_SPEED, (("device", host.name), ("port", nic.rdma_device)), nic.speed_gbps * 125_000_000)


def plan_series(plan: FabricPlan) -> list[Series]:
    series: list[Series] = []
    roles = {sw.name: sw.role for sw in plan.switches}
    for sw in plan.switches:
        series.extend(_switch_series(plan, sw, roles))
    for host in plan.hosts:
        series.extend(_host_series(host))
    return series


HELP = {
    PORT_INFO: "a planned port: its far end, tier, pod, rail and planned speed (value 1)",
    PORT_SPEED: "a planned port's speed",
    BGP_SESSION: "a planned BGP session (value 1); neighbor is the address, or the interface when unnumbered",
    ECMP_PATHS: "equal-cost uplink paths the plan gives the switch (one per uplink BGP session)",
    LOSSLESS_QUEUE: "the egress queue of a lossless priority, as the switch's OpenConfig queue list names it",
}


def render_plan_series(series: list[Series], header: list[str]) -> str:
    by_name: dict[str, list[str]] = {name: [] for name in HELP}
    for s in series:
        by_name[s.name].append(exposition_line(s))
    lines = [f"# {line}" for line in header]
    for name, rows in by_name.items():
        lines += [f"# HELP {name} {HELP[name]}", f"# TYPE {name} gauge", *rows]
    return "\n".join(lines) + "\n"
