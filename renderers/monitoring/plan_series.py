"""The plan as Prometheus series, in the text exposition format, for node_exporter's textfile collector on the
monitoring host: what every port should be (peer, tier, pod, rail, speed), which BGP sessions must be up and how
many equal-cost uplinks each switch has. The alert rules join the exporters' series to these on (device, port),
so an alert names the far end of the link and the tier it sits in, and "below plan" has a plan to compare with.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from itertools import repeat
from typing import NamedTuple

from rocefab.renderers.monitoring.exporters import oc_queue_name
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
    # no label that no rule or dashboard reads: the planned speed is its own series (PORT_SPEED), not a label here
    PORT_INFO: ("device", "port", "peer", "peer_port", "tier", "kind", "pod", "rail"),
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


@cache
def _form_without(name: str, empty: tuple[bool, ...]) -> str:
    """The line format of series `name` without the labels marked `empty`."""
    keys = [key for key, drop in zip(LABELS[name], empty, strict=True) if not drop]
    return name + "{" + ",".join(f'{key}="%s"' for key in keys) + "} %d"


def _line(name: str, values: tuple[str, ...], value: int) -> str:
    """One line of the textfile: `values` are the series' label values unescaped. A label with an empty value is
    left out: Prometheus stores it so anyway (an empty label is no label), and a super-spine's or a spine's rail,
    printed empty on most of a rail fabric's series, was a tenth of the file."""
    joined = "".join(values)  # one test of all the values: a name or an address needs no escaping
    if "\\" in joined or '"' in joined or "\n" in joined:
        values = tuple(map(_escape, values))
    if "" in values:  # map and filter, not generators: most series of a rail fabric have an empty label
        return _form_without(name, tuple(map(operator.not_, values))) % (*filter(None, values), value)
    return _FORMAT[name] % (*values, value)


def _placement(pod: int | None, rail: int | None) -> tuple[str, str]:
    return ("" if pod is None else str(pod)), ("" if rail is None else str(rail))


def _directions(sw: Switch, roles: dict[str, Role]) -> dict[Role | None, str]:
    """Where a peer of each role sits from `sw`: up a tier, a peer of its own tier, or down (a host: None)."""
    mine = TIER_RANK[sw.role]
    return {None: "down", **{role: "up" if rank > mine else "peer" if role is sw.role else "down"
                             for role, rank in TIER_RANK.items()}}


Row = tuple[tuple[str, ...], int]  # a series' label values (as Series.values) and its value, the name implied


# One maker per series name, over the switches and over the hosts: the file lists each name's series together,
# so it is written a name at a time, straight from the plan, without holding millions of series.

def _switch_ports(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Row]:
    pod, rail = _placement(sw.pod, sw.rail)
    name, tier = sw.name, sw.role.value
    for port in sw.ports:
        # port.role is a StrEnum, a str whose text is its value (cheaper than asking for .value per port)
        yield (name, port.name, port.peer.device, port.peer.port, tier, port.role, pod, rail), 1


def _switch_speeds(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Row]:
    for port in sw.ports:
        yield (sw.name, port.name), port.speed_gbps * 125_000_000


def _sessions(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Row]:
    pod, rail = _placement(sw.pod, sw.rail)
    name, tier = sw.name, sw.role.value
    direction = _directions(sw, roles)
    for n in sw.bgp.neighbors:
        yield (name, n.address or n.interface or "", n.peer_device, direction[roles.get(n.peer_device)], tier, pod,
               rail), 1


def _ecmp(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Row]:
    direction = _directions(sw, roles)
    uplinks = sum(direction[roles.get(n.peer_device)] == "up" for n in sw.bgp.neighbors)
    if uplinks:
        yield (sw.name, sw.role.value, *_placement(sw.pod, sw.rail)), uplinks


