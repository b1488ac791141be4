"""QoS values that differ by platform or ASIC. ECN marking: unset in the intent, every switch marks with its ASIC
family's published profile (in the unit its vendor documents); set in the intent, one profile everywhere; each
profile names its source. PFC watchdog recovery: said where a NOS does not take the intent's time."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from rocefab.models.catalogue import ECN_PROFILES, MODELS, ecn_family
from rocefab.platforms.cumulus.config import nvue_document
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent


def plan_of(tmp_path: Path, ecn: dict[str, int] | None) -> FabricPlan:
    intent: dict[str, Any] = copy.deepcopy(yaml.safe_load((ROOT / "intents" / "pod32.yaml").read_text()))
    if ecn is not None:
        intent["qos"]["ecn"] = ecn
    path = tmp_path / "pod32.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan


def ecn_line(plan: FabricPlan, name: str) -> str:
    config = next(f.content for f in render_fabric(plan) if f.path == f"switches/{name}.cfg")
    return next(line.strip() for line in config.splitlines() if "random-detect" in line)


def test_every_model_has_a_sourced_profile() -> None:
    for model in MODELS.values():
        profile = ECN_PROFILES[ecn_family(model.asic)]
        assert profile.source and profile.min_threshold < profile.max_threshold and profile.unit in {"kbytes",
                                                                                                     "segments"}


def test_each_switch_marks_with_its_asic_familys_profile(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, None)
    families = set()
    for sw in plan.switches:
        profile = MODELS[sw.model].ecn_profile
        families.add(ecn_family(MODELS[sw.model].asic))
        assert sw.ecn is not None and (sw.ecn.min_threshold, sw.ecn.max_threshold, sw.ecn.unit,
                                       sw.ecn.max_mark_percent) == (profile.min_threshold, profile.max_threshold,
                                                                    profile.unit, profile.max_mark_percent)
    assert families == {"Spectrum", "CloudScale", "StrataXGS"}  # pod32 has all three
    assert ecn_line(plan, "spine1") == ("random-detect minimum-threshold 950 kbytes maximum-threshold 3000 kbytes "
                                        "drop-probability 7 weight 0 ecn")
    assert ecn_line(plan, "rack1-a") == ("random-detect ecn minimum-threshold 2000 segments maximum-threshold 10000 "
                                         "segments max-mark-probability 20 weight 0")
    congestion = nvue_document(plan, plan.switch("rack3-a"))["qos"]["congestion-control"]["default-global"]
    assert congestion["traffic-class"]["3"] == {"ecn": "enable", "max-threshold": 1_500_000,
                                                 "min-threshold": 150_000, "probability": 100, "red": "disable"}


def test_the_intents_profile_wins_on_every_switch(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, {"min_threshold_kbytes": 400, "max_threshold_kbytes": 2400, "max_mark_percent": 30})
    assert {(sw.ecn.min_threshold, sw.ecn.max_threshold, sw.ecn.unit, sw.ecn.max_mark_percent, sw.ecn.source)
            for sw in plan.switches if sw.ecn} == {(400, 2400, "kbytes", 30, "the intent")}
    assert ecn_line(plan, "rack1-a") == ("random-detect ecn minimum-threshold 400 kbytes maximum-threshold 2400 "
                                         "kbytes max-mark-probability 30 weight 0")
    assert "minimum-threshold 400 kbytes maximum-threshold 2400 kbytes drop-probability 30" in ecn_line(plan, "spine1")


def findings_of(tmp_path: Path, name: str, change: Any) -> dict[str, str]:
    intent: dict[str, Any] = copy.deepcopy(yaml.safe_load((ROOT / "intents" / f"{name}.yaml").read_text()))
    change(intent)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    return {f.code: f.severity.value for f in checked.findings}


def test_a_watchdog_recovery_time_no_nos_takes_is_said(tmp_path: Path) -> None:
    """NX-OS and NVUE restore a stormed queue on their own schedule: a note at the default, a warning when the
    intent asked for a recovery time, nothing where every switch takes it (EOS) or the watchdog is off."""
    def set_recovery(intent: dict[str, Any]) -> None:
        intent["qos"].setdefault("pfc", {})["watchdog"] = {"recovery_ms": 5000}

    def eos_only(intent: dict[str, Any]) -> None:
        intent["topology"]["spines"]["model"] = "DCS-7060X6-64PE"

    def off(intent: dict[str, Any]) -> None:
        intent["qos"].setdefault("pfc", {})["watchdog"] = {"enabled": False}

    code = "watchdog-recovery-not-rendered"
    assert findings_of(tmp_path, "pod32", lambda intent: None)[code] == "info"
    assert findings_of(tmp_path, "pod32", set_recovery)[code] == "warning"
    assert code not in findings_of(tmp_path, "lab", eos_only)
    assert code not in findings_of(tmp_path, "pod32", off)
