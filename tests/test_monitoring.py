"""monitoring/ of the render output, checked by Prometheus' own promtool: the rules parse, every alert fires on a
bad series and stays silent on a good one (promtool test rules), the tests bite when a rule is wrong, the
thresholds are the seed's unless the intent says otherwise, and the collectors' configs follow the plan."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import EXAMPLES, INTENTS, ROOT, TEST_VERSION, example_plan, needs_tool

from rocefab.deploy.verify.doctor import OVERSUBSCRIBED, RETRANSMISSIONS, RULES
from rocefab.platforms import unit
from rocefab.renderers.monitoring import render_monitoring, text_of
from rocefab.renderers.monitoring.plan_series import PORT_INFO, _line, plan_series, write_plan_series
from rocefab.renderers.monitoring.rule_tests import cases
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan

PROMTOOL = shutil.which("promtool")
needs_promtool = needs_tool("promtool", "prometheus")
MIXED = ROOT / "tests" / "lab" / "intents" / "mixed.yaml"


def _write(plan: FabricPlan, folder: Path) -> Path:
    for path, _kind, content in render_monitoring(plan):
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text_of(content), encoding="utf-8")
    return folder / "monitoring"


def _promtool(folder: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None, "promtool is required here (ROCEFAB_REQUIRE_TOOLS is set)"
    return subprocess.run([PROMTOOL, *args], cwd=folder, capture_output=True, text=True, input=stdin, check=False,
                          timeout=300)


def _plan_of(path: Path) -> FabricPlan:
    checked = check_file(path, TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan


def _document(plan: FabricPlan, name: str) -> Any:
    return next(yaml.safe_load(text_of(content)) for path, _k, content in render_monitoring(plan)
                if path == f"monitoring/{name}")


def _alerts(plan: FabricPlan) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in _document(plan, "rules.yml")["groups"] for r in g["rules"] if "alert" in r}


@needs_promtool
@pytest.mark.parametrize("source", ["lab", "pod32", "tor128-3tier", "cluster1024-rail", "mixed"])
def test_promtool_accepts_the_rules_and_their_tests_pass(source: str, tmp_path: Path) -> None:
    plan = _plan_of(MIXED) if source == "mixed" else example_plan(source)
    folder = _write(plan, tmp_path)
    for args in (("check", "rules", "rules.yml"), ("test", "rules", "rules.test.yml"),
                 ("check", "config", "prometheus.yml")):
        result = _promtool(folder, *args)
        assert result.returncode == 0, (args, result.stdout[-3000:], result.stderr[-3000:])
    if source in ("lab", "mixed"):  # the format is the same at any size; linting 30,000 lines adds nothing
        series = (folder / "textfile" / "rocefab_plan.prom").read_text(encoding="utf-8")
        lint = _promtool(folder, "check", "metrics", stdin=series)
        assert lint.returncode == 0, lint.stdout + lint.stderr


def test_every_alert_has_a_firing_and_a_silent_test() -> None:
    plan = example_plan("pod32")
    tests = _document(plan, "rules.test.yml")["tests"]
    for name in _alerts(plan):
        mine = [t for t in tests if t["alert_rule_test"][0]["alertname"] == name]
        assert sorted(bool(t["alert_rule_test"][0]["exp_alerts"]) for t in mine) == [False, True], name


def test_thresholds_are_the_seeds_by_default() -> None:
    alerts = _alerts(example_plan("lab"))
    for name in ("RocefabSwitchInputErrors", "RocefabSwitchOutputErrors", "RocefabHostPortErrors"):
        assert alerts[name]["expr"].count("> 0.001)") == 1, alerts[name]["expr"]
    assert "> 0.01)" in alerts["RocefabRoceRetransmits"]["expr"]
    assert alerts["RocefabLinkDown"]["for"] == "2m"


OVERRIDE = {"error_rate_percent": 0.05, "retransmit_rate_percent": 0.2, "ecn_mark_percent": 12.5,
            "pause_surge_factor": 4, "pause_surge_floor_per_s": 1000, "pause_baseline_s": 1800,
            "rate_window_s": 600, "for_s": 0}


def _overridden(tmp_path: Path) -> FabricPlan:
    intent = yaml.safe_load((INTENTS / "lab.yaml").read_text(encoding="utf-8"))
    intent["monitoring"] = copy.deepcopy(OVERRIDE)
    path = tmp_path / "override.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    return _plan_of(path)


def test_the_intents_thresholds_reach_the_rules(tmp_path: Path) -> None:
    alerts = _alerts(_overridden(tmp_path))
    assert "> 0.05)" in alerts["RocefabSwitchInputErrors"]["expr"]
    assert "[10m]" in alerts["RocefabSwitchInputErrors"]["expr"]
    assert "> 0.2)" in alerts["RocefabRoceRetransmits"]["expr"]
    assert "> 12.5)" in alerts["RocefabEcnMarks"]["expr"]
    surge = alerts["RocefabNicPauseSurgeReceivedPrio3"]["expr"]
    assert "> 4 * avg_over_time(" in surge and "[30m] offset 15m" in surge and "> 1000)" in surge
    assert all("for" not in a for a in alerts.values())


@needs_promtool
def test_the_rendered_tests_follow_an_override(tmp_path: Path) -> None:
    folder = _write(_overridden(tmp_path), tmp_path / "out")
    result = _promtool(folder, "test", "rules", "rules.test.yml")
    assert result.returncode == 0, result.stdout[-3000:]


@needs_promtool
@pytest.mark.parametrize(("alert", "right", "wrong"), [
    # a threshold a hundred times too lax: the firing test no longer fires
    ("RocefabSwitchInputErrors", "> 0.001)", "> 0.1)"),
    # the plan join dropped: the alert loses the far end and tier it must carry
    ("RocefabRoceRetransmits", " * on (device, port) group_left (peer, peer_port, tier, pod, rail) rocefab_port_info",
     ""),
    # "any drop" turned into "more than a few"
    ("RocefabLosslessQueueDrops", "> 0)", "> 1000)"),
    # a pause surge judged against a baseline that includes the surge itself
    ("RocefabSwitchPauseSurgeReceivedPrio3", "offset 12m", "offset 1m"),
])
def test_the_rendered_tests_catch_a_wrong_rule(alert: str, right: str, wrong: str, tmp_path: Path) -> None:
    folder = _write(example_plan("lab"), tmp_path)
    rules = yaml.safe_load((folder / "rules.yml").read_text(encoding="utf-8"))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == alert:
                expr = rule["expr"]
                assert expr.count(right) == 1, expr
                rule["expr"] = expr.replace(right, wrong)
    (folder / "rules.yml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    assert _promtool(folder, "check", "rules", "rules.yml").returncode == 0
    # that alert's two tests only (promtool 2.42 has no --run): the firing one fails, the silent one holds
    tests = yaml.safe_load((folder / "rules.test.yml").read_text(encoding="utf-8"))
    tests["tests"] = [t for t in tests["tests"] if t["alert_rule_test"][0]["alertname"] == alert]
    (folder / "mine.test.yml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    result = _promtool(folder, "test", "rules", "mine.test.yml")
    shown = result.stdout + result.stderr
    assert result.returncode == 1 and f"name: {alert} fires," in shown, shown[-2000:]
    assert f"name: {alert} stays silent," not in shown, shown[-2000:]


def test_every_alert_names_a_doctor_diagnosis() -> None:
    codes = {r.code for r in RULES} | {OVERSUBSCRIBED.code, RETRANSMISSIONS.code}
    for name, alert in _alerts(example_plan("pod32")).items():
        assert alert["labels"]["doctor"] in codes, name
        assert f"(diagnosis {alert['labels']['doctor']})" in alert["annotations"]["runbook"]
        assert alert["labels"]["severity"] in ("warning", "critical")


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_sample_the_tests_are_built_on_is_the_whole_plans(name: str) -> None:
    """The promtool tests take their ports, sessions and NICs from a few devices' series; built on every series
    of the plan they come out the same."""
    plan = example_plan(name)
    assert cases(plan) == cases(plan, list(plan_series(plan)))


@pytest.mark.parametrize("name", ["pod32", "cluster1024-rail"])
def test_the_plan_series_describe_every_planned_port_once(name: str) -> None:
    plan = example_plan(name)
    info = [dict(s.labels) for s in plan_series(plan) if s.name == PORT_INFO]
    keys = [(i["device"], i["port"]) for i in info]
    assert len(keys) == len(set(keys))
    expected = {(sw.name, p.name) for sw in plan.switches for p in sw.ports}
    for h in plan.hosts:
        expected |= {(h.name, d) for d in h.rdma_devices}
        expected |= {(h.name, m.netdev) for b in h.bonds for m in b.members} | {(h.name, n.netdev) for n in h.nics}
    assert set(keys) == expected
    peers = {(sw.name, p.name): (p.peer.device, p.peer.port) for sw in plan.switches for p in sw.ports}
    for i in info:
        if i["tier"] != "host":
            assert (i["peer"], i["peer_port"]) == peers[(i["device"], i["port"])]


def test_gnmic_subscribes_every_switch_where_its_config_serves_gnmi() -> None:
    plan = example_plan("pod32")
    gnmic = _document(plan, "gnmic.yml")
    assert set(gnmic["targets"]) == {sw.name for sw in plan.switches}
    for sw in plan.switches:
        spec = unit(sw.platform).spec
        assert spec is not None and sw.management is not None
        target = gnmic["targets"][sw.name]
        assert target["address"] == f"{sw.management.ipv4.split('/')[0]}:{spec.gnmi_port}"
        assert target.get("skip-verify", False) is spec.gnmi_tls and target.get("insecure", False) is not spec.gnmi_tls
        assert set(target["subscriptions"]) <= set(gnmic["subscriptions"])
        assert target["event-tags"] == {"device": sw.name}
    assert set(gnmic["outputs"]["prometheus"]["event-processors"]) == set(gnmic["processors"])


def test_without_management_addressing_gnmic_reaches_the_loopback() -> None:
    plan = example_plan("lab")
    targets = _document(plan, "gnmic.yml")["targets"]
    for sw in plan.switches:
        assert targets[sw.name]["address"].split(":")[0] == sw.loopback_ipv4.split("/")[0]


def test_no_credential_is_written() -> None:
    for _path, _kind, content in render_monitoring(example_plan("pod32")):
        assert "password" not in text_of(content).lower().replace("gnmic_password=...", "")


def test_prometheus_scrapes_every_host_and_relabels_to_device_and_port() -> None:
    plan = example_plan("pod32")
    config = _document(plan, "prometheus.yml")
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    hosts = {c["labels"]["rocefab_host"] for c in jobs["rocefab-hosts"]["static_configs"]}
    assert hosts == {h.name for h in plan.hosts}
    assert jobs["rocefab-plan"]["honor_labels"] is True
    renamed = {r.get("target_label") for r in jobs["rocefab-switches"]["metric_relabel_configs"]}
    assert {"port", "neighbor", "queue", "priority"} <= renamed


def _dashboard(plan: FabricPlan) -> dict[str, Any]:
    import json

    text = next(text_of(content) for path, _k, content in render_monitoring(plan)
                if path.endswith("grafana-dashboard.json"))
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@pytest.mark.parametrize("name", ["pod32", "cluster1024-rail"])
def test_the_dashboard_is_a_grafana_dashboard_by_the_sdks_own_model(name: str) -> None:
    """Decoded by the Foundation SDK's dashboard model (the schema it builds from) and encoded back with nothing
    lost (the model only adds the panels' empty plugin defaults)."""
    import json

    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models.dashboard import Dashboard as DashboardModel

    register_default_plugins()
    board = _dashboard(example_plan(name))
    again = json.loads(JSONEncoder(sort_keys=True).encode(DashboardModel.from_json(board)))
    _assert_within(board, again, "")
    panels = [p for p in board["panels"] if p["type"] != "row"]
    assert {p["type"] for p in panels} == {"timeseries", "stat"}
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"] and panel["gridPos"]["w"] > 0
    variables = {v["name"] for v in board["templating"]["list"]}
    assert variables == {"datasource", "switch", "host", "rail" if name.endswith("rail") else "pod"}


def _assert_within(mine: Any, theirs: Any, path: str) -> None:
    """Everything in `mine` is in `theirs`, equal."""
    if isinstance(mine, dict):
        assert isinstance(theirs, dict), path
        for key, value in mine.items():
            assert key in theirs, f"{path}/{key} lost"
            _assert_within(value, theirs[key], f"{path}/{key}")
    elif isinstance(mine, list):
        assert isinstance(theirs, list) and len(mine) == len(theirs), path
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            _assert_within(a, b, f"{path}[{i}]")
    else:
        assert mine == theirs, f"{path}: {mine!r} != {theirs!r}"


GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__range": "1h", "$switch": "leaf1", "$host": "gpu001",
                     "$group": "1"}


