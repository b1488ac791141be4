"""Prometheus alerting rules from the plan: each alert's expression, over the metric names of the exporter that
produces the signal (exporters.py), joined with the plan's own series (plan_series.py) so it carries the far end,
tier, pod and rail of the port, and a runbook annotation naming the `rocefab doctor` diagnosis that explains it.

Thresholds come from the intent's `monitoring` section (defaults: port errors above 0.001 % of packets, RoCE
retransmissions above 0.01 % of packets sent). Every alert has a promtool unit test (rule_tests.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rocefab.renderers.monitoring import exporters as x
from rocefab.renderers.monitoring.plan_series import (
    BGP_SESSION,
    ECMP_PATHS,
    LOSSLESS_QUEUE,
    PORT_INFO,
    PORT_SPEED,
    TIER_RANK,
)
from rocefab.renderers.plan import FabricPlan, Operations
from rocefab.renderers.record import record

PLACE = "peer, peer_port, tier, pod, rail"
def baseline_offset_s(ops: Operations) -> int:
    """Where a pause rate's baseline ends: before a surge that is firing now began (its rate window and hold
    time), so the surge is not yet part of what it is compared with."""
    return (-(-(ops.rate_window_s + ops.for_s) // 60) + 5) * 60


@record
class Alert:
    name: str
    expr: str
    for_s: int
    severity: str  # critical: the fabric is not lossless or a path is gone; warning: it is degrading
    doctor: str  # the `rocefab doctor` diagnosis code that names the cause
    summary: str
    scope: str  # "switch" or "host": which group the rule sits in
    needs: str = ""  # what the plan must have for the alert to mean anything: "bgp", "uplinks", "lossless"


@record
class Record:
    """A recording rule: a signal several counters make up, summed once so the alerts (and a baseline over
    time) read one series."""

    name: str
    expr: str


SWITCH_PFC_RX = "rocefab:switch_pfc_received_frames:rate"
SWITCH_PFC_TX = "rocefab:switch_pfc_sent_frames:rate"
SWITCH_DROPS = "rocefab:switch_queue_drops:increase"
SWITCH_ECN = "rocefab:switch_queue_ecn_marked:rate"
SWITCH_WATCHDOG = "rocefab:switch_pfc_watchdog_stuck:increase"
NIC_RETRANSMITS = "rocefab:nic_retransmission_causes:rate"
NIC_PFC_RX = "rocefab:nic_pfc_received_frames:rate"
NIC_PFC_TX = "rocefab:nic_pfc_sent_frames:rate"


def _per_priority(metric_of: Callable[[int], str], priorities: tuple[int, ...], w: str) -> str:
    """The NIC's per-priority counters (one metric name each) as one series set with a `priority` label."""
    return " or ".join(f'label_replace(rate({metric_of(p)}[{w}]), "priority", "{p}", "", "")' for p in priorities)


def records(plan: FabricPlan) -> list[Record]:
    w = duration(plan.operations.rate_window_s)
    causes = tuple(f"{x.IB}_{c}" for c in x.IB_RETRANSMIT_CAUSES)
    lossless = plan.qos.lossless_priorities
    return [
        Record(SWITCH_PFC_RX, x.summed("rate", x.PFC_RX, w, "device, port, priority")),
        Record(SWITCH_PFC_TX, x.summed("rate", x.PFC_TX, w, "device, port, priority")),
        Record(SWITCH_DROPS, x.summed("increase", x.QUEUE_DROPS, w, "device, port, queue")),
        Record(SWITCH_ECN, x.summed("rate", x.QUEUE_ECN, w, "device, port, queue")),
        Record(SWITCH_WATCHDOG, x.summed("increase", x.WATCHDOG, w, "device, port, queue")),
        Record(NIC_RETRANSMITS, x.summed("rate", causes, w, "device, port")),
        *([Record(NIC_PFC_RX, _per_priority(x.nic_pause_rx, lossless, w)),
           Record(NIC_PFC_TX, _per_priority(x.nic_pause_tx, lossless, w))] if lossless and plan.hosts else []),
    ]