def _queues(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> Iterator[Row]:
    for priority in plan.qos.lossless_priorities:
        yield (sw.name, oc_queue_name(sw.platform, priority), str(priority)), 1


def _host_ports(host: Host) -> Iterator[Row]:
    name = host.name
    for bond in host.bonds:
        pod, rail = _placement(host.pod, None)
        first = bond.members[0]
        yield (name, bond.rdma_device, first.switch, first.port, "host", "rdma", pod, rail), 1
        for member in bond.members:
            yield (name, member.netdev, member.switch, member.port, "host", "nic", pod, rail), 1
    for nic in host.nics:
        pod, rail = _placement(host.pod, nic.rail)
        for port, kind in ((nic.rdma_device, "rdma"), (nic.netdev, "nic")):
            yield (name, port, nic.switch, nic.port, "host", kind, pod, rail), 1


def _host_speeds(host: Host) -> Iterator[Row]:
    for bond in host.bonds:
        yield (host.name, bond.rdma_device), bond.speed_gbps * 125_000_000
    for nic in host.nics:
        yield (host.name, nic.rdma_device), nic.speed_gbps * 125_000_000


SwitchMaker = Callable[[FabricPlan, Switch, dict[str, Role]], Iterator[Row]]
HostMaker = Callable[[Host], Iterator[Row]]
_MAKERS: dict[str, tuple[SwitchMaker, HostMaker | None]] = {
    PORT_INFO: (_switch_ports, _host_ports),
    PORT_SPEED: (_switch_speeds, _host_speeds),
    BGP_SESSION: (_sessions, None),
    ECMP_PATHS: (_ecmp, None),
    LOSSLESS_QUEUE: (_queues, None),
}


def _named(plan: FabricPlan, name: str, switches: Iterable[Switch], hosts: Iterable[Host]) -> Iterator[Row]:
    roles = {sw.name: sw.role for sw in plan.switches}
    of_switch, of_host = _MAKERS[name]
    for sw in switches:
        yield from of_switch(plan, sw, roles)
    if of_host is not None:
        for host in hosts:
            yield from of_host(host)


def plan_series(plan: FabricPlan) -> Iterator[Series]:
    """Every series of the plan, a name at a time (switches, then hosts), as they are made."""
    for name in _MAKERS:
        for values, value in _named(plan, name, plan.switches, plan.hosts):
            yield Series(name, values, value)


def sample_series(plan: FabricPlan) -> list[Series]:
    """The series of a few devices only: enough to hold the first switch port (and its queue and planned speed),
    the first BGP session, the first switch with equal-cost uplinks and the first host RDMA port — what the
    promtool tests are built on (rule_tests.py), without the millions of the rest."""
    roles = {sw.name: sw.role for sw in plan.switches}
    # The first switch with ports, the first with BGP sessions and the first with equal-cost uplinks, in plan
    # order: what is first among them is what is first in the whole plan (a rail fabric lists its super-spines,
    # which have no uplinks, before the first spine: hundreds of switches not needed).
    firsts = (next((sw for sw in plan.switches if sw.ports), None),
              next((sw for sw in plan.switches if sw.bgp.neighbors), None),
              next((sw for sw in plan.switches if any(True for _ in _ecmp(plan, sw, roles))), None))
    chosen = {id(sw) for sw in firsts if sw is not None}
    switches = [sw for sw in plan.switches if id(sw) in chosen]
    host = next((h for h in plan.hosts if h.bonds or h.nics), None)
    hosts = plan.hosts[:plan.hosts.index(host) + 1] if host is not None else plan.hosts
    return [Series(name, values, value) for name in _MAKERS for values, value in _named(plan, name, switches, hosts)]


HELP = {
    PORT_INFO: "a planned port: its far end, tier, kind, pod and rail (value 1)",
    PORT_SPEED: "a planned port's speed",
    BGP_SESSION: "a planned BGP session (value 1); neighbor is the address, or the interface when unnumbered",
    ECMP_PATHS: "equal-cost uplink paths the plan gives the switch (one per uplink BGP session)",
    LOSSLESS_QUEUE: "the egress queue of a lossless priority, as the switch's OpenConfig queue list names it",
}


def switch_series(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> int:
    """How many plan series `sw` has (`roles`: each switch's role), counted as the makers make them, without
    making them."""
    direction = _directions(sw, roles)
    uplinks = any(direction[roles.get(n.peer_device)] == "up" for n in sw.bgp.neighbors)
    return 2 * len(sw.ports) + len(sw.bgp.neighbors) + (1 if uplinks else 0) + len(plan.qos.lossless_priorities)


def host_series(host: Host) -> int:
    """How many plan series `host` has (see switch_series)."""
    return sum(2 + len(bond.members) for bond in host.bonds) + 3 * len(host.nics)


def _plain(texts: list[str]) -> bool:
    """Whether each of `texts` prints as it is: none empty (an empty label is left out) and none with a character
    to escape. Asked once for a device's varying label values: names and addresses always print as they are."""
    if "" in texts:
        return False
    joined = "".join(texts)
    return "\\" not in joined and '"' not in joined and "\n" not in joined


def _baked(name: str, values: tuple[str | None, ...]) -> str:
    """The line format of one device's series `name`: the label values given here are the same on each of its
    lines, and printed into the format (escaped, or left out when empty); each None is a %s for a value that
    `_plain` passed, and the series' value a %d."""
    labels = [f'{key}="%s"' if value is None else f'{key}="{_escape(value).replace("%", "%%")}"'
              for key, value in zip(LABELS[name], values, strict=True) if value != ""]
    return name + "{" + ",".join(labels) + "} %d"


def _rows_text(name: str, rows: Iterable[Row]) -> list[str]:
    return [_line(name, values, value) for values, value in rows]


# The textfile's lines a device at a time, for the series of each port and session (nearly all of them): the
# labels one device's lines share printed into one format, each line that format and a tuple of what varies.
# What needs escaping or leaving out is printed by the makers and `_line` instead.

def _switch_port_lines(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> list[str]:
    ports = sw.ports
    names = [port.name for port in ports]
    peers = [port.peer.device for port in ports]
    far = [port.peer.port for port in ports]
    kinds: list[str] = [port.role for port in ports]  # StrEnums: each prints as its value
    if not _plain(names + peers + far + kinds):
        return _rows_text(PORT_INFO, _switch_ports(plan, sw, roles))
    pod, rail = _placement(sw.pod, sw.rail)
    form = _baked(PORT_INFO, (sw.name, None, None, None, sw.role.value, None, pod, rail))
    return [form % line for line in zip(names, peers, far, kinds, repeat(1))]


def _switch_speed_lines(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> list[str]:
    names = [port.name for port in sw.ports]
    if not _plain(names):
        return _rows_text(PORT_SPEED, _switch_speeds(plan, sw, roles))
    form = _baked(PORT_SPEED, (sw.name, None))
    return [form % (port.name, port.speed_gbps * 125_000_000) for port in sw.ports]


def _session_lines(plan: FabricPlan, sw: Switch, roles: dict[str, Role]) -> list[str]:
    neighbors = sw.bgp.neighbors
    direction = _directions(sw, roles)
    addresses = [n.address or n.interface or "" for n in neighbors]
    peers = [n.peer_device for n in neighbors]
    directions = [direction[roles.get(peer)] for peer in peers]
    if not _plain(addresses + peers + directions):
        return _rows_text(BGP_SESSION, _sessions(plan, sw, roles))
    pod, rail = _placement(sw.pod, sw.rail)
    form = _baked(BGP_SESSION, (sw.name, None, None, None, sw.role.value, pod, rail))
    return [form % line for line in zip(addresses, peers, directions, repeat(1))]


def _host_port_lines(host: Host) -> list[str]:
    nics = host.nics
    rails = ["" if nic.rail is None else str(nic.rail) for nic in nics]
    if host.bonds or not _plain([*(n.rdma_device for n in nics), *(n.netdev for n in nics),
                                 *(n.switch for n in nics), *(n.port for n in nics), *rails]):
        return _rows_text(PORT_INFO, _host_ports(host))
    form = _baked(PORT_INFO, (host.name, None, None, None, "host", None, _placement(host.pod, None)[0], None))
    lines: list[str] = []
    for nic, rail in zip(nics, rails, strict=True):
        lines += (form % (nic.rdma_device, nic.switch, nic.port, "rdma", rail, 1),
                  form % (nic.netdev, nic.switch, nic.port, "nic", rail, 1))
    return lines


def _host_speed_lines(host: Host) -> list[str]:
    devices = [nic.rdma_device for nic in host.nics]
    if host.bonds or not _plain(devices):
        return _rows_text(PORT_SPEED, _host_speeds(host))
    form = _baked(PORT_SPEED, (host.name, None))
    return [form % (nic.rdma_device, nic.speed_gbps * 125_000_000) for nic in host.nics]


def _other_lines(name: str) -> Callable[[FabricPlan, Switch, dict[str, Role]], list[str]]:
    maker = _MAKERS[name][0]
    return lambda plan, sw, roles: _rows_text(name, maker(plan, sw, roles))


SwitchLines = Callable[[FabricPlan, Switch, dict[str, Role]], list[str]]
HostLines = Callable[[Host], list[str]]
_LINES: dict[str, tuple[SwitchLines, HostLines | None]] = {
    PORT_INFO: (_switch_port_lines, _host_port_lines),
    PORT_SPEED: (_switch_speed_lines, _host_speed_lines),
    BGP_SESSION: (_session_lines, None),
    ECMP_PATHS: (_other_lines(ECMP_PATHS), None),
    LOSSLESS_QUEUE: (_other_lines(LOSSLESS_QUEUE), None),
}


def write_plan_series(plan: FabricPlan, header: list[str], emit: Callable[[str], None],
                      switches: Sequence[Switch] | None = None, hosts: Sequence[Host] | None = None) -> None:
    """The textfile: every series of the plan (of `switches` and `hosts`, a shard's, where given) under its HELP
    and TYPE lines, given to `emit` in pieces."""
    emit("".join(f"# {line}\n" for line in header))
    roles = {sw.name: sw.role for sw in plan.switches}
    for name in _MAKERS:
        emit(f"# HELP {name} {HELP[name]}\n# TYPE {name} gauge\n")
        of_switch, of_host = _LINES[name]
        lines: list[str] = []  # no Series: 1.7 million of them
        for sw in plan.switches if switches is None else switches:
            lines += of_switch(plan, sw, roles)
            if len(lines) >= 8192:
                emit("\n".join(lines) + "\n")
                lines.clear()
        if of_host is not None:
            for host in plan.hosts if hosts is None else hosts:
                lines += of_host(host)
                if len(lines) >= 8192:
                    emit("\n".join(lines) + "\n")
                    lines.clear()
        if lines:
            emit("\n".join(lines) + "\n")
