"""monitoring/ of the render output: alert rules, their promtool tests, the plan as series, and the gnmic and
Prometheus configs that collect what the rules read, and a Grafana dashboard (see README's "Monitoring" section)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from rocefab.renderers.monitoring.collection import gnmic_config, prometheus_config
from rocefab.renderers.monitoring.dashboard import render_dashboard
from rocefab.renderers.monitoring.plan_series import write_plan_series
from rocefab.renderers.monitoring.rule_tests import promtool_tests
from rocefab.renderers.monitoring.rules import all_alerts, rule_document
from rocefab.renderers.monitoring.shards import SERIES_PER_SHARD, Shard, shards
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.slurm_topology import hostlist
from rocefab.renderers.templating import header_lines
from rocefab.renderers.yamltext import dump_block

RULES = "rules.yml"


def _yaml(plan: FabricPlan, what: str, tree: dict[str, Any]) -> str:
    header = header_lines(plan.source, what, "fabric")
    return "".join(f"# {line}\n" for line in header) + dump_block(tree)


Content = str | Callable[[Callable[[str], None]], None]


def text_of(content: Content) -> str:
    """A monitoring file's text, whether made whole or written in pieces."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    content(parts.append)
    return "".join(parts)


def render_monitoring(plan: FabricPlan, limit: int = SERIES_PER_SHARD) -> Iterator[tuple[str, str, Content]]:
    """(path under the output folder, kind, content) of every monitoring file, each made when asked for; the
    plan's series, the largest by far, as a function that writes them piece by piece. Above `limit` plan series
    the collection is split into shards (monitoring/shards.py), each in monitoring/shards/NN/."""
    alerts = all_alerts(plan)
    rules = _yaml(plan, "Prometheus alerting rules: promtool check rules rules.yml", rule_document(plan, alerts))
    yield f"monitoring/{RULES}", "prometheus-rules", rules
    yield ("monitoring/rules.test.yml", "promtool-tests",
           _yaml(plan, "promtool unit tests of rules.yml: promtool test rules rules.test.yml",
                 promtool_tests(plan, RULES)))
    yield "monitoring/grafana-dashboard.json", "grafana-dashboard", render_dashboard(plan)
    parts = shards(plan, limit)
    if len(parts) == 1:
        yield from _collection(plan, "monitoring", None)
        return
    yield "monitoring/shards.yml", "monitoring-shards", _yaml(plan, "the monitoring shards and their devices", {
        "shards": [{"shard": _name(i), "series": s.series, "switches": hostlist([sw.name for sw in s.switches]),
                    "hosts": hostlist([h.name for h in s.hosts])} for i, s in enumerate(parts)]})
    for i, shard in enumerate(parts):
        folder = f"monitoring/shards/{_name(i)}"
        yield f"{folder}/{RULES}", "prometheus-rules", rules  # beside its prometheus.yml, which loads it
        yield from _collection(plan, folder, shard)


def _name(index: int) -> str:
    return f"{index + 1:02d}"


def _collection(plan: FabricPlan, folder: str, shard: Shard | None) -> Iterator[tuple[str, str, Content]]:
    """The Prometheus and gnmic configs and the plan's series of one monitoring host: of the whole plan, or of a
    shard."""
    of = "" if shard is None else f" (shard {folder.rsplit('/', 1)[-1]})"
    yield (f"{folder}/prometheus.yml", "prometheus-config",
           _yaml(plan, f"Prometheus scrape config{of}: promtool check config prometheus.yml",
                 prometheus_config(plan, RULES, None if shard is None else shard.hosts)))
    yield (f"{folder}/gnmic.yml", "gnmic-config",
           _yaml(plan, f"gnmic collector{of}: GNMIC_USERNAME=... GNMIC_PASSWORD=... gnmic --config gnmic.yml subscribe",
                 gnmic_config(plan, None if shard is None else shard.switches)))
    header = header_lines(plan.source, f"node_exporter textfile collector{of}", "fabric")
    switches, hosts = (None, None) if shard is None else (shard.switches, shard.hosts)
    yield (f"{folder}/textfile/rocefab_plan.prom", "plan-series",  # millions of lines at scale: streamed
           lambda emit: write_plan_series(plan, header, emit, switches, hosts))
