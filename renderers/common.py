"""Small views of the plan that several platform renderers print the same way."""

from __future__ import annotations

from rocefab.platforms.spec import PlatformSpec
from rocefab.renderers.plan import EcnMarking, PortRole, Qos, Switch, SwitchPort
from rocefab.renderers.record import record

# Priority 0 / traffic class 0 carries everything that is neither RoCE nor CNP.
DEFAULT_PRIORITY = 0


@record
class EcnView:
    unit: str  # "kbytes" or "segments"
    min_threshold: int
    max_threshold: int
    max_mark_percent: int


@record
class QueueView:
    id: int
    strict: bool
    bandwidth_percent: int
    ecn: EcnView | None


def adaptive_routing_port(port: SwitchPort, spec: PlatformSpec) -> bool:
    """Whether adaptive routing may run on the port: a routed fabric port (not a host port, not in a LAG) at a
    speed the platform runs it at. The planner asks it to decide the switch, the renderer to pick the ports."""
    return port.role is not PortRole.HOST and port.lag is None and port.speed_gbps in spec.adaptive_routing_speeds_gbps


def egress_queues(qos: Qos, marking: EcnMarking | None = None) -> list[QueueView]:
    """The three queues rocefab schedules: default and RoCE share DWRR (RoCE ECN-marked), CNP is strict."""
    ecn = None if marking is None else EcnView(marking.unit, marking.min_threshold, marking.max_threshold,
                                               marking.max_mark_percent)
    queues = [
        QueueView(DEFAULT_PRIORITY, False, qos.ets_default_percent, None),
        QueueView(qos.roce_priority, False, qos.ets_roce_percent, ecn),
        QueueView(qos.cnp_priority, True, 0, None),
    ]
    return sorted(queues, key=lambda q: q.id)


def profile_classes(roce_priority: int, cnp_priority: int, classes: tuple[int, int]) -> dict[int, int]:
    """Switch priority -> traffic class where a lossless profile owns fixed classes (RoCE's, CNP's; NVUE
    `qos roce`: 3 and 6): RoCE's priority onto the profile's RoCE class, CNP's onto its strict class, every other
    priority onto class 0. With the profile's own classes as the priorities, the profile's default mapping.

    >>> profile_classes(2, 6, (3, 6))
    {0: 0, 1: 0, 2: 3, 3: 0, 4: 0, 5: 0, 6: 6, 7: 0}
    >>> profile_classes(3, 6, (3, 6))[3], profile_classes(3, 6, (3, 6))[6]
    (3, 6)
    """
    roce_class, cnp_class = classes
    return {p: roce_class if p == roce_priority else cnp_class if p == cnp_priority else 0 for p in range(8)}


def dscps_by_priority(qos: Qos) -> list[tuple[int, tuple[int, ...]]]:
    """Explicit DSCP mappings grouped per priority: [(3, (26,)), (6, (48,))]."""
    groups: dict[int, list[int]] = {}
    for dscp, prio in qos.dscp_to_priority:
        groups.setdefault(prio, []).append(dscp)
    return [(prio, tuple(sorted(dscps))) for prio, dscps in sorted(groups.items())]


def explicit_dscp_map(qos: Qos, default_classes: tuple[int, ...]) -> dict[int, int]:
    """The DSCP -> class entries a platform must be given so that its map equals the fabric's
    (`Qos.dscp_classes`): every DSCP the intent names, and every other one whose platform default differs.

    >>> from dataclasses import replace
    >>> q = Qos("dscp", 26, 3, 48, 6, ((26, 3), (48, 6)), (3,), 50, 50, True, 100, 3, 1000, None, 106)
    >>> sorted(explicit_dscp_map(q, tuple(d >> 3 for d in range(64))).items())[:3]
    [(8, 0), (9, 0), (10, 0)]
    >>> explicit_dscp_map(q, (0,) * 64)
    {26: 3, 48: 6}
    """
    named = dict(qos.dscp_to_priority)
    wanted = qos.dscp_classes
    return {d: wanted[d] for d in range(64) if d in named or default_classes[d] != wanted[d]}


def seconds(ms: int) -> str:
    """Milliseconds as the decimal seconds EOS timers take.

    >>> seconds(300), seconds(1000), seconds(50)
    ('0.3', '1', '0.05')
    """
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def unused_children(switch: Switch) -> list[tuple[str, int, int]]:
    """Broken-out child ports nothing is cabled to: (name, speed, lanes)."""
    used = {p.name for p in switch.ports}
    return [
        (child, b.child_speed_gbps, b.lanes_per_child)
        for b in switch.breakouts
        for child in b.children
        if child not in used
    ]
