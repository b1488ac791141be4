"""The fabric's Grafana dashboard, built with Grafana Labs' Foundation SDK (grafana-foundation-sdk, the build for
Grafana 11.6) rather than hand-written JSON: fabric overview, a switch drill-down, a rail or pod drill-down and
a host's RDMA counters, over the same series the alert rules read (exporters.py, plan_series.py, the recording
rules of rules.py)."""

from __future__ import annotations

from grafana_foundation_sdk.builders import stat, timeseries
from grafana_foundation_sdk.builders.dashboard import (
    Dashboard,
    DatasourceVariable,
    QueryVariable,
    Row,
    ThresholdsConfig,
)
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef, Threshold, ThresholdsMode, VariableRefresh

from rocefab.renderers.monitoring import exporters as x
from rocefab.renderers.monitoring import rules as r
from rocefab.renderers.monitoring.plan_series import LOSSLESS_QUEUE, PORT_INFO, PORT_SPEED
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.record import record

DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
RATE = "$__rate_interval"
TIER = f"on (device, port) group_left (tier) {PORT_INFO}"


@record
class Query:
    expr: str
    legend: str


def queries_of(plan: FabricPlan) -> dict[str, list[Query]]:
    """Every panel's queries, by panel title: what the dashboard shows and the tests check with promtool."""
    switch = 'device="$switch"'
    host = 'device="$host"'
    group = "rail" if any(sw.rail is not None for sw in plan.switches) else "pod"
    lossless = "|".join(str(p) for p in plan.qos.lossless_priorities)
    nic_pauses = "|".join(f"{x.ETHTOOL}_(received|transmitted)_prio{p}_pause" for p in plan.qos.lossless_priorities)
    return {
        "Utilisation per tier (% of planned capacity, egress)": [Query(
            f"100 * sum by (tier) (rate({x.OUT_OCTETS}[{RATE}]) * 8 * {TIER}) / sum by (tier) "
            f'(8 * {PORT_SPEED} * {TIER}{{tier!="host"}})', "{{tier}}")],
        "PFC pause frames/s, lossless priorities": [
            Query(f'sum by (tier) (({r.SWITCH_PFC_RX}{{priority=~"{lossless}"}} '
                  f'+ {r.SWITCH_PFC_TX}{{priority=~"{lossless}"}}) * {TIER})', "{{tier}} switches"),
            Query(f'sum(rate({{__name__=~"{nic_pauses}"}}[{RATE}]))', "host NICs")],
        "ECN-marked packets/s": [
            Query(f"sum by (tier) ({r.SWITCH_ECN} * {TIER})", "{{tier}} egress"),
            Query(f"sum(rate({x.IB_ECN_MARKED}[{RATE}]))", "arriving at host NICs")],
        "Lossless-queue drops in range": [Query(
            f"sum(increase({r.SWITCH_DROPS}[$__range]) * on (device, queue) group_left {LOSSLESS_QUEUE}) "
            f"or vector(0)", "drops")],
        "Worst port error rates (% of packets in)": [
            Query(f"topk(10, 100 * rate({x.IN_ERRORS}[{RATE}]) / rate({x.IN_PKTS}[{RATE}]))", "{{device}} {{port}}"),
            Query(f"topk(10, 100 * rate({x.IB_RX_ERRORS}[{RATE}]) / rate({x.IB_RX_PKTS}[{RATE}]))",
                  "{{device}} {{port}}")],
        "Firing rocefab alerts": [Query(
            'count by (alertname) (ALERTS{alertstate="firing", alertname=~"Rocefab.*"})', "{{alertname}}")],
        "$switch: egress per port (bit/s)": [Query(f"8 * rate({x.OUT_OCTETS}{{{switch}}}[{RATE}])", "{{port}}")],
        "$switch: PFC pause frames/s": [
            Query(f"{r.SWITCH_PFC_RX}{{{switch}}}", "{{port}} prio {{priority}} received"),
            Query(f"{r.SWITCH_PFC_TX}{{{switch}}}", "{{port}} prio {{priority}} sent")],
        "$switch: queue drops and ECN marks": [
            Query(f"{r.SWITCH_DROPS}{{{switch}}}", "{{port}} q{{queue}} drops"),
            Query(f"{r.SWITCH_ECN}{{{switch}}}", "{{port}} q{{queue}} ECN-marked/s")],
        f"{group} $group: leaves' egress (bit/s)": [Query(
            f"sum by (device) (8 * rate({x.OUT_OCTETS}[{RATE}]) * on (device, port) group_left "
            f'{PORT_INFO}{{{group}="$group", tier="leaf"}})', "{{device}}")],
        "$host: RDMA throughput (bit/s)": [
            Query(f"8 * rate({x.IB_TX_BYTES}{{{host}}}[{RATE}])", "{{port}} sent"),
            Query(f"8 * rate({x.IB_RX_BYTES}{{{host}}}[{RATE}])", "{{port}} received")],
        "$host: retransmission causes/s": [
            Query(f"rate({x.IB}_{cause}{{{host}}}[{RATE}])", "{{port}} " + cause.removesuffix("_total"))
            for cause in x.IB_RETRANSMIT_CAUSES],
        "$host: congestion control (CNPs/s)": [
            Query(f"rate({x.IB_CNP_SENT}{{{host}}}[{RATE}])", "{{port}} CNPs sent (ECN marks seen)"),
            Query(f"rate({x.IB_CNP_HANDLED}{{{host}}}[{RATE}])", "{{port}} CNPs handled (rate cut)")],
    }


