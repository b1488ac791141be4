"""A GPU host's NIC counters over a sampling window: retransmissions against the intent's threshold, ECN marks
answered with CNPs, and PFC pause frames a second on each lossless priority of each NIC port. A counter the host
did not report is a warning that says so, never a pass."""

from __future__ import annotations

from rocefab.deploy.verify.checks import PAUSE_STORM_PER_S, Row, judged
from rocefab.deploy.verify.observation import HostCounters
from rocefab.renderers.plan import FabricPlan, Host


def _rate(before: int | None, after: int | None, seconds: float) -> float | None:
    return None if before is None or after is None else (after - before) / seconds


def host_counter_rows(plan: FabricPlan, host: Host, before: HostCounters, after: HostCounters,
                      seconds: float) -> list[Row]:
    """What the host's NICs did between two reads: retransmissions as a share of the packets sent (against the
    intent's monitoring.retransmit_rate_percent, as the rendered alert), PFC pause frames a second on each lossless
    priority (the switches' storm threshold), and whether ECN marks that arrive are answered with CNPs."""
    limit = plan.operations.retransmit_rate_percent
    rows = []
    for device in host.rdma_devices:
        a, b = before.rdma.get(device), after.rdma.get(device)
        if a is None or b is None:
            rows.append(judged(host.name, device, "counters", "read twice", "not reported", False, soft=True))
            continue
        grew = {k: b.retransmits[k] - a.retransmits[k] for k in a.retransmits if k in b.retransmits}
        sent = None if a.tx_packets is None or b.tx_packets is None else b.tx_packets - a.tx_packets
        retransmits = sum(grew.values())
        if not grew or sent is None:
            rows.append(judged(host.name, device, "roce-retransmit-rate", f"<= {limit:g} % of packets sent",
                             "not reported", False, soft=True))
        else:
            share = 100 * retransmits / sent if sent > 0 else (0.0 if retransmits == 0 else 100.0)
            detail = ", ".join(f"{k} +{v:,}" for k, v in grew.items() if v)
            rows.append(judged(host.name, device, "roce-retransmit-rate", f"<= {limit:g} % of packets sent",
                             f"{share:.4f} % ({retransmits:,} of {sent:,}{'; ' + detail if detail else ''})",
                             share <= limit))
        marked, cnps = _rate(a.ecn_marked, b.ecn_marked, seconds), _rate(a.cnp_sent, b.cnp_sent, seconds)
        handled = _rate(a.cnp_handled, b.cnp_handled, seconds)
        if marked is None or cnps is None:
            rows.append(judged(host.name, device, "nic-cnp", "a CNP sent for ECN-marked packets received",
                             "not reported", False, soft=True))
        else:
            said = f"ECN-marked in {marked:,.0f}/s, CNPs sent {cnps:,.0f}/s" + \
                ("" if handled is None else f", CNPs handled {handled:,.0f}/s")
            rows.append(judged(host.name, device, "nic-cnp", "a CNP sent for ECN-marked packets received", said,
                             marked <= 0 or cnps > 0))
    ports = [m.netdev for b in host.bonds for m in b.members] + [n.netdev for n in host.nics]
    lossless = sorted(plan.qos.lossless_priorities)
    for port in ports:
        a_pause, b_pause = before.pause.get(port), after.pause.get(port)
        for p in lossless:
            want = f"priority {p}: < {PAUSE_STORM_PER_S:,} frames/s each way"
            rx = None if a_pause is None or b_pause is None else \
                _rate(a_pause.rx.get(p), b_pause.rx.get(p), seconds)
            tx = None if a_pause is None or b_pause is None else \
                _rate(a_pause.tx.get(p), b_pause.tx.get(p), seconds)
            if a_pause is not None and b_pause is not None and (rx is None or tx is None):
                # mlx5 counts per priority only where PFC is on: no counter is PFC off, which nic-pfc judges
                rows.append(judged(host.name, port, "nic-pause-rate", want, f"no prio{p} pause counter in ethtool -S: "
                                 "PFC off on that priority", False, soft=True))
            elif rx is None or tx is None:
                rows.append(judged(host.name, port, "nic-pause-rate", want, "not reported", False, soft=True))
            else:
                rows.append(judged(host.name, port, "nic-pause-rate", want, f"rx {rx:,.0f}/s, tx {tx:,.0f}/s",
                                 max(rx, tx) < PAUSE_STORM_PER_S))
    return rows
