"""promtool unit tests for every rendered alert: on a sample port of the plan, one series that must fire the alert
(with exactly the labels it must carry) and one that must leave it silent.

The series are what Prometheus stores after the scrape config's relabelling (collection.py): `device` and
`port` as rocefab names them. Rates are built from the intent's own thresholds (ten times over, a tenth of),
so an override in the intent is tested as well as the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rocefab.renderers.monitoring import exporters as x
from rocefab.renderers.monitoring.plan_series import (
    BGP_SESSION,
    ECMP_PATHS,
    LOSSLESS_QUEUE,
    PORT_INFO,
    PORT_SPEED,
    Series,
    sample_series,
)
from rocefab.renderers.monitoring.rules import (
    Alert,
    all_alerts,
    annotations_of,
    baseline_offset_s,
    duration,
)
from rocefab.renderers.plan import FabricPlan

PACKETS_PER_MIN = 60_000_000  # a million packets a second through the sample port


@dataclass
class Case:
    bad: list[tuple[str, str]] = field(default_factory=list)
    good: list[tuple[str, str]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # what the alert carries, rule labels aside
    minutes: int = 0  # evaluation time; 0: the rate window plus the hold time plus three minutes
    value: float = 1.0  # the value the firing alert has, which its summary prints


def _sel(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{inner}}}"


def _plain(s: Series) -> dict[str, str]:
    return {k: v for k, v in s.labels if v != ""}


def _num(value: float) -> str:
    """A number as promtool's series notation reads it: no exponent, whose sign the notation would take as its own."""
    text = format(value, ".9f").rstrip("0").rstrip(".")
    return text or "0"


def _counter(per_min: float, n: int) -> str:
    return f"0+{_num(per_min)}x{n}"


def _gauge(value: float, n: int) -> str:
    return f"{_num(value)}x{n}"


class _Sample:
    """The plan's series of one switch port, one BGP-speaking switch and one host NIC, to build tests on (None
    where the plan has no such thing, and then no alert about it either: rules.all_alerts)."""

    def __init__(self, series: list[Series]) -> None:
        self.all = series
        info = [s for s in self.all if s.name == PORT_INFO]
        self.sw_port = next(s for s in info if dict(s.labels)["tier"] != "host")
        sp = dict(self.sw_port.labels)
        self.queue = next((s for s in self.all
                           if s.name == LOSSLESS_QUEUE and dict(s.labels)["device"] == sp["device"]), None)
        self.session = next((s for s in self.all if s.name == BGP_SESSION), None)
        self.ecmp = next((s for s in self.all if s.name == ECMP_PATHS), None)
        uplinks_of = dict(self.ecmp.labels)["device"] if self.ecmp else None
        self.sessions = [s for s in self.all if s.name == BGP_SESSION and dict(s.labels)["device"] == uplinks_of
                         and dict(s.labels)["direction"] == "up"]
        self.rdma = next((s for s in info if dict(s.labels)["kind"] == "rdma"), None)
        host = dict(self.rdma.labels)["device"] if self.rdma else None
        self.nic = next((s for s in info if dict(s.labels)["kind"] == "nic" and dict(s.labels)["device"] == host), None)
        self.rdma_speed = next((s for s in self.all if s.name == PORT_SPEED and self.rdma is not None
                                and self.key(s) == self.key(self.rdma)), None)

    @staticmethod
    def key(s: Series) -> dict[str, str]:
        d = dict(s.labels)
        return {"device": d["device"], "port": d["port"]}

    @staticmethod
    def place(s: Series) -> dict[str, str]:
        return {k: v for k, v in s.labels if k in ("peer", "peer_port", "tier", "pod", "rail") and v != ""}

    def info(self, s: Series, n: int) -> tuple[str, str]:
        return (_sel(s.name, _plain(s)), _gauge(s.value, n))


CaseBuilder = Callable[[FabricPlan, _Sample, int], Case]


def _ratio_case(num: str, den: str, percent: float, port: Series, sample: _Sample, n: int,
                extra: dict[str, str] | None = None) -> Case:
    key = {**sample.key(port), **(extra or {})}
    bad_rate = PACKETS_PER_MIN * percent / 100 * 10
    good_rate = PACKETS_PER_MIN * percent / 100 / 10
    common = [(_sel(den, key), _counter(PACKETS_PER_MIN, n)), sample.info(port, n)]
    return Case(bad=[*common, (_sel(num, key), _counter(bad_rate, n))],
                good=[*common, (_sel(num, key), _counter(good_rate, n))],
                labels={**sample.key(port), **sample.place(port)}, value=percent * 10)


