"""verify's counter checks on the shared words (PortCounters), whatever the platform: a fault in the numbers
fails, a number the device did not report warns and names its command, a counter that fell warns — and nothing
absent ever passes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rocefab.deploy.verify.checks import Verdict, counter_rows
from rocefab.deploy.verify.counter_checks import port_rows, quiet_row
from rocefab.deploy.verify.doctor import diagnose
from rocefab.deploy.verify.observation import PortCounters
from rocefab.lab.counters import Counters
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Switch

ROOT = Path(__file__).resolve().parents[1]
_checked = check_file(ROOT / "intents" / "pod32.yaml", "pod32")
assert _checked.plan is not None
PLAN: FabricPlan = _checked.plan
LEAF: Switch = next(sw for sw in PLAN.switches if sw.platform == "nxos" and sw.role.value == "leaf")
LOSSLESS = PLAN.qos.roce_priority
SOURCES = {"in_packets": "show interface counters", "in_errors": "show interface counters errors",
           "pfc_rx": "show interface priority-flow-control", "pfc_tx": "show interface priority-flow-control",
           "queue_drops": "show queuing interface", "pfc_rx_priority": "show queuing interface",
           "pfc_tx_priority": "show queuing interface", "watchdog_storms": "show queuing pfc-queue detail",
           "ecn_marked": "show queuing interface", "out_packets": "show interface counters"}


def read(packets: int = 0, pause: int = 0, drops: int = 0, storms: int = 0, marks: int = 0,
         errors: int = 0) -> PortCounters:
    per = dict.fromkeys(range(8), 0)
    return PortCounters(packets, errors, pause, 0, {**per, LOSSLESS: drops}, {**per, LOSSLESS: pause}, dict(per),
                        {**per, LOSSLESS: storms}, {**per, LOSSLESS: marks}, packets, SOURCES)


def rows_of(a: PortCounters, b: PortCounters) -> dict[str, tuple[Verdict, str]]:
    return {r.check: (r.verdict, r.observed) for r in port_rows(PLAN, LEAF, "Ethernet1/1", a, b, LOSSLESS, 1.0)}


def test_healthy_window_passes_every_check() -> None:
    rows = rows_of(read(), read(packets=1_000_000, pause=5, marks=50))
    assert set(rows) == {"pfc-pause-rate", "lossless-drops", "pfc-watchdog-events", "ecn-marking",
                         "input-error-rate"}
    assert {v for v, _ in rows.values()} == {Verdict.PASS}


def test_each_fault_fails_its_check() -> None:
    sick = rows_of(read(), read(packets=1_000_000, pause=2_000_000, drops=5_000, storms=3, errors=500,
                                marks=100_000))
    for check in ("pfc-pause-rate", "lossless-drops", "pfc-watchdog-events", "input-error-rate"):
        assert sick[check][0] is Verdict.FAIL, check
    assert sick["ecn-marking"][0] is Verdict.WARN  # congestion, not misconfiguration
    assert "priority 3" not in sick["pfc-pause-rate"][1] and "2,000,000" in sick["pfc-pause-rate"][1]


FIELDS = ("in_packets", "in_errors", "pfc_rx", "pfc_tx", "queue_drops", "pfc_rx_priority", "pfc_tx_priority",
          "watchdog_storms", "ecn_marked", "out_packets")


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("which", ["before", "after", "both"])
def test_an_absent_field_never_passes_the_checks_it_feeds(field: str, which: str) -> None:
    """Whatever field a device leaves out, in either read, no check built on it passes on a sick port; the checks
    it does not feed still judge."""
    a, b = read(), read(packets=1_000_000, pause=2_000_000, drops=5_000, storms=3, errors=500, marks=100_000)
    if which in ("before", "both"):
        a = replace(a, **{field: None})
    if which in ("after", "both"):
        b = replace(b, **{field: None})
    rows = rows_of(a, b)
    assert Verdict.PASS not in {v for check, (v, _) in rows.items() if check != "ecn-marking"}
    warned = [o for v, o in rows.values() if v is Verdict.WARN and o.startswith("not reported")]
    if field not in ("pfc_rx", "pfc_tx", "pfc_rx_priority", "pfc_tx_priority"):  # one of the two suffices
        assert warned and all(f"`{SOURCES[field]}`" in o for o in warned), rows


def test_a_missing_class_is_not_a_zero() -> None:
    """A per-class table read without the lossless class: not reported, not 0 drops."""
    a = replace(read(), queue_drops={0: 0}, watchdog_storms={}, ecn_marked={7: 0})
    b = replace(read(packets=10), queue_drops={0: 0}, watchdog_storms={}, ecn_marked={7: 0})
    rows = rows_of(a, b)
    for check in ("lossless-drops", "pfc-watchdog-events", "ecn-marking"):
        assert rows[check][0] is Verdict.WARN and rows[check][1].startswith("not reported by `"), check


def test_per_priority_without_the_priority_falls_back_to_the_totals() -> None:
    """An answer without per-priority detail must not override the correct totals (an EOS form)."""
    a = replace(read(), pfc_rx_priority={}, pfc_tx_priority={})
    b = replace(read(packets=10, pause=2_000_000), pfc_rx_priority={}, pfc_tx_priority={})
    verdict, observed = rows_of(a, b)["pfc-pause-rate"]
    assert verdict is Verdict.FAIL and "rx 2,000,000/s" in observed


def test_a_counter_that_fell_warns() -> None:
    rows = rows_of(read(drops=50), read(drops=0))
    assert rows["lossless-drops"][0] is Verdict.WARN and "went from 50 to 0" in rows["lossless-drops"][1]


def test_a_port_missing_from_a_read_warns_and_doctor_names_the_command() -> None:
    ports = [p.name for p in LEAF.ports]
    before = {name: read() for name in ports}
    after = {name: replace(read(packets=10), watchdog_storms=None) for name in ports[1:]}
    rows = counter_rows(PLAN, LEAF, before, after, 1.0)
    first = [r for r in rows if r.port == ports[0]]
    assert [(r.check, r.verdict) for r in first] == [("counters", Verdict.WARN)]
    assert Verdict.PASS not in {r.verdict for r in rows if r.check == "pfc-watchdog-events"}
    found = [d for d in diagnose(PLAN, rows, "pod32.yaml", "inv.yaml") if d.code == "not-reported"]
    assert {d.device for d in found} == {LEAF.name}
    evidence = sorted(d.evidence[0] for d in found)
    assert evidence[0] == f"counters: not reported on {ports[0]}"
    assert "`show queuing pfc-queue detail`" in evidence[1] and "more" in evidence[1]


def test_a_drained_switchs_queue_is_quiet_only_with_no_pause_and_no_mark_on_any_port() -> None:
    """What `rocefab drain` waits for on a drained switch (deploy/drain.py wait_until_quiet): traffic alone is no
    objection, a single pause frame or ECN mark on the lossless queue is, and a port not read is never quiet."""
    spine = next(sw for sw in PLAN.switches if sw.platform == "nxos" and sw.role.value == "spine")
    ports = [p.name for p in spine.ports]
    before = dict.fromkeys(ports, read())
    moving = dict.fromkeys(ports, read(packets=1_000))
    quiet = quiet_row(PLAN, spine, before, moving, LOSSLESS, 2.0)
    assert quiet.verdict is Verdict.PASS and quiet.observed == f"quiet on {len(ports)} ports"
    paused = {**moving, ports[1]: read(packets=1_000, pause=3)}
    busy = quiet_row(PLAN, spine, before, paused, LOSSLESS, 2.0)
    assert busy.verdict is Verdict.FAIL and busy.observed == f"{ports[1]} 3 pause frames, 0 ECN marks", busy
    marked = quiet_row(PLAN, spine, before, {**moving, ports[0]: read(marks=7)}, LOSSLESS, 2.0)
    assert marked.verdict is Verdict.FAIL and "7 ECN marks" in marked.observed
    unread = quiet_row(PLAN, spine, before, {p: c for p, c in moving.items() if p != ports[2]}, LOSSLESS, 2.0)
    assert unread.verdict is Verdict.WARN and ports[2] in unread.observed


def test_the_lab_counts_nothing_on_a_port_while_it_carries_no_traffic() -> None:
    now = [100.0]
    counters = Counters(clock=lambda: now[0])
    end, far = ("spine1", "Ethernet1/1"), ("leaf1", "Ethernet1/49")
    now[0] += 1
    first = counters.read(end, far, True, carrying=False)
    now[0] += 5
    idle = counters.read(end, far, True, carrying=False)
    assert idle == first, "a drained spine's port stands still"
    now[0] += 1
    assert counters.read(end, far, True, carrying=True) == first, "the spell ends at the read that sees it end"
    now[0] += 1
    again = counters.read(end, far, True, carrying=True)
    assert again.in_packets == first.in_packets + 1_000_000, "it counts again from where it stood"
    counters.storm(end)
    now[0] += 1
    stormed = counters.read(end, far, True, carrying=False)
    assert stormed.pfc_rx > again.pfc_rx, "a fault still counts while idle"
