"""The plan as Prometheus series, in the text exposition format, for node_exporter's textfile collector on the
monitoring host: what every port should be (peer, tier, pod, rail, speed), which BGP sessions must be up and how
many equal-cost uplinks each switch has. The alert rules join the exporters' series to these on (device, port),
so an alert names the far end of the link and the tier it sits in, and "below plan" has a plan to compare with.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from rocefab.renderers.monitoring.exporters import oc_queue_name, oc_speed
from rocefab.renderers.plan import FabricPlan, Host, Role, Switch

PORT_INFO = "rocefab_port_info"
PORT_SPEED = "rocefab_port_planned_speed_bytes_per_second"
BGP_SESSION = "rocefab_bgp_session_info"
ECMP_PATHS = "rocefab_ecmp_planned_paths"
LOSSLESS_QUEUE = "rocefab_lossless_queue_info"

TIER_RANK = {Role.LEAF: 0, Role.SPINE: 1, Role.SUPERSPINE: 2}


# The label names of each series, in the order they are printed; a series carries only their values, so the
# 1.7 million series of a 98,304-GPU fabric cost a tuple each, and print with one format string per name.
LABELS: dict[str, tuple[str, ...]] = {
    PORT_INFO: ("device", "port", "peer", "peer_port", "tier", "kind", "port_speed", "pod", "rail"),
    PORT_SPEED: ("device", "port"),
    BGP_SESSION: ("device", "neighbor", "peer", "direction", "tier", "pod", "rail"),
    ECMP_PATHS: ("device", "tier", "pod", "rail"),
    LOSSLESS_QUEUE: ("device", "queue", "priority"),
}
_FORMAT = {name: name + "{" + ",".join(f'{key}="%s"' for key in keys) + "} %d" for name, keys in LABELS.items()}


class Series(NamedTuple):  # a tuple: a frozen dataclass costs three times as much to build
    name: str
    values: tuple[str, ...]  # of the labels LABELS[name] names, in that order
    value: int

    @property
    def labels(self) -> tuple[tuple[str, str], ...]:
        return tuple(zip(LABELS[self.name], self.values, strict=True))


def _escape(value: str) -> str:
    """A label value as the exposition format quotes it (most values need nothing: checked first, it is cheaper)."""
    if "\\" not in value and '"' not in value and "\n" not in value:
        return value
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def exposition_line(series: Series) -> str:
    return _FORMAT[series.name] % (*map(_escape, series.values), series.value)


def _placement(pod: int | None, rail: int | None) -> tuple[str, str]:
    return ("" if pod is None else str(pod)), ("" if rail is None else str(rail))


def _switch_series(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Series]:
    pod, rail = _placement(sw.pod, sw.rail)
    name, tier = sw.name, sw.role.value
    for port in sw.ports:
        yield Series(PORT_INFO, (name, port.name, port.peer.device, port.peer.port, tier, port.role.value,
                                 oc_speed(port.speed_gbps), pod, rail), 1)
        yield Series(PORT_SPEED, (name, port.name), port.speed_gbps * 125_000_000)
    uplinks = 0
    for n in sw.bgp.neighbors:
        peer_role = roles.get(n.peer_device)
        up = peer_role is not None and TIER_RANK[peer_role] > TIER_RANK[sw.role]
        uplinks += up
        direction = "up" if up else "peer" if peer_role is sw.role else "down"
        yield Series(BGP_SESSION, (name, n.address or n.interface or "", n.peer_device, direction, tier, pod, rail), 1)
    if uplinks:
        yield Series(ECMP_PATHS, (name, tier, pod, rail), uplinks)
    for priority in plan.qos.lossless_priorities:
        yield Series(LOSSLESS_QUEUE, (name, oc_queue_name(sw.platform, priority), str(priority)), 1)


def _host_series(host: Host) -> Iterator[Series]:
    name = host.name
    for bond in host.bonds:
        pod, rail = _placement(host.pod, None)
        speed = oc_speed(bond.speed_gbps)
        first = bond.members[0]
        yield Series(PORT_INFO, (name, bond.rdma_device, first.switch, first.port, "host", "rdma", speed, pod, rail), 1)
        yield Series(PORT_SPEED, (name, bond.rdma_device), bond.speed_gbps * 125_000_000)
        for member in bond.members:
            yield Series(PORT_INFO, (name, member.netdev, member.switch, member.port, "host", "nic", speed, pod, rail),
                         1)
    for nic in host.nics:
        pod, rail = _placement(host.pod, nic.rail)
        speed = oc_speed(nic.speed_gbps)
        for port, kind in ((nic.rdma_device, "rdma"), (nic.netdev, "nic")):
            yield Series(PORT_INFO, (name, port, nic.switch, nic.port, "host", kind, speed, pod, rail), 1)
        yield Series(PORT_SPEED, (name, nic.rdma_device), nic.speed_gbps * 125_000_000)


def plan_series(plan: FabricPlan) -> Iterator[Series]:
    """Every series of the plan, switches first, as they are made (a large fabric has millions)."""
    roles = {sw.name: sw.role for sw in plan.switches}
    for sw in plan.switches:
        yield from _switch_series(plan, sw, roles)
    for host in plan.hosts:
        yield from _host_series(host)


def sample_series(plan: FabricPlan) -> list[Series]:
    """The series of the leading devices only, in plan order: enough to hold the first switch port (and its
    queue and planned speed), the first BGP session, the first switch with equal-cost uplinks and the first
    host RDMA port — what the promtool tests are built on (rule_tests.py), without the millions of the rest."""
    series: list[Series] = []
    roles = {sw.name: sw.role for sw in plan.switches}
    for sw in plan.switches:
        mine = list(_switch_series(plan, sw, roles))
        series += mine
        if any(s.name == ECMP_PATHS for s in mine) and any(s.name == PORT_INFO for s in series):
            break
    for host in plan.hosts:
        mine = list(_host_series(host))
        series += mine
        if any(s.name == PORT_INFO and s.values[5] == "rdma" for s in mine):
            break
    return series


HELP = {
    PORT_INFO: "a planned port: its far end, tier, pod, rail and planned speed (value 1)",
    PORT_SPEED: "a planned port's speed",
    BGP_SESSION: "a planned BGP session (value 1); neighbor is the address, or the interface when unnumbered",
    ECMP_PATHS: "equal-cost uplink paths the plan gives the switch (one per uplink BGP session)",
    LOSSLESS_QUEUE: "the egress queue of a lossless priority, as the switch's OpenConfig queue list names it",
}


def render_plan_series(series: Iterable[Series], header: list[str]) -> str:
    by_name: dict[str, list[str]] = {name: [] for name in HELP}
    for s in series:
        by_name[s.name].append(exposition_line(s))
    lines = [f"# {line}" for line in header]
    for name, rows in by_name.items():
        lines += [f"# HELP {name} {HELP[name]}", f"# TYPE {name} gauge", *rows]
    return "\n".join(lines) + "\n"