def _causes_case(percent: float, port: Series, sample: _Sample, n: int) -> Case:
    """Retransmissions spread over every cause the NIC counts: together above the threshold, not one alone."""
    case = _ratio_case(f"{x.IB}_{x.IB_RETRANSMIT_CAUSES[0]}", x.IB_TX_PKTS, percent, port, sample, n)
    causes = [f"{x.IB}_{c}" for c in x.IB_RETRANSMIT_CAUSES]
    share = PACKETS_PER_MIN * percent / 100 * 10 / len(causes)
    key = sample.key(port)
    case.bad = [*case.bad[:2], *((_sel(c, key), _counter(share, n)) for c in causes)]
    case.good = [*case.good[:2], *((_sel(c, key), _counter(share / 100, n)) for c in causes)]
    return case


def _switch_cases(plan: FabricPlan, s: _Sample, n: int) -> dict[str, Case]:
    ops = plan.operations
    port = s.sw_port
    key = s.key(port)
    up = (_sel(x.OPER_STATUS, key), _gauge(1, n))
    planned_bps = next(t.value for t in s.all if t.name == PORT_SPEED and s.key(t) == key)
    cases = {
        "RocefabSwitchInputErrors": _ratio_case(x.IN_ERRORS, x.IN_PKTS, ops.error_rate_percent, port, s, n),
        "RocefabSwitchOutputErrors": _ratio_case(x.OUT_ERRORS, x.OUT_PKTS, ops.error_rate_percent, port, s, n),
        "RocefabLinkDown": Case(
            bad=[s.info(port, n), (_sel(x.OPER_STATUS, key), _gauge(0, n))],
            good=[s.info(port, n), up],
            labels=_plain(port)),
        "RocefabLinkBelowPlannedSpeed": Case(
            bad=[s.info(port, n), up, (_sel(x.PORT_SPEED, key), _gauge(planned_bps / 125_000_000 / 4, n)),
                 next(s.info(t, n) for t in s.all if t.name == PORT_SPEED and s.key(t) == key)],
            good=[s.info(port, n), up, (_sel(x.PORT_SPEED, key), _gauge(planned_bps / 125_000_000, n)),
                  next(s.info(t, n) for t in s.all if t.name == PORT_SPEED and s.key(t) == key)],
            labels={**key, **s.place(port)}, value=planned_bps / 4),
        "RocefabSwitchNotReporting": Case(bad=[s.info(port, n)], good=[s.info(port, n), up],
                                          labels={"device": key["device"]}),
    }
    if s.queue is not None:
        cases.update(_queue_cases(plan, s, n))
    if s.session is not None:
        cases["RocefabBgpSessionDown"] = _session_case(s.session, s, n)
    for p in plan.qos.lossless_priorities:
        for direction, metrics in (("Received", x.PFC_RX), ("Sent", x.PFC_TX)):
            cases[f"RocefabSwitchPauseSurge{direction}Prio{p}"] = _surge(
                sorted(metrics)[0], plan, s, port, {"priority": str(p)})
    if s.ecmp is not None and s.sessions:
        states = [_sel(x.BGP_STATE, {"device": dict(t.labels)["device"], "neighbor": dict(t.labels)["neighbor"]})
                  for t in s.sessions]
        infos = [s.info(t, n) for t in s.sessions] + [s.info(s.ecmp, n)]
        established = [(sel, _gauge(x.BGP_ESTABLISHED, n)) for sel in states]
        cases["RocefabEcmpBelowPlan"] = Case(
            bad=[*infos, (states[0], _gauge(1, n)), *established[1:]], good=infos + established,
            labels=_plain(s.ecmp), value=s.ecmp.value)
    return cases


def _session_case(session: Series, s: _Sample, n: int) -> Case:
    first = dict(session.labels)
    state = {"device": first["device"], "neighbor": first["neighbor"]}
    return Case(bad=[s.info(session, n), (_sel(x.BGP_STATE, state), _gauge(3, n))],
                good=[s.info(session, n), (_sel(x.BGP_STATE, state), _gauge(x.BGP_ESTABLISHED, n))],
                labels=_plain(session))


