"""The lossless queue over a sampling window: its own pause rate (per priority, where the platform counts PFC
so), PFC watchdog shut-downs, and the share of its packets sent ECN-marked.

A watchdog that shut the queue during the window is a failure: the watchdog acts only on a queue paused without
end, and while shut the queue's RoCE traffic is dropped. ECN marks are congestion, not misconfiguration: a high
share is a warning (doctor's `tier-too-thin` reads it on uplinks), never a failure.
"""

from __future__ import annotations

from rocefab.deploy.verify.checks import Row, Verdict
from rocefab.deploy.verify.observation import PortCounters

PAUSE_STORM_PER_S = 10_000  # as checks.py: PFC frames a second that no healthy link sustains
ECN_MARK_WARN = 0.01  # one packet in a hundred sent ECN-marked: the egress runs congested


def pause_rates(a: PortCounters, b: PortCounters, priority: int, seconds: float) -> tuple[float, float, str]:
    """(rx, tx) frames a second on the lossless priority where counted per priority, else on every priority."""
    if a.pfc_rx_priority is not None and b.pfc_rx_priority is not None and a.pfc_tx_priority is not None \
            and b.pfc_tx_priority is not None:
        return ((b.pfc_rx_priority.get(priority, 0) - a.pfc_rx_priority.get(priority, 0)) / seconds,
                (b.pfc_tx_priority.get(priority, 0) - a.pfc_tx_priority.get(priority, 0)) / seconds,
                f"priority {priority}")
    return (b.pfc_rx - a.pfc_rx) / seconds, (b.pfc_tx - a.pfc_tx) / seconds, "all priorities"


def lossless_rows(device: str, port: str, a: PortCounters, b: PortCounters, lossless: int) -> list[Row]:
    rows = []
    if a.watchdog_storms is not None and b.watchdog_storms is not None:
        fired = b.watchdog_storms.get(lossless, 0) - a.watchdog_storms.get(lossless, 0)
        rows.append(Row(device, port, "pfc-watchdog-events", f"0 shut-downs of queue {lossless}",
                        f"{fired} (stormed {b.watchdog_storms.get(lossless, 0)} times in all)",
                        Verdict.PASS if fired <= 0 else Verdict.FAIL))
    if a.ecn_marked is not None and b.ecn_marked is not None and a.out_packets is not None \
            and b.out_packets is not None:
        marked = b.ecn_marked.get(lossless, 0) - a.ecn_marked.get(lossless, 0)
        sent = b.out_packets - a.out_packets
        share = marked / sent if sent > 0 else 0.0
        rows.append(Row(device, port, "ecn-marking", f"<= {ECN_MARK_WARN:.0%} of packets sent marked on queue "
                        f"{lossless}", f"{share:.3%} ({marked:,} of {sent:,})",
                        Verdict.PASS if share <= ECN_MARK_WARN else Verdict.WARN))
    return rows
