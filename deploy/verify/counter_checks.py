"""A switch port's counters over a sampling window, against what a lossless fabric allows: the pause rate on the
lossless priority, drops on the lossless queue (there must be none), PFC watchdog shut-downs of it, the share of
packets sent ECN-marked, and input errors as a share of packets received.

Each check compares two reads. A value either read lacks (None: the device did not report it) is a WARN that
names the command which should have carried it, never a PASS: a release that renames a key or drops a table must
not turn a pause storm into a clean bill. A counter lower in the second read than in the first (cleared, or the
port reset, during the window) says nothing about the window: a WARN too.

A watchdog that shut the queue during the window is a failure: the watchdog acts only on a queue paused without
end, and while shut the queue's RoCE traffic is dropped. ECN marks are congestion, not misconfiguration: a high
share is a warning (doctor's `tier-too-thin` reads it on uplinks), never a failure.
"""

from __future__ import annotations

from collections.abc import Mapping

from rocefab.deploy.verify.checks import ERROR_RATE_LIMIT, PAUSE_STORM_PER_S, Row, Verdict
from rocefab.deploy.verify.observation import PortCounters
from rocefab.renderers.plan import FabricPlan, Switch

ECN_MARK_WARN = 0.01  # one packet in a hundred sent ECN-marked: the egress runs congested
NOT_REPORTED = "not reported"


class _Backwards(Exception):
    """A counter fell between the two reads."""

    def __init__(self, field: str, before: int, after: int) -> None:
        super().__init__(field)
        self.field, self.before, self.after = field, before, after


def _grew(field: str, before: int | None, after: int | None) -> int | None:
    if before is None or after is None:
        return None
    if after < before:
        raise _Backwards(field, before, after)
    return after - before


def _class_grew(field: str, before: Mapping[int, int] | None, after: Mapping[int, int] | None,
                klass: int) -> int | None:
    if before is None or after is None:
        return None
    return _grew(field, before.get(klass), after.get(klass))


def _missing(field: str, a: PortCounters, b: PortCounters) -> str:
    """What a row says of a field neither read (or only one) reported."""
    source = a.sources.get(field) or b.sources.get(field)
    return f"{NOT_REPORTED} by `{source}`" if source else NOT_REPORTED


class _Port:
    """The rows of one port: each check either judges its deltas or says why it cannot."""

    def __init__(self, device: str, port: str, a: PortCounters, b: PortCounters) -> None:
        self.device, self.port, self.a, self.b = device, port, a, b
        self.rows: list[Row] = []

    def add(self, check: str, expected: str, observed: str, verdict: Verdict) -> None:
        self.rows.append(Row(self.device, self.port, check, expected, observed, verdict))

    def unreported(self, check: str, expected: str, field: str) -> None:
        self.add(check, expected, _missing(field, self.a, self.b), Verdict.WARN)

    def went_back(self, check: str, expected: str, exc: _Backwards) -> None:
        self.add(check, expected, f"{exc.field} went from {exc.before:,} to {exc.after:,} during the window "
                 "(cleared or reset): no reading", Verdict.WARN)


def _pause(p: _Port, priority: int, seconds: float) -> None:
    """Frames a second on the lossless priority where the device counts per priority, else on all priorities."""
    check = "pfc-pause-rate"
    a, b = p.a, p.b
    try:
        rx = _class_grew("pfc_rx_priority", a.pfc_rx_priority, b.pfc_rx_priority, priority)
        tx = _class_grew("pfc_tx_priority", a.pfc_tx_priority, b.pfc_tx_priority, priority)
        which, fields = f"priority {priority}", ("pfc_rx_priority", "pfc_tx_priority")
        if rx is None or tx is None:
            rx, tx = _grew("pfc_rx", a.pfc_rx, b.pfc_rx), _grew("pfc_tx", a.pfc_tx, b.pfc_tx)
            which, fields = "all priorities", ("pfc_rx", "pfc_tx")
    except _Backwards as exc:
        p.went_back(check, f"< {PAUSE_STORM_PER_S:,} frames/s each way", exc)
        return
    expected = f"< {PAUSE_STORM_PER_S:,} frames/s each way ({which})"
    if rx is None or tx is None:
        p.unreported(check, f"< {PAUSE_STORM_PER_S:,} frames/s each way (priority {priority})",
                     fields[0] if rx is None else fields[1])
        return
    p.add(check, expected, f"rx {rx / seconds:,.0f}/s, tx {tx / seconds:,.0f}/s",
          Verdict.PASS if max(rx, tx) / seconds < PAUSE_STORM_PER_S else Verdict.FAIL)


def _drops(p: _Port, lossless: int) -> None:
    check, expected = "lossless-drops", f"0 on queue {lossless}"
    try:
        drops = _class_grew("queue_drops", p.a.queue_drops, p.b.queue_drops, lossless)
    except _Backwards as exc:
        p.went_back(check, expected, exc)
        return
    if drops is None:
        p.unreported(check, expected, "queue_drops")
    else:
        p.add(check, expected, f"{drops:,}", Verdict.PASS if drops == 0 else Verdict.FAIL)