def _queue_cases(plan: FabricPlan, s: _Sample, n: int) -> dict[str, Case]:
    ops = plan.operations
    port = s.sw_port
    key = s.key(port)
    assert s.queue is not None
    q = dict(s.queue.labels)
    queue_key = {**key, "queue": q["queue"]}
    drops = sorted(x.QUEUE_DROPS)
    lossless = [s.info(port, n), s.info(s.queue, n)]
    queue_labels = {**key, **s.place(port), "queue": q["queue"], "priority": q["priority"]}
    ecn = _ratio_case(sorted(x.QUEUE_ECN)[0], x.QUEUE_TRANSMIT, ops.ecn_mark_percent, port, s, n,
                      extra={"queue": q["queue"]})
    ecn.bad.append(s.info(s.queue, n))
    ecn.good.append(s.info(s.queue, n))
    ecn.labels.update(queue=q["queue"], priority=q["priority"])
    return {
        # every drop counter of a queue at once (Cumulus counts WRED and no-buffer drops apart): they add up
        "RocefabLosslessQueueDrops": Case(
            bad=[*lossless, *((_sel(d, queue_key), _counter(5 / len(drops), n)) for d in drops)],
            good=[*lossless, *((_sel(d, queue_key), _counter(0, n)) for d in drops),
                  # drops on a lossy queue of the same port are not this alert's business
                  (_sel(drops[0], {**key, "queue": "lossy"}), _counter(5, n))],
            labels=queue_labels, value=5 * ops.rate_window_s / 60),
        "RocefabSwitchEcnMarks": ecn,
        "RocefabSwitchPfcWatchdog": Case(
            bad=[*lossless, (_sel(sorted(x.WATCHDOG)[0], queue_key), _counter(1, n))],
            good=[*lossless, (_sel(sorted(x.WATCHDOG)[0], queue_key), _counter(0, n))],
            labels=queue_labels, value=ops.rate_window_s / 60),
    }


