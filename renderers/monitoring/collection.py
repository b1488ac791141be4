"""How the metrics are collected: a gnmic config that subscribes to every switch's gNMI server at its management
address, and a Prometheus config that scrapes gnmic, every host's node_exporter and the plan's own series, and
relabels all three to rocefab's two labels, `device` and `port`.

No credential is written: gnmic reads GNMIC_USERNAME and GNMIC_PASSWORD from its environment
(openconfig/gnmic docs/user_guide/configuration_env.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rocefab.platforms import unit
from rocefab.renderers.monitoring import exporters as x
from rocefab.renderers.monitoring.rules import duration
from rocefab.renderers.plan import FabricPlan, Host, Switch

GNMIC_LISTEN = ":9804"  # gnmic's Prometheus output default
NODE_EXPORTER_PORT = 9100


def gnmi_address(sw: Switch, port: int) -> str:
    """Where the switch's gNMI server listens: its management address, or in band at its loopback when the intent
    gives no management addressing (the configs then bind the server to the default VRF or the loopback)."""
    host = sw.management.ipv4.split("/")[0] if sw.management else sw.loopback_ipv4.split("/")[0]
    return f"{host}:{port}"


def gnmic_config(plan: FabricPlan, switches: Sequence[Switch] | None = None) -> dict[str, Any]:
    """gnmic subscribing to the plan's switches (to `switches`, a monitoring shard's, where given)."""
    interval = duration(plan.operations.scrape_interval_s)
    targets: dict[str, Any] = {}
    chosen = plan.switches if switches is None else switches
    for sw in (sw for sw in chosen if _streams(sw)):
        spec = unit(sw.platform).spec
        assert spec is not None and spec.gnmi_port is not None and spec.telemetry is not None
        target: dict[str, Any] = {"name": sw.name, "address": gnmi_address(sw, spec.gnmi_port)}
        # the switches' own certificates are self-signed until the operator installs one
        target.update({"skip-verify": True} if spec.gnmi_tls else {"insecure": True})
        if spec.telemetry.gnmi_auth_scheme:
            target["auth-scheme"] = spec.telemetry.gnmi_auth_scheme
        target["subscriptions"] = ["rocefab-common", f"rocefab-{sw.platform}"]
        target["event-tags"] = {"device": sw.name}
        targets[sw.name] = target
    platforms = sorted({sw.platform for sw in chosen if _streams(sw)})
    subscriptions = {"rocefab-common": _subscription(x.COMMON_PATHS, interval)}
    subscriptions.update({f"rocefab-{p}": _subscription(x.telemetry(p).paths, interval) for p in platforms})
    return {
        "encoding": "json_ietf",
        "timeout": "10s",
        "targets": targets,
        "subscriptions": subscriptions,
        "processors": PROCESSORS,
        "outputs": {
            "prometheus": {"type": "prometheus", "listen": GNMIC_LISTEN, "path": "/metrics",
                           "metric-prefix": x.GNMIC_PREFIX,
                           "expiration": duration(4 * plan.operations.scrape_interval_s),
                           "event-processors": list(PROCESSORS)},
        },
    }


def _streams(sw: Switch) -> bool:
    spec = unit(sw.platform).spec
    return spec is not None and spec.gnmi_port is not None and spec.telemetry is not None


def _subscription(paths: tuple[str, ...], interval: str) -> dict[str, Any]:
    return {"paths": list(paths), "mode": "stream", "stream-mode": "sample", "sample-interval": interval}


# An identity may arrive module-qualified under JSON_IETF (RFC 7951): "openconfig-if-ethernet:SPEED_400GB".
_MODULE = "^(?:[A-Za-z0-9_.-]+:)?"


def _replace(pattern: str, new: str) -> dict[str, Any]:
    return {"replace": {"apply-on": "value", "old": f"{_MODULE}{pattern}$", "new": new}}


# gnmic's event-strings processor: `old` is a regular expression (pkg/formatters/event_strings), so `${1}`
# carries the speed's digits; the Prometheus output then parses the numeric strings.
PROCESSORS: dict[str, Any] = {
    "rocefab-oper-status": {"event-strings": {"value-names": ["oper-status$"], "transforms": [
        _replace("UP", "1"), _replace("(DOWN|LOWER_LAYER_DOWN|NOT_PRESENT|DORMANT|TESTING|UNKNOWN)", "0")]}},
    # Gb/s; EOS adds lane-count variants (SPEED_400GB_4LANE) and SPEED_1P6TB_8LANE (arista-intf-augments)
    "rocefab-port-speed": {"event-strings": {"value-names": ["port-speed$"], "transforms": [
        _replace("SPEED_([0-9]+)GB(?:_[0-9]+LANE)?", "${1}"), _replace("SPEED_1P6TB(?:_[0-9]+LANE)?", "1600"),
        _replace("SPEED_2500MB", "2.5"), _replace("SPEED_100MB", "0.1"), _replace("SPEED_10MB", "0.01"),
        _replace("SPEED_UNKNOWN", "0")]}},
    "rocefab-bgp-state": {"event-strings": {"value-names": ["session-state$"], "transforms": [
        _replace(state, str(n)) for n, state in enumerate(x.BGP_FSM, start=1)]}},
}


def _rename(source: str, target: str) -> dict[str, Any]:
    return {"source_labels": [source], "regex": "(.+)", "target_label": target}


def prometheus_config(plan: FabricPlan, rules_file: str, shard_hosts: Sequence[Host] | None = None) -> dict[str, Any]:
    """Prometheus scraping gnmic, the hosts' node_exporters (`shard_hosts`, a monitoring shard's, where given) and
    the plan's series."""
    interval = duration(plan.operations.scrape_interval_s)
    hosts = [{"targets": [f"{h.name}:{NODE_EXPORTER_PORT}"], "labels": {"rocefab_host": h.name}}
             for h in (plan.hosts if shard_hosts is None else shard_hosts)]
    gnmic_labels = sorted({old for old, _ in x.GNMIC_RENAMES} | {"source", "subscription_name"})
    return {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "rule_files": [rules_file],
        "scrape_configs": [
            {"job_name": "rocefab-switches", "static_configs": [{"targets": [f"localhost{GNMIC_LISTEN}"]}],
             "metric_relabel_configs": [
                 *(_rename(old, new) for old, new in x.GNMIC_RENAMES),
                 {"regex": "|".join(gnmic_labels), "action": "labeldrop"},
             ]},
            # node_exporter's own `port` (the RDMA port number) and `device` (netdev or RDMA device) become
            # ib_port and port; `device` becomes the host, as everywhere else
            {"job_name": "rocefab-hosts", "static_configs": hosts,
             "metric_relabel_configs": [
                 _rename("port", "ib_port"),
                 _rename("device", "port"),
                 _rename("rocefab_host", "device"),
                 {"regex": "rocefab_host", "action": "labeldrop"},
             ]},
            # the plan's series (monitoring/textfile/rocefab_plan.prom in the textfile directory of the monitoring
            # host's node_exporter), with their own device and port labels
            {"job_name": "rocefab-plan", "honor_labels": True,
             "static_configs": [{"targets": [f"localhost:{NODE_EXPORTER_PORT}"]}],
             "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": "rocefab_.*", "action": "keep"}]},
        ],
    }
