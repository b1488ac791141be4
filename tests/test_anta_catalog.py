"""The rendered ANTA catalog, loaded by ANTA's own catalog parser: every EOS switch has its tests, tagged with its
name, holding the plan's ports, speeds, MTU, LLDP neighbours and BGP peers; other platforms get none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anta.catalog import AntaCatalog

from rocefab.renderers.anta_catalog import render_anta_catalog
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan

ROOT = Path(__file__).resolve().parents[1]


def plan_of(name: str) -> FabricPlan:
    checked = check_file(ROOT / "intents" / f"{name}.yaml", name)
    assert checked.plan is not None
    return checked.plan


@pytest.mark.parametrize("name", ["lab", "pod32"])
def test_anta_parses_the_catalog_and_each_eos_switch_has_its_tests(name: str, tmp_path: Path) -> None:
    plan = plan_of(name)
    text = render_anta_catalog(plan)
    assert text is not None
    path = tmp_path / "catalog.yml"
    path.write_text(text, encoding="utf-8")
    catalog = AntaCatalog.parse(path)
    catalog.build_indexes()
    eos = [sw for sw in plan.switches if sw.platform == "eos"]
    assert eos
    for sw in eos:
        tests: dict[str, Any] = {t.test.__name__: t.inputs for t in catalog.get_tests_by_tags({sw.name})}
        assert {"VerifyInterfacesStatus", "VerifyInterfacesSpeed", "VerifyL3MTU", "VerifyLLDPNeighbors",
                "VerifyBGPPeerSession", "VerifyMlagStatus"} <= set(tests), sw.name
        status = {str(i.name) for i in tests["VerifyInterfacesStatus"].interfaces}
        assert {p.name for p in sw.ports} | {lag.name for lag in sw.lags} == status
        speeds = {str(i.name): i.speed for i in tests["VerifyInterfacesSpeed"].interfaces}
        assert speeds == {p.name: p.speed_gbps for p in sw.ports}
        assert tests["VerifyL3MTU"].mtu == sw.mtu_bytes
        lldp = {(str(n.port), n.neighbor_device, n.neighbor_port) for n in tests["VerifyLLDPNeighbors"].neighbors}
        hosts = {h.name for h in plan.hosts}
        assert lldp == {(p.name, p.peer.device, p.peer.port) for p in sw.ports if p.peer.device not in hosts}
        peers = tests["VerifyBGPPeerSession"].bgp_peers
        assert len(peers) == len(sw.bgp.neighbors)
    others = {sw.name for sw in plan.switches if sw.platform != "eos"}
    assert not {tag for t in catalog.tests for tag in (t.inputs.filters.tags or set())} & others


def test_no_catalog_without_eos_switches() -> None:
    checked = check_file(ROOT / "tests" / "lab" / "intents" / "mixed.yaml", "mixed")  # NX-OS and Cumulus only
    assert checked.plan is not None and not any(sw.platform == "eos" for sw in checked.plan.switches)
    assert render_anta_catalog(checked.plan) is None


@pytest.mark.parametrize("priority", [3, 4, 1])
def test_the_lossless_queue_drop_test_follows_the_roce_priority(priority: int, tmp_path: Path) -> None:
    """Whatever priority the intent gives RoCE, ANTA's queue-drop test watches that traffic class (EOS queues
    priority p in class p) on every planned port of every EOS switch."""
    text = (ROOT / "intents" / "pod32.yaml").read_text(encoding="utf-8")
    intent = tmp_path / "pod.yaml"
    intent.write_text(text.replace("roce: {dscp: 26, priority: 3}", f"roce: {{dscp: 26, priority: {priority}}}"),
                      encoding="utf-8")
    checked = check_file(intent, "pod")
    assert checked.plan is not None and checked.plan.qos.roce_priority == priority
    path = tmp_path / "catalog.yml"
    path.write_text(render_anta_catalog(checked.plan) or "", encoding="utf-8")
    catalog = AntaCatalog.parse(path)
    catalog.build_indexes()
    for sw in (s for s in checked.plan.switches if s.platform == "eos"):
        drops = [t.inputs for t in catalog.get_tests_by_tags({sw.name})
                 if t.test.__name__ == "VerifyInterfacesEgressQueueDrops"]
        assert len(drops) == 1
        assert drops[0].traffic_classes == [f"TC{priority}"] and drops[0].queue_types == ["unicast"]
        assert {str(i) for i in drops[0].interfaces or []} == {p.name for p in sw.ports}
