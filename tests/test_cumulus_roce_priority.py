"""NVUE with RoCE off priority 3: NVIDIA's recipe (Cumulus 5.14 RoCE guide, "Change RoCE Configuration") keeps
`qos roce` and its lossless class 3, maps the RoCE priority onto class 3 and priority 3 onto class 0; CNPs keep
class 6 the same way. The verify reader reads such a switch back as planned, and validation says what the guide
leaves open (the ingress pool)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_verify_readers import QOS_CHECKS, healthy, read_qos

from rocefab.deploy.verify.checks import Verdict, switch_rows
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[1]


def plan_with(tmp: Path, roce: int, cnp: int) -> tuple[FabricPlan, list[str]]:
    text = (ROOT / "intents" / "pod32.yaml").read_text(encoding="utf-8")
    text = text.replace("roce: {dscp: 26, priority: 3}", f"roce: {{dscp: 26, priority: {roce}}}")
    text = text.replace("cnp: {dscp: 48, priority: 6}", f"cnp: {{dscp: 48, priority: {cnp}}}")
    assert f"priority: {roce}}}" in text
    intent = tmp / "pod.yaml"
    intent.write_text(text, encoding="utf-8")
    checked = check_file(intent, "pod")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan, [f.code for f in checked.findings]


def nvue(plan: FabricPlan) -> tuple[Switch, str, dict[str, Any]]:
    sw = next(s for s in plan.switches if s.platform == "cumulus" and s.role.value == "leaf")
    text = next(f.content for f in render_fabric(plan) if f.device == sw.name and f.path.endswith(".nvue.yaml"))
    return sw, text, yaml.safe_load(text)[0]["set"]["qos"]


@pytest.mark.parametrize(("roce", "cnp"), [(2, 6), (4, 6), (3, 5), (5, 3), (6, 2)])
def test_roce_and_cnp_land_on_the_profiles_classes(tmp_path: Path, roce: int, cnp: int) -> None:
    plan, codes = plan_with(tmp_path, roce, cnp)
    sw, text, qos = nvue(plan)
    assert qos["roce"] == {"enable": "on", "mode": "lossless"}
    mapping = {int(p): e["traffic-class"] for p, e in
               qos["egress-queue-mapping"]["default-global"]["switch-priority"].items()}
    profile = {p: (p if p in (3, 6) else 0) for p in range(8)}
    effective = profile | mapping
    assert effective[roce] == 3 and effective[cnp] == 6
    assert [p for p in range(8) if effective[p] == 3] == [roce] and [p for p in range(8) if effective[p] == 6] == [cnp]
    assert list(qos["pfc"]["default-global"]["switch-priority"]) == [str(roce)]
    assert list(qos["congestion-control"]["default-global"]["traffic-class"]) == ["3"]
    scheduler = qos["egress-scheduler"]["default-global"]["traffic-class"]
    assert scheduler["6"] == {"mode": "strict"} and {scheduler["0"]["mode"], scheduler["3"]["mode"]} == {"dwrr"}
    assert scheduler["0"]["bw-percent"] + scheduler["3"]["bw-percent"] <= 100
    assert ("roce-ingress-pool-unconfirmed" in codes) == (roce != 3)
    rows = [r for r in switch_rows(plan, sw, healthy(sw, read_qos(sw, text))) if r.check in QOS_CHECKS]
    assert [(r.check, r.observed) for r in rows if r.verdict is not Verdict.PASS] == []


def test_the_default_priorities_write_what_they_always_did(tmp_path: Path) -> None:
    plan, codes = plan_with(tmp_path, 3, 6)
    _, _, qos = nvue(plan)
    assert qos["egress-queue-mapping"]["default-global"]["switch-priority"] == {
        "3": {"traffic-class": 3}, "6": {"traffic-class": 6}}
    assert "roce-ingress-pool-unconfirmed" not in codes