def _watchdog(p: _Port, lossless: int) -> None:
    check, expected = "pfc-watchdog-events", f"0 shut-downs of queue {lossless}"
    try:
        fired = _class_grew("watchdog_storms", p.a.watchdog_storms, p.b.watchdog_storms, lossless)
    except _Backwards as exc:
        p.went_back(check, expected, exc)
        return
    if fired is None:
        p.unreported(check, expected, "watchdog_storms")
        return
    total = (p.b.watchdog_storms or {}).get(lossless, 0)
    p.add(check, expected, f"{fired:,} (stormed {total:,} times in all)", Verdict.PASS if fired == 0 else Verdict.FAIL)


def _share(p: _Port, check: str, expected: str, part: tuple[str, int | None], whole: tuple[str, int | None],
           limit: float, over: Verdict, places: int) -> None:
    """`part` as a share of `whole` (each a field name and its growth over the window) against `limit`."""
    (part_field, counted), (whole_field, total) = part, whole
    if counted is None or total is None:
        p.unreported(check, expected, part_field if counted is None else whole_field)
        return
    share = counted / total if total > 0 else (0.0 if counted == 0 else 1.0)
    p.add(check, expected, f"{share:.{places}%} ({counted:,} of {total:,})", Verdict.PASS if share <= limit else over)


def _ecn(p: _Port, lossless: int) -> None:
    check, expected = "ecn-marking", f"<= {ECN_MARK_WARN:.0%} of packets sent marked on queue {lossless}"
    try:
        marked = _class_grew("ecn_marked", p.a.ecn_marked, p.b.ecn_marked, lossless)
        sent = _grew("out_packets", p.a.out_packets, p.b.out_packets)
    except _Backwards as exc:
        p.went_back(check, expected, exc)
        return
    _share(p, check, expected, ("ecn_marked", marked), ("out_packets", sent), ECN_MARK_WARN, Verdict.WARN, 3)


def _errors(p: _Port) -> None:
    check, expected = "input-error-rate", f"<= {ERROR_RATE_LIMIT:.3%} of packets in"
    try:
        packets = _grew("in_packets", p.a.in_packets, p.b.in_packets)
        errors = _grew("in_errors", p.a.in_errors, p.b.in_errors)
    except _Backwards as exc:
        p.went_back(check, expected, exc)
        return
    _share(p, check, expected, ("in_errors", errors), ("in_packets", packets), ERROR_RATE_LIMIT, Verdict.FAIL, 4)


def port_rows(plan: FabricPlan, sw: Switch, port: str, a: PortCounters, b: PortCounters, lossless: int,
              seconds: float) -> list[Row]:
    """`lossless`: the class (traffic class, qos-group) the RoCE priority takes on this switch."""
    p = _Port(sw.name, port, a, b)
    _pause(p, plan.qos.roce_priority, seconds)
    _drops(p, lossless)
    if plan.qos.watchdog_enabled:
        _watchdog(p, lossless)
    if sw.ecn is not None:
        _ecn(p, lossless)
    _errors(p)
    return p.rows


def quiet_row(plan: FabricPlan, sw: Switch, before: Mapping[str, PortCounters], after: Mapping[str, PortCounters],
              lossless: int, seconds: float) -> Row:
    """A drained switch's lossless queue, over two reads `seconds` apart: quiet when no port sent or received a pause
    frame (on the RoCE priority where counted per priority) and none marked a RoCE packet with ECN, i.e. nothing
    is queueing there any more. A port whose counters were not reported makes the row a WARN, never a pass."""
    busy: list[str] = []
    unreported: list[str] = []
    for port in sw.ports:
        a, b = before.get(port.name), after.get(port.name)
        if a is None or b is None:
            unreported.append(port.name)
            continue
        try:
            pauses = [_class_grew(f, getattr(a, f), getattr(b, f), plan.qos.roce_priority)
                      for f in ("pfc_rx_priority", "pfc_tx_priority")]
            if None in pauses:
                pauses = [_grew(f, getattr(a, f), getattr(b, f)) for f in ("pfc_rx", "pfc_tx")]
            marked = _class_grew("ecn_marked", a.ecn_marked, b.ecn_marked, lossless) if sw.ecn is not None else 0
        except _Backwards:
            unreported.append(port.name)
            continue
        if None in pauses or marked is None:
            unreported.append(port.name)
        frames = sum(p or 0 for p in pauses)
        if frames or marked:
            busy.append(f"{port.name} {frames:,} pause frames, {marked or 0:,} ECN marks")
    expected = f"no pause frame or ECN mark on queue {lossless} in {seconds:g} s"
    if busy:
        return Row(sw.name, "", "queue-quiet", expected, "; ".join(busy[:4]) + (" ..." if len(busy) > 4 else ""),
                   Verdict.FAIL)
    if unreported:
        return Row(sw.name, "", "queue-quiet", expected, f"{NOT_REPORTED} on {', '.join(unreported[:4])}"
                   + (" ..." if len(unreported) > 4 else ""), Verdict.WARN)
    return Row(sw.name, "", "queue-quiet", expected, f"quiet on {len(sw.ports)} ports", Verdict.PASS)
