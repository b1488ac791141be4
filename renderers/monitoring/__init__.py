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
from rocefab.renderers.plan import FabricPlan
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


def render_monitoring(plan: FabricPlan) -> Iterator[tuple[str, str, Content]]:
    """(path under the output folder, kind, content) of every monitoring file, each made when asked for; the
    plan's series, the largest by far, as a function that writes them piece by piece."""
    alerts = all_alerts(plan)
    yield (f"monitoring/{RULES}", "prometheus-rules",
           _yaml(plan, "Prometheus alerting rules: promtool check rules rules.yml", rule_document(plan, alerts)))
    yield ("monitoring/rules.test.yml", "promtool-tests",
           _yaml(plan, "promtool unit tests of rules.yml: promtool test rules rules.test.yml",
                 promtool_tests(plan, RULES)))
    yield ("monitoring/prometheus.yml", "prometheus-config",
           _yaml(plan, "Prometheus scrape config: promtool check config prometheus.yml",
                 prometheus_config(plan, RULES)))
    yield ("monitoring/gnmic.yml", "gnmic-config",
           _yaml(plan, "gnmic collector: GNMIC_USERNAME=... GNMIC_PASSWORD=... gnmic --config gnmic.yml subscribe",
                 gnmic_config(plan)))
    yield "monitoring/grafana-dashboard.json", "grafana-dashboard", render_dashboard(plan)
    header = header_lines(plan.source, "node_exporter textfile collector", "fabric")
    yield ("monitoring/textfile/rocefab_plan.prom", "plan-series",
           lambda emit: write_plan_series(plan, header, emit))  # millions of lines at scale: streamed