def duration(seconds: int) -> str:
    """A Prometheus duration: 300 -> 5m, 90 -> 90s, 86400 -> 1d."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _percent(value: float) -> str:
    return format(value, "g")


def _planned(expr: str, info: str = PORT_INFO) -> str:
    """`expr` restricted to planned ports, carrying where each port sits."""
    return f"({expr}) * on (device, port) group_left ({PLACE}) {info}"


def _reporting(metric: str) -> str:
    return f"on (device) count by (device) ({metric})"


def _error_rate(name: str, errors: str, packets: str, direction: str, scope: str, ops: Operations) -> Alert:
    """A port's errors as a share of its packets, above the intent's error rate (the field's 0.001 %)."""
    w = duration(ops.rate_window_s)
    err = _percent(ops.error_rate_percent)
    return Alert(name, _planned(f"100 * rate({errors}[{w}]) / rate({packets}[{w}]) > {err}"),
                 ops.for_s, "warning", "input-errors",
                 f"{{{{ $labels.device }}}} {{{{ $labels.port }}}} (to {{{{ $labels.peer }}}}): "
                 f"{{{{ $value | printf \"%.4f\" }}}} % of packets {direction} are errors, above {err} %", scope)


def switch_alerts(plan: FabricPlan) -> list[Alert]:
    ops = plan.operations
    w = duration(ops.rate_window_s)
    ecn = _percent(ops.ecn_mark_percent)
    up = f"({x.OPER_STATUS} == 1)"
    established = f"({x.BGP_STATE} == {x.BGP_ESTABLISHED})"
    up_sessions = f'{established} * on (device, neighbor) group_left {BGP_SESSION}{{direction="up"}}'
    lossless = f"on (device, queue) group_left (priority) {LOSSLESS_QUEUE}"
    drops = SWITCH_DROPS
    alerts = [
        _error_rate("RocefabSwitchInputErrors", x.IN_ERRORS, x.IN_PKTS, "in", "switch", ops),
        _error_rate("RocefabSwitchOutputErrors", x.OUT_ERRORS, x.OUT_PKTS, "out", "switch", ops),
        Alert("RocefabLinkDown",
              f'{PORT_INFO}{{tier!="host"}} unless on (device, port) {up} and {_reporting(x.OPER_STATUS)}',
              ops.for_s, "critical", "link-down",
              "{{ $labels.device }} {{ $labels.port }} to {{ $labels.peer }} {{ $labels.peer_port }} is not up",
              "switch"),
        Alert("RocefabLinkBelowPlannedSpeed",
              _planned(f"{x.PORT_SPEED} * 125000000 < on (device, port) group_left () {PORT_SPEED} "
                       f"and on (device, port) {up}"),
              ops.for_s, "warning", "link-wrong-speed",
              "{{ $labels.device }} {{ $labels.port }} to {{ $labels.peer }} is up at {{ $value | printf \"%.0f\" }}"
              " B/s, below its planned speed", "switch"),
        Alert("RocefabLosslessQueueDrops",
              _planned(f"{drops} * {lossless} > 0"),
              0, "critical", "lossless-drops",
              "{{ $labels.device }} {{ $labels.port }} dropped {{ $value | printf \"%.0f\" }} packets of lossless "
              "priority {{ $labels.priority }} (queue {{ $labels.queue }}): PFC is not holding", "switch",
              "lossless"),
        Alert("RocefabSwitchEcnMarks",
              _planned(f"100 * {SWITCH_ECN} / on (device, port, queue) sum by (device, port, queue) "
                       f"(rate({x.QUEUE_TRANSMIT}[{w}])) * {lossless} > {ecn}"),
              ops.for_s, "warning", "oversubscribed",
              f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: {{{{ $value | printf \"%.2f\" }}}} % of lossless "
              f"packets leave ECN-marked, above {ecn} %: sustained congestion towards {{{{ $labels.peer }}}}",
              "switch", "lossless"),
        Alert("RocefabSwitchPfcWatchdog",
              _planned(f"{SWITCH_WATCHDOG} * {lossless} > 0"),
              0, "critical", "pause-storm",
              "{{ $labels.device }} {{ $labels.port }}: the PFC watchdog found queue {{ $labels.queue }} stuck "
              "{{ $value | printf \"%.0f\" }} times (a pause storm from {{ $labels.peer }})", "switch",
              "lossless"),
        Alert("RocefabBgpSessionDown",
              f"{BGP_SESSION} unless on (device, neighbor) {established} and {_reporting(x.BGP_STATE)}",
              ops.for_s, "critical", "bgp-down",
              "{{ $labels.device }}: BGP to {{ $labels.peer }} ({{ $labels.neighbor }}) is not established",
              "switch", "bgp"),
        Alert("RocefabEcmpBelowPlan",
              f"{ECMP_PATHS} > on (device) group_left () (count by (device) ({up_sessions}) "
              f"or on (device) 0 * {ECMP_PATHS}) and {_reporting(x.BGP_STATE)}",
              ops.for_s, "critical", "bgp-down",
              "{{ $labels.device }}: fewer equal-cost uplinks established than the {{ $value }} planned",
              "switch", "uplinks"),
        Alert("RocefabSwitchNotReporting",
              f'count by (device) ({PORT_INFO}{{tier!="host"}}) unless {_reporting(x.OPER_STATUS)}',
              ops.for_s, "warning", "unreachable",
              "{{ $labels.device }} sends no interface telemetry (gNMI server, credentials, reachability?)",
              "switch"),
    ]
    for p in plan.qos.lossless_priorities:
        for direction, recorded, who in (("Received", SWITCH_PFC_RX, "from {{ $labels.peer }}"),
                                         ("Sent", SWITCH_PFC_TX, "to {{ $labels.peer }}")):
            pauses = f'{recorded}{{priority="{p}"}}'
            alerts.append(Alert(
                f"RocefabSwitchPauseSurge{direction}Prio{p}",
                _planned(_surge_of(pauses, ops)),
                ops.for_s, "warning", "pause-storm",
                f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: {{{{ $value | printf \"%.0f\" }}}} PFC pauses/s "
                f"{who} on priority {p}, over {ops.pause_surge_factor}x its baseline", "switch"))
    return alerts


def _surge_of(now: str, ops: Operations) -> str:
    """A recorded rate above its own baseline: its average over the baseline window, ending before a surge that
    fires now began."""
    baseline = f"avg_over_time({now}[{duration(ops.pause_baseline_s)}] offset {duration(baseline_offset_s(ops))})"
    return f"{now} > {ops.pause_surge_factor} * {baseline} and {now} > {ops.pause_surge_floor_per_s}"


def host_alerts(plan: FabricPlan) -> list[Alert]:
    ops = plan.operations
    w = duration(ops.rate_window_s)
    rtx, ecn = _percent(ops.retransmit_rate_percent), _percent(ops.ecn_mark_percent)
    retransmits = NIC_RETRANSMITS
    alerts = [
        _error_rate("RocefabHostPortErrors", x.IB_RX_ERRORS, x.IB_RX_PKTS, "in", "host", ops),
        Alert("RocefabRoceRetransmits",
              _planned(f"100 * {retransmits} / sum by (device, port) (rate({x.IB_TX_PKTS}[{w}])) > {rtx}"),
              ops.for_s, "critical", "roce-retransmissions",
              f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: RoCE retransmissions at {{{{ $value | printf "
              f"\"%.4f\" }}}} % of packets sent, above {rtx} % (drops on the path: PFC, MTU, cabling)", "host"),
        Alert("RocefabEcnMarks",
              _planned(f"100 * rate({x.IB_ECN_MARKED}[{w}]) / rate({x.IB_RX_PKTS}[{w}]) > {ecn}"),
              ops.for_s, "warning", "oversubscribed",
              f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: {{{{ $value | printf \"%.2f\" }}}} % of packets "
              f"arrive ECN-marked, above {ecn} %: sustained congestion towards this NIC", "host"),
        Alert("RocefabRdmaPortNotActive",
              _planned(f"{x.IB_STATE} != {x.IB_ACTIVE}"),
              ops.for_s, "critical", "rdma-inactive",
              "{{ $labels.device }} {{ $labels.port }}: RDMA port state {{ $value }}, not ACTIVE (4)", "host"),
        Alert("RocefabRdmaPortBelowPlannedSpeed",
              _planned(f"{x.IB_RATE} < on (device, port) group_left () {PORT_SPEED}"),
              ops.for_s, "warning", "link-wrong-speed",
              "{{ $labels.device }} {{ $labels.port }} runs at {{ $value | printf \"%.0f\" }} B/s, below its planned "
              "speed",
              "host"),
        Alert("RocefabNicPauseStorm",
              _planned(f"increase({x.NIC_STORM_EVENTS}[{w}]) > 0"),
              0, "critical", "pause-storm",
              "{{ $labels.device }} {{ $labels.port }}: the NIC's stall watchdog fired (a PFC pause storm)", "host"),
        Alert("RocefabHostNotReporting",
              f'count by (device) ({PORT_INFO}{{tier="host", kind="rdma"}}) unless {_reporting(x.IB_STATE)}',
              ops.for_s, "warning", "unreachable",
              "{{ $labels.device }} sends no RDMA metrics (node_exporter down or unreachable?)", "host"),
    ]
    for p in plan.qos.lossless_priorities:
        alerts += [
            Alert(f"RocefabNicPauseSurgeReceivedPrio{p}",
                  _planned(_surge_of(f'{NIC_PFC_RX}{{priority="{p}"}}', ops)),
                  ops.for_s, "warning", "pause-storm",
                  f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: {{{{ $value | printf \"%.0f\" }}}} PFC pauses/s "
                  f"from {{{{ $labels.peer }}}} on priority {p}, over {ops.pause_surge_factor}x its baseline",
                  "host"),
            Alert(f"RocefabNicPauseSurgeSentPrio{p}",
                  _planned(_surge_of(f'{NIC_PFC_TX}{{priority="{p}"}}', ops)),
                  ops.for_s, "warning", "pause-storm",
                  f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: sending {{{{ $value | printf \"%.0f\" }}}} PFC "
                  f"pauses/s on priority {p}, over {ops.pause_surge_factor}x its baseline (the host cannot "
                  "keep up)", "host"),
        ]
    return alerts


def _present(plan: FabricPlan) -> set[str]:
    """What of the alerts' subject matter the plan has: a fabric without hosts gets no host alerts, one without
    BGP or uplinks none about them (an alert about nothing would be a rule that can never fire)."""
    found = {""}
    if any(sw.bgp.neighbors for sw in plan.switches):
        found.add("bgp")
    roles = {sw.name: sw.role for sw in plan.switches}
    if any(TIER_RANK[roles[n.peer_device]] > TIER_RANK[sw.role]
           for sw in plan.switches for n in sw.bgp.neighbors if n.peer_device in roles):
        found.add("uplinks")
    if plan.qos.lossless_priorities:
        found.add("lossless")
    return found


def all_alerts(plan: FabricPlan) -> list[Alert]:
    present = _present(plan)
    alerts = switch_alerts(plan) + (host_alerts(plan) if plan.hosts else [])
    return [a for a in alerts if a.needs in present]


def annotations_of(plan: FabricPlan, alert: Alert) -> dict[str, str]:
    return {
        "summary": alert.summary,
        "runbook": f"rocefab doctor {plan.source.intent_file} -i INVENTORY --only {{{{ $labels.device }}}}"
                   f" (diagnosis {alert.doctor})",
    }


def rule_document(plan: FabricPlan, alerts: list[Alert]) -> dict[str, Any]:
    fabric = plan.source.fabric
    groups: list[dict[str, Any]] = [
        {"name": f"rocefab-{fabric}-signals", "rules": [{"record": r.name, "expr": r.expr} for r in records(plan)]}]
    for scope in ("switch", "host"):
        rules = []
        for a in (a for a in alerts if a.scope == scope):
            rule: dict[str, Any] = {"alert": a.name, "expr": a.expr}
            if a.for_s:
                rule["for"] = duration(a.for_s)
            rule["labels"] = {"severity": a.severity, "fabric": fabric, "doctor": a.doctor}
            rule["annotations"] = annotations_of(plan, a)
            rules.append(rule)
        groups.append({"name": f"rocefab-{fabric}-{scope}-alerts", "rules": rules})
    return {"groups": groups}