def _surge(metric: str, plan: FabricPlan, s: _Sample, port: Series | None,
           extra: dict[str, str] | None = None, recorded: dict[str, str] | None = None) -> Case:
    """`extra`: labels of the input series beyond device and port; `recorded`: labels the recording rule adds."""
    ops = plan.operations
    # the surge outlasts the rate window and the hold time; the steady rate before it fills the baseline
    surge_min = -(-(ops.rate_window_s + ops.for_s) // 60) + 3
    base_min = (ops.pause_baseline_s + baseline_offset_s(ops)) // 60 + ops.rate_window_s // 60
    assert port is not None
    surge_per_s = 10 * ops.pause_surge_floor_per_s
    base_per_s = surge_per_s / (2 * ops.pause_surge_factor)
    key = {**s.key(port), **(extra or {})}
    base_end = base_per_s * 60 * base_min
    total = base_min + surge_min
    surging = (f"0+{_num(base_per_s * 60)}x{base_min} "
               f"{_num(base_end + surge_per_s * 60)}+{_num(surge_per_s * 60)}x{surge_min}")
    return Case(bad=[s.info(port, total + 2), (_sel(metric, key), surging)],
                # a rate as high all day long is the port's normal, not a surge
                good=[s.info(port, total + 2), (_sel(metric, key), _counter(surge_per_s * 60, total + 2))],
                labels={**key, **(recorded or {}), **s.place(port)}, minutes=total, value=surge_per_s)


def _host_cases(plan: FabricPlan, s: _Sample, n: int) -> dict[str, Case]:
    if s.rdma is None or s.nic is None or s.rdma_speed is None:
        return {}
    ops = plan.operations
    rdma = s.rdma
    key = s.key(rdma)
    ib_key = {**key, "ib_port": "1"}
    speed = s.rdma_speed.value
    cases = {
        "RocefabHostPortErrors": _ratio_case(x.IB_RX_ERRORS, x.IB_RX_PKTS, ops.error_rate_percent, rdma, s, n),
        "RocefabRoceRetransmits": _causes_case(ops.retransmit_rate_percent, rdma, s, n),
        "RocefabEcnMarks": _ratio_case(x.IB_ECN_MARKED, x.IB_RX_PKTS, ops.ecn_mark_percent, rdma, s, n),
        "RocefabRdmaPortNotActive": Case(
            bad=[s.info(rdma, n), (_sel(x.IB_STATE, ib_key), _gauge(1, n))],
            good=[s.info(rdma, n), (_sel(x.IB_STATE, ib_key), _gauge(x.IB_ACTIVE, n))],
            labels={**ib_key, **s.place(rdma)}),
        "RocefabRdmaPortBelowPlannedSpeed": Case(
            bad=[s.info(rdma, n), s.info(s.rdma_speed, n), (_sel(x.IB_RATE, ib_key), _gauge(speed / 2, n))],
            good=[s.info(rdma, n), s.info(s.rdma_speed, n), (_sel(x.IB_RATE, ib_key), _gauge(speed, n))],
            labels={**ib_key, **s.place(rdma)}, value=speed / 2),
        "RocefabNicPauseStorm": Case(
            bad=[s.info(s.nic, n), (_sel(x.NIC_STORM_EVENTS, s.key(s.nic)), _counter(1, n))],
            good=[s.info(s.nic, n), (_sel(x.NIC_STORM_EVENTS, s.key(s.nic)), _counter(0, n))],
            labels={**s.key(s.nic), **s.place(s.nic)}),
        "RocefabHostNotReporting": Case(
            bad=[s.info(rdma, n)],
            good=[s.info(rdma, n), (_sel(x.IB_STATE, ib_key), _gauge(x.IB_ACTIVE, n))],
            labels={"device": key["device"]}),
    }
    for p in plan.qos.lossless_priorities:
        priority = {"priority": str(p)}
        cases[f"RocefabNicPauseSurgeReceivedPrio{p}"] = _surge(x.nic_pause_rx(p), plan, s, s.nic, recorded=priority)
        cases[f"RocefabNicPauseSurgeSentPrio{p}"] = _surge(x.nic_pause_tx(p), plan, s, s.nic, recorded=priority)
    return cases


def cases(plan: FabricPlan, series: list[Series] | None = None) -> dict[str, Case]:
    """The test cases of every alert, on the plan's sample series (`series` when given: a plan's series from its
    start, as many as `sample_series` takes or more)."""
    ops = plan.operations
    minutes = -(-(ops.rate_window_s + ops.for_s) // 60) + 3
    sample = _Sample(sample_series(plan) if series is None else series)
    found = {**_switch_cases(plan, sample, minutes + 2), **_host_cases(plan, sample, minutes + 2)}
    for case in found.values():
        case.minutes = case.minutes or minutes
    return found


_LABEL = re.compile(r"\{\{ \$labels\.(\w+) \}\}")
_PRINTF = re.compile(r'\{\{ \$value \| printf "%\.(\d)f" \}\}')


def expand(template: str, labels: dict[str, str], value: float) -> str:
    """What Prometheus makes of the few template forms the rules use, for promtool's expected annotations."""
    text = _LABEL.sub(lambda m: labels.get(m.group(1), ""), template)
    text = _PRINTF.sub(lambda m: f"{value:.{m.group(1)}f}", text)
    plain = str(int(value)) if float(value).is_integer() else repr(value)
    return text.replace("{{ $value }}", plain)


def _tests(alert: Alert, case: Case, plan: FabricPlan) -> Iterator[dict[str, Any]]:
    labels = {**case.labels, "severity": alert.severity, "fabric": plan.source.fabric, "doctor": alert.doctor}
    annotations = {name: expand(text, labels, case.value) for name, text in annotations_of(plan, alert).items()}
    for series, expected in ((case.bad, [{"exp_labels": labels, "exp_annotations": annotations}]),
                             (case.good, [])):
        yield {
            "name": f"{alert.name} {'fires' if expected else 'stays silent'}",
            "interval": "1m",
            "input_series": [{"series": sel, "values": values} for sel, values in series],
            "alert_rule_test": [{"eval_time": duration(case.minutes * 60), "alertname": alert.name,
                                 "exp_alerts": expected}],
        }


def promtool_tests(plan: FabricPlan, rules_file: str, series: list[Series] | None = None) -> dict[str, Any]:
    """promtool's test file: every alert of the rules file, fired and silent. Raises if an alert has no case."""
    built = cases(plan, series)
    tests: list[dict[str, Any]] = []
    for alert in all_alerts(plan):
        if alert.name not in built:
            raise KeyError(f"no promtool test case for alert {alert.name}")
        tests.extend(_tests(alert, built[alert.name], plan))
    # rules evaluated once a minute, as the series are sampled: a finer step only multiplies promtool's work over
    # the pause-surge tests' day of history
    return {"rule_files": [rules_file], "evaluation_interval": "1m", "tests": tests}