def _timeseries(title: str, queries: list[Query], unit: str) -> timeseries.Panel:
    panel = timeseries.Panel().title(title).unit(unit).datasource(DATASOURCE).height(8).span(12)
    for q in queries:
        panel = panel.with_target(Dataquery().expr(q.expr).legend_format(q.legend))
    return panel


def _stat(title: str, queries: list[Query], red_from: float) -> stat.Panel:
    thresholds = ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps(
        [Threshold(value=None, color="green"), Threshold(value=red_from, color="red")])
    panel = stat.Panel().title(title).datasource(DATASOURCE).height(6).span(6).thresholds(thresholds)
    for q in queries:
        panel = panel.with_target(Dataquery().expr(q.expr).legend_format(q.legend).instant())
    return panel


def _variable(name: str, query: str) -> QueryVariable:
    return (QueryVariable(name).label(name).datasource(DATASOURCE).query(query)
            .refresh(VariableRefresh.ON_DASHBOARD_LOAD))


def build_dashboard(plan: FabricPlan) -> Dashboard:
    q = queries_of(plan)
    fabric = plan.source.fabric
    group = "rail" if any(sw.rail is not None for sw in plan.switches) else "pod"
    units = {"Utilisation": "percent", "PFC": "pps", "ECN": "pps", "Worst": "percent", "bit/s": "bps",
             "retransmission": "pps", "CNPs": "pps", "drops and": "short"}

    def unit_of(title: str) -> str:
        return next((u for key, u in units.items() if key in title), "short")

    board = (Dashboard(f"rocefab {fabric}: lossless fabric").uid(f"rocefab-{fabric}")
             .tags(["rocefab", "roce", fabric]).refresh("30s").time("now-6h", "now")
             .with_variable(DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
             .with_variable(_variable("switch", f'label_values({PORT_INFO}{{tier!="host"}}, device)'))
             .with_variable(_variable(group, f'label_values({PORT_INFO}{{tier="leaf"}}, {group})'))
             .with_variable(_variable("host", f'label_values({PORT_INFO}{{tier="host"}}, device)')))
    sections = [
        ("Fabric overview", ["Utilisation per tier (% of planned capacity, egress)",
                             "PFC pause frames/s, lossless priorities", "ECN-marked packets/s",
                             "Worst port error rates (% of packets in)"],
         [("Lossless-queue drops in range", 1), ("Firing rocefab alerts", 1)]),
        ("Switch $switch", ["$switch: egress per port (bit/s)", "$switch: PFC pause frames/s",
                            "$switch: queue drops and ECN marks"], []),
        (f"{group.capitalize()} $group", [f"{group} $group: leaves' egress (bit/s)"], []),
        ("Host $host RDMA", ["$host: RDMA throughput (bit/s)", "$host: retransmission causes/s",
                             "$host: congestion control (CNPs/s)"], []),
    ]
    for title, graphs, stats in sections:
        board = board.with_row(Row(title))
        for name, red in stats:
            board = board.with_panel(_stat(name, q[name], red))
        for name in graphs:
            board = board.with_panel(_timeseries(name, q[name], unit_of(name)))
    return board


def render_dashboard(plan: FabricPlan) -> str:
    return JSONEncoder(sort_keys=True, indent=2).encode(build_dashboard(plan).build()) + "\n"
