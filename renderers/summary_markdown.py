"""`summary.md`: the render's one page for a reviewer — tiers and counts, the QoS contract, PFC headroom,
the checks' findings and how many lines each device's files have (a change request's size at a glance)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rocefab.models.findings import Finding
from rocefab.renderers.headroom_rows import headroom_rows
from rocefab.renderers.load_balancing_rows import load_balancing_rows
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.summary import FabricSummary, ecn_profiles, fabric_summary

SUMMARY_MD = "summary.md"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]], right: Sequence[str] = ()) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if h in right else "---" for h in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _cell(value: object) -> str:
    # findings quote intent values; a pipe or a line break would end the cell or the row
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _tiers(s: FabricSummary) -> list[str]:
    rails = f", {s.rails} rails" if s.rails else ""
    cables = ", ".join(f"{c.count} {c.kind} at {c.speed_gbps}G" for c in s.cables)
    return [
        f"{s.hosts} hosts, {s.gpu_nics} NIC ports; {len(s.tiers)} tier(s), {s.pods} pod(s){rails}; "
        f"bisection {s.bisection_gbps / 1000:g} Tb/s; at most {s.max_switch_hops} switch hop(s) between two hosts.",
        "",
        *_table(("tier", "model", "switches", "down ports", "up ports", "peer ports", "oversubscription"),
                ((t.role, ", ".join(t.models), t.count, t.ports_down, t.ports_up, t.ports_peer, t.oversubscription)
                 for t in s.tiers), right=("switches", "down ports", "up ports", "peer ports")),
        "",
        f"Cables: {cables}.",
    ]


def _qos(plan: FabricPlan) -> list[str]:
    q = plan.qos
    named = {d for d, _ in q.dscp_to_priority}
    others = f"the other {64 - len(named)}"
    extra = [("named in the intent", d, p, "no-drop (PFC)" if p in q.lossless_priorities else "lossy")
             for d, p in q.dscp_to_priority if d not in (q.roce_dscp, q.cnp_dscp)]
    lossless = ", ".join(map(str, q.lossless_priorities)) or "none"
    watchdog = (f"on: polled every {q.watchdog_polling_interval_ms} ms, robustness {q.watchdog_robustness}, "
                f"recovery {q.watchdog_recovery_ms} ms") if q.watchdog_enabled else "off"
    return [
        *_table(("traffic", "DSCP", "priority", "treatment"), (
            ("RoCE", q.roce_dscp, q.roce_priority,
             f"no-drop (PFC), ECN {ecn_profiles(plan) or 'not rendered'}, {q.ets_roce_percent} % of the bandwidth"),
            ("CNP", q.cnp_dscp, q.cnp_priority, "strict priority, never paused"),
            *extra,
            ("everything else", others, 0, f"lossy, {q.ets_default_percent} % of the bandwidth"),
        )),
        "",
        f"Trust {q.trust}; PFC on priorities {lossless}; PFC watchdog {watchdog}. Hosts send ToS {q.roce_tos} "
        f"(DSCP {q.roce_dscp}, ECT(0)).",
    ]


def _headroom(plan: FabricPlan) -> list[str]:
    rows = headroom_rows(plan)
    if not rows:
        return ["No lossless priority: no headroom."]
    return _table(("tier", "platform", "devices", "longest cable", "speed", "headroom", "arithmetic",
                   "rendered as"),
                  ((r.role, r.platform, r.switches, f"{r.longest_cable_m} m", f"{r.speed_gbps}G",
                    f"{r.headroom_bytes:,} B", f"`{r.arithmetic}`", r.rendered_as) for r in rows),
                  right=("devices", "headroom"))


def _load_balancing(plan: FabricPlan) -> list[str]:
    return _table(("tier", "platform", "model", "switches", "ECMP hash", "dynamic", "change needs a reload"),
                  ((r.role, r.platform, r.model, r.switches, r.hashing, r.dynamic, r.reload)
                   for r in load_balancing_rows(plan)), right=("switches",))


def _findings(findings: Sequence[Finding]) -> list[str]:
    if not findings:
        return ["None."]
    lines = []
    for f in findings:
        where = ".".join(map(str, f.path)) or "(intent)"
        hint = f" — {_cell(f.hint)}" if f.hint else ""
        lines.append(f"- {f.severity.value} `[{f.code}]` `{where}`: {_cell(f.message)}{hint}")
    return lines


def _devices(plan: FabricPlan, lines: Mapping[str, int]) -> list[str]:
    switches = _table(("switch", "role", "model", "platform", "lines"),
                      ((sw.name, sw.role.value, sw.model, f"{sw.platform} {sw.release}", f"{lines.get(sw.name, 0):,}")
                       for sw in plan.switches), right=("lines",))
    if not plan.hosts:
        return switches
    counts = [lines.get(h.name, 0) for h in plan.hosts]
    low, high = min(counts), max(counts)
    spread = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    return [*switches, "", f"{len(plan.hosts)} hosts, {spread} lines of files each (script, NCCL env, boot unit, "
            "preflight)."]


def render_summary_markdown(plan: FabricPlan, device_lines: Mapping[str, int], findings: Sequence[Finding],
                            summary: FabricSummary | None = None) -> str:
    """The page for `plan`; `device_lines` counts each device's rendered lines, `findings` are the checks';
    `summary` is `fabric_summary(plan)` when the caller has it already (a second of a 98,304-GPU fabric)."""
    sections = [
        (f"Fabric {plan.source.fabric}", _tiers(fabric_summary(plan) if summary is None else summary)),
        ("QoS", _qos(plan)),
        ("PFC headroom (worst port per tier and platform)", _headroom(plan)),
        ("Load balancing of RoCE", _load_balancing(plan)),
        ("Findings", _findings(findings)),
        ("Devices", _devices(plan, device_lines)),
    ]
    out: list[str] = []
    for i, (title, body) in enumerate(sections):
        out += [f"{'#' if i == 0 else '##'} {title}", "", *body, ""]
    return "\n".join(out)