@needs_promtool
def test_every_dashboard_query_is_promql(tmp_path: Path) -> None:
    """Each panel query, its Grafana variables given values, as a recording rule: promtool parses it."""
    exprs = []
    for panel in _dashboard(example_plan("pod32"))["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            exprs.append(expr)
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"dashboard:query{i}", "expr": e}
                                                        for i, e in enumerate(exprs)]}]}
    (tmp_path / "queries.yml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    result = _promtool(tmp_path, "check", "rules", "queries.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(exprs) >= 15


@needs_promtool
def test_a_fabric_without_hosts_gets_no_host_alerts_and_its_tests_pass(tmp_path: Path) -> None:
    intent = yaml.safe_load((INTENTS / "lab.yaml").read_text(encoding="utf-8"))
    for pair in intent["topology"]["leaf_pairs"]:
        pair["hosts"] = 0
        pair.pop("host_names", None)
    path = tmp_path / "no-hosts.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    plan = _plan_of(path)
    assert not plan.hosts
    alerts = _alerts(plan)
    assert "RocefabSwitchInputErrors" in alerts and not any(a["labels"]["doctor"] == "rdma-inactive"
                                                            for a in alerts.values())
    folder = _write(plan, tmp_path / "out")
    for args in (("check", "rules", "rules.yml"), ("test", "rules", "rules.test.yml")):
        result = _promtool(folder, *args)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


@pytest.mark.parametrize("source", ["lab", "pod32", "tor128-3tier", "mixed"])
def test_gnmic_connects_where_each_rendered_config_listens(source: str) -> None:
    """The collector and the switches agree: gnmic's target for each switch is the address and port its own
    rendered config serves gNMI on (NVUE names both; EOS and NX-OS render the server and keep their default
    port, so no port line may say otherwise)."""
    from rocefab.renderers.render import render_fabric

    plan = _plan_of(MIXED) if source == "mixed" else example_plan(source)
    files = {f.path: f.content for f in render_fabric(plan)}
    targets = _document(plan, "gnmic.yml")["targets"]
    for sw in plan.switches:
        spec = unit(sw.platform).spec
        assert spec is not None
        host, port = targets[sw.name]["address"].rsplit(":", 1)
        nvue = files.get(f"switches/{sw.name}.nvue.yaml")
        if nvue is not None:
            server = next(doc for doc in yaml.safe_load_all(nvue) if doc)
            found = next(item["set"]["system"]["gnmi-server"] for item in server
                         if "system" in item.get("set", {}) and "gnmi-server" in item["set"]["system"])
            assert found["state"] == "enabled" and str(found["port"]) == port and host in found["listening-address"]
        else:
            config = files[f"switches/{sw.name}.cfg"]
            assert "management api gnmi" in config or "feature grpc" in config, sw.name
            assert int(port) == spec.gnmi_port
            assert not any(line.strip().startswith(("grpc port", "port ")) and line.split()[-1] != port
                           for line in config.splitlines()), sw.name


def _shard_files(plan: FabricPlan, limit: int) -> dict[str, str]:
    return {path: text_of(content) for path, _k, content in render_monitoring(plan, limit)}


def _series_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("name", ["pod32", "cluster1024-rail", "tor128-3tier"])
def test_the_textfile_holds_each_series_with_its_non_empty_labels(name: str) -> None:
    """Each line of the textfile is one of plan_series' series with the labels whose value is not empty, as
    Prometheus stores it (an empty label is no label), and no line says a label empty."""
    plan = example_plan(name)
    lines = _series_lines(_shard_files(plan, 10**9)["monitoring/textfile/rocefab_plan.prom"])
    line = re.compile(r'^(\w+)\{((?:\w+="[^"\\]*",)*\w+="[^"\\]*")\} (\d+)$')
    read = []
    for text in lines:
        found = line.match(text)
        assert found, text
        labels = tuple(tuple(pair.split("=", 1)) for pair in found.group(2).split(","))
        assert all(value != '""' for _, value in labels), text
        read.append((found.group(1), tuple((k, v.strip('"')) for k, v in labels), int(found.group(3))))
    expected = [(s.name, tuple((k, v) for k, v in s.labels if v != ""), s.value) for s in plan_series(plan)]
    assert read == expected
    assert any(len(labels) < 8 for n, labels, _ in read if n == PORT_INFO), "some port has no rail or pod"


def test_above_the_limit_each_shard_holds_whole_devices_and_collects_only_them() -> None:
    """cluster1024-rail's 90,432 plan series at a limit of 20,000: five shards, each device's series in exactly
    one, none above the limit, together the same series as the one textfile; each shard's Prometheus scrapes the
    node_exporters of its own hosts and its gnmic subscribes to its own switches."""
    plan = example_plan("cluster1024-rail")
    whole = _series_lines(_shard_files(plan, 10**9)["monitoring/textfile/rocefab_plan.prom"])
    files = _shard_files(plan, 20_000)
    assert "monitoring/prometheus.yml" not in files and "monitoring/textfile/rocefab_plan.prom" not in files
    index = yaml.safe_load(files["monitoring/shards.yml"])["shards"]
    assert [s["shard"] for s in index] == ["01", "02", "03", "04", "05"]
    seen: list[str] = []
    for entry in index:
        folder = f"monitoring/shards/{entry['shard']}"
        series = _series_lines(files[f"{folder}/textfile/rocefab_plan.prom"])
        assert len(series) == entry["series"] <= 20_000
        devices = {line.split('device="', 1)[1].split('"', 1)[0] for line in series}
        targets = set(yaml.safe_load(files[f"{folder}/gnmic.yml"])["targets"])
        scraped = {t["labels"]["rocefab_host"] for job in yaml.safe_load(files[f"{folder}/prometheus.yml"])[
            "scrape_configs"] if job["job_name"] == "rocefab-hosts" for t in job["static_configs"]}
        assert devices == targets | scraped, folder
        assert files[f"{folder}/rules.yml"] == files["monitoring/rules.yml"]
        seen += series
    assert sorted(seen) == sorted(whole), "the shards hold the plan's series, each once"


@needs_promtool
def test_promtool_accepts_every_shard(tmp_path: Path) -> None:
    plan = example_plan("cluster1024-rail")
    for path, text in _shard_files(plan, 20_000).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    shards = sorted((tmp_path / "monitoring" / "shards").iterdir())
    assert len(shards) == 5
    for folder in shards:
        for args in (("check", "rules", "rules.yml"), ("check", "config", "prometheus.yml")):
            result = _promtool(folder, *args)
            assert result.returncode == 0, (folder.name, args, result.stdout[-2000:], result.stderr[-2000:])
        lint = _promtool(folder, "check", "metrics",
                         stdin=(folder / "textfile" / "rocefab_plan.prom").read_text(encoding="utf-8"))
        assert lint.returncode == 0, (folder.name, lint.stdout[-2000:] + lint.stderr[-2000:])


def _odd_values(plan: FabricPlan) -> FabricPlan:
    """`plan` with label values the textfile must escape or leave out on a switch and on a host: a port name
    with a quote and a backslash, a BGP session with neither address nor interface, a NIC's netdev with a line
    break and a NIC whose switch port is not named."""
    sw = next(s for s in plan.switches if s.ports and s.bgp.neighbors)
    port, neighbor = sw.ports[0], sw.bgp.neighbors[0]
    odd_sw = replace(sw, ports=(replace(port, name='swp"1\\x'), *sw.ports[1:]),
                     bgp=replace(sw.bgp, neighbors=(replace(neighbor, address=None, interface=None),
                                                    *sw.bgp.neighbors[1:])))
    switches = tuple(odd_sw if s is sw else s for s in plan.switches)
    host = next((h for h in plan.hosts if h.nics), None)
    if host is None:
        return replace(plan, switches=switches)
    nic = host.nics[0]
    odd_host = replace(host, nics=(replace(nic, netdev="en\np0", port=""), *host.nics[1:]))
    return replace(plan, switches=switches, hosts=tuple(odd_host if h is host else h for h in plan.hosts))


@pytest.mark.parametrize("name", ["cluster1024-rail", "tor128-3tier"])
def test_the_textfile_prints_each_series_as_its_line_does_odd_values_too(name: str) -> None:
    """The textfile, printed a device at a time, is `_line` of each of plan_series' series: on the plan as it
    is, and with values that need escaping or leaving out, which those devices' lines print one by one."""
    for plan in (example_plan(name), _odd_values(example_plan(name))):
        out: list[str] = []
        write_plan_series(plan, [], out.append)
        assert _series_lines("".join(out)) == [_line(s.name, s.values, s.value) for s in plan_series(plan)]
    assert 'port="swp\\"1\\\\x"' in "".join(out)
