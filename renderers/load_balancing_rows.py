"""How each group of switches spreads RoCE, one row per tier, platform and model: what the hash takes, what moves
flows dynamically, and whether changing it needs a reload (`rocefab plan` and summary.md)."""

from __future__ import annotations

from dataclasses import replace

from rocefab.renderers.plan import FabricPlan, LoadBalancing
from rocefab.renderers.record import record


@record
class LoadBalancingRow:
    role: str
    platform: str
    model: str
    switches: int
    hashing: str
    dynamic: str
    reload: str  # the sections whose change needs a reload, or "no"


def _hashing(lb: LoadBalancing) -> str:
    words = "five-tuple + RoCE destination QP" if lb.roce_qp_hash else "five-tuple"
    return f"{words}, rotate {lb.rotate}" if lb.rotate is not None else words


def _dynamic(lb: LoadBalancing) -> str:
    if lb.adaptive_routing:
        return "adaptive routing (per packet)"
    if lb.dynamic is None:
        return "none"
    ports = f" on {len(lb.dynamic_ports)} fabric ports" if lb.dynamic_ports else ""
    size = f", flow-set size {lb.flow_set_size}" if lb.flow_set_size else ""
    return f"{lb.dynamic} DLB{ports}{size}"


def load_balancing_rows(plan: FabricPlan) -> list[LoadBalancingRow]:
    """One row per group of switches that spread RoCE alike, in plan order."""
    rows: dict[tuple[str, ...], LoadBalancingRow] = {}
    counts: dict[tuple[str, ...], int] = {}
    for sw in plan.switches:
        lb = sw.load_balancing
        if lb is None:
            continue
        row = LoadBalancingRow(sw.role.value, sw.platform, sw.model, 1, _hashing(lb),
                               _dynamic(lb), ", ".join(lb.reload_sections) or "no")
        key = (row.role, row.platform, row.model, row.hashing, row.dynamic, row.reload)
        counts[key] = counts.get(key, 0) + 1
        rows.setdefault(key, row)
    return [replace(row, switches=counts[key]) for key, row in rows.items()]
