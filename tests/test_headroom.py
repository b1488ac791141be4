"""PFC headroom from the cabling plan: every link's length, the arithmetic in one place, and what each platform's
config says about it (NX-OS pause buffer over 100 m, Cumulus cable length, EOS a finding)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.models.media import REACH_M, Medium
from rocefab.platforms.cumulus.config import nvue_document
from rocefab.platforms.nxos.config import build as nxos_build
from rocefab.renderers.headroom import PROPAGATION_NS_PER_M, RESPONSE_NS, headroom
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent


def example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "intents" / f"{name}.yaml").read_text(encoding="utf-8"))
    return loaded


def plan_of(tmp_path: Path, intent: dict[str, Any]) -> tuple[FabricPlan, list[str]]:
    path = tmp_path / "intent.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan, [f.code for f in checked.findings]


@pytest.fixture(scope="module")
def tor128(tmp_path_factory: pytest.TempPathFactory) -> FabricPlan:
    return plan_of(tmp_path_factory.mktemp("tor128"), example("tor128-3tier"))[0]


# --- the arithmetic ---------------------------------------------------------------------------------------------


@given(st.sampled_from([100, 200, 400, 800]), st.integers(1, 500), st.integers(1500, 9216))
def test_headroom_is_the_bytes_in_flight_plus_two_frames(speed: int, cable: int, mtu: int) -> None:
    need = headroom(speed, cable, mtu)
    in_flight_bits = speed * (2 * cable * PROPAGATION_NS_PER_M + RESPONSE_NS)  # Gb/s x ns
    assert need.bytes == -(-in_flight_bits // 8) + 2 * mtu
    assert headroom(speed, cable + 1, mtu).bytes > need.bytes  # a longer cable always needs more
    assert need.formula == (f"{speed}G x ({2 * cable * PROPAGATION_NS_PER_M} ns cable round trip + {RESPONSE_NS} ns "
                            f"response) + 2 x {mtu} B")


def test_measured_headroom_replaces_the_estimate() -> None:
    need = headroom(400, 500, 9216, measured_bytes=123_456)
    assert (need.bytes, need.measured, need.formula) == (123_456, True, "123456 B measured (from the intent)")


def test_the_formula_stays_near_sonics_published_vectors() -> None:
    """sonic-swss#3235: Spectrum-3 400G / 300 m xoff 272,384 B; Spectrum-4 800G / 300 m 474,112 B."""
    assert abs(headroom(400, 300, 9216).bytes / 272_384 - 1) < 0.05
    assert 0 < headroom(800, 300, 9216).bytes / 474_112 - 1 < 0.10  # errs on the safe side


# --- cable lengths from the plan --------------------------------------------------------------------------------


def test_every_link_has_its_mediums_length(tor128: FabricPlan) -> None:
    for link in tor128.links:
        assert link.length_m == REACH_M[Medium(link.medium)]  # the defaults: each medium's reach
    media = {link.medium for link in tor128.links}
    assert media == {"copper", "multimode", "single-mode"}
    supers = {s.name for s in tor128.switches if s.role.value == "superspine"}
    long = [link for link in tor128.links if link.medium == "single-mode"]
    assert len(long) == 576 and all(link.b.device in supers for link in long)


def test_each_switch_is_sized_for_its_worst_port(tor128: FabricPlan) -> None:
    by_name = {s.name: s for s in tor128.switches}
    for sw in tor128.switches:
        ends = [link for link in tor128.links if sw.name in (link.a.device, link.b.device)]
        want = max(headroom(link.speed_gbps, link.length_m, sw.mtu_bytes).bytes for link in ends)
        assert sw.pfc_headroom is not None and sw.pfc_headroom.bytes == want
    assert by_name["spine001"].pfc_headroom is not None and by_name["spine001"].pfc_headroom.cable_m == 500


def test_class_lengths_and_measured_cables_override_the_reach(tmp_path: Path) -> None:
    intent = copy.deepcopy(example("lab"))
    intent["cabling"] = {"lengths": {"multimode_m": 30, "copper_m": 2},
                         "measured": [{"device": "spine1", "port": "swp1", "length_m": 45}]}
    plan, _ = plan_of(tmp_path, intent)
    lengths = {(link.a.device, link.a.port, link.b.port): link.length_m for link in plan.links}
    assert lengths[("leaf1-a", "Ethernet61/1", "swp1")] == 45  # measured, named by its far end
    assert lengths[("leaf1-a", "Ethernet62/1", "swp2")] == 30
    assert lengths[("leaf1-a", "Ethernet63/1", "Ethernet63/1")] == 2  # the copper peer link
    spine = plan.switch("spine1")
    assert spine.pfc_headroom is not None and spine.pfc_headroom.cable_m == 45
    assert nvue_document(plan, spine)["qos"]["pfc"]["default-global"]["cable-length"] == 45


def test_the_cabling_plan_shows_the_length_sized_for(tmp_path: Path) -> None:
    plan, _ = plan_of(tmp_path, example("lab"))
    csv = next(f.content for f in render_fabric(plan) if f.path == "cabling.csv").splitlines()
    assert csv[0].endswith(",media,max_length,length_m")
    assert all(row.rsplit(",", 1)[1] in {"3", "50"} for row in csv[1:])


# --- what each platform renders -----------------------------------------------------------------------------------


def test_nxos_spines_get_the_pause_buffer_cisco_requires_over_100_m(tor128: FabricPlan) -> None:
    spine = tor128.switch("spine001")
    need = spine.pfc_headroom
    assert need is not None and need.cable_m == 500 and need.bytes == 368_432
    buffers = nxos_build(tor128, spine, "test").qos.pause_buffers
    assert [(b.name, b.buffer_size - b.pause_threshold, b.pause_threshold, b.resume_threshold) for b in buffers] == [
        ("c-in-q3", need.bytes, need.bytes, need.bytes - 2 * 9216)]
    config = next(f.content for f in render_fabric(tor128) if f.path == "switches/spine001.cfg")
    assert ("policy-map type queuing ROCE-INGRESS\n  class type queuing c-in-q3\n"
            "    pause buffer-size 736864 pause-threshold 368432 resume-threshold 350000\n") in config
    assert "system qos\n  service-policy type network-qos ROCE-NETWORK\n  service-policy type queuing input " \
           "ROCE-INGRESS\n  service-policy type queuing output ROCE-EGRESS\n" in config


def test_short_cables_keep_the_nxos_default(tmp_path: Path) -> None:
    plan, _ = plan_of(tmp_path, example("pod32"))
    for sw in plan.switches:
        if sw.platform == "nxos":
            assert nxos_build(plan, sw, "test").qos.pause_buffers == ()
    assert all("ROCE-INGRESS" not in f.content for f in render_fabric(plan) if f.path.endswith(".cfg"))


def test_cumulus_gets_its_longest_cable(tor128: FabricPlan) -> None:
    for sw in tor128.switches:
        if sw.platform == "cumulus":
            qos = nvue_document(tor128, sw)["qos"]
            assert qos["pfc"]["default-global"]["cable-length"] == 500
            assert "cable-length" not in qos["roce"]  # not a documented 5.14 leaf


def test_eos_with_long_cables_is_a_finding(tmp_path: Path) -> None:
    intent = copy.deepcopy(example("tor128-3tier"))
    intent["topology"]["models"]["spine"] = "DCS-7060DX5-64S"
    plan, codes = plan_of(tmp_path, intent)
    assert "pfc-headroom-not-rendered" in codes
    assert all(sw.pfc_headroom is not None for sw in plan.switches if sw.platform == "eos")
    _, codes = plan_of(tmp_path, example("tor128-3tier"))  # EOS leaves at 50 m: nothing to say
    assert "pfc-headroom-not-rendered" not in codes


def test_plan_json_and_the_plan_view_show_the_arithmetic(tmp_path: Path, tor128: FabricPlan) -> None:
    from typer.testing import CliRunner

    from rocefab.cli import app

    result = CliRunner().invoke(app, ["plan", str(ROOT / "intents" / "tor128-3tier.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    switches = json.loads(result.stdout)["plan"]["switches"]
    spine = next(s for s in switches if s["name"] == "spine001")
    assert spine["pfc_headroom"] == {"speed_gbps": 400, "cable_m": 500, "mtu_bytes": 9216, "propagation_ns": 5000,
                                     "response_ns": 2000, "bytes": 368432, "measured": False}
    view = subprocess.run([sys.executable, "-m", "rocefab", "plan", str(ROOT / "intents" / "tor128-3tier.yaml")],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "240"}, check=True).stdout
    assert "400G x (5000 ns cable round trip + 2000 ns response) + 2 x 9216 B │" in view and "368,432 B" in view
    assert "pause buffer-size 736864 B, pause at 368432 B" in view
    assert "cable-length 500 m" in view


@settings(max_examples=5, deadline=None)
@given(st.integers(101, 500), st.integers(1, 50))
def test_every_platform_sizes_for_the_lengths_the_intent_gives(tmp_path_factory: pytest.TempPathFactory,
                                                                single_mode: int, multimode: int) -> None:
    """For any class lengths: NX-OS's pause buffer holds exactly the formula's headroom above its pause point
    for the switch's worst port, Cumulus gets the switch's longest cable, EOS stays within 100 m silently."""
    intent = copy.deepcopy(example("tor128-3tier"))
    intent["cabling"] = {"lengths": {"single_mode_m": single_mode, "multimode_m": multimode}}
    plan, codes = plan_of(tmp_path_factory.mktemp("lengths"), intent)
    assert "pfc-headroom-not-rendered" not in codes
    for sw in plan.switches:
        ends = [link for link in plan.links if sw.name in (link.a.device, link.b.device)]
        longest = max(link.length_m for link in ends)
        need = max((headroom(link.speed_gbps, link.length_m, sw.mtu_bytes) for link in ends), key=lambda h: h.bytes)
        if sw.platform == "nxos":
            (buffer,) = nxos_build(plan, sw, "test").qos.pause_buffers  # spines: single-mode, > 100 m
            assert buffer.buffer_size - buffer.pause_threshold == need.bytes
        elif sw.platform == "cumulus":
            assert nvue_document(plan, sw)["qos"]["pfc"]["default-global"]["cable-length"] == longest == single_mode


def test_a_nos_sizing_headroom_itself_gets_the_longest_cable_not_the_neediest_ports(tmp_path: Path) -> None:
    """pod32's Cumulus leaves: the 800G copper peer link needs the most bytes (3 m), the 400G uplinks are the
    longest cables (50 m); switchd sizes each port from the profile's one cable length, so that must be 50."""
    plan, _ = plan_of(tmp_path, example("pod32"))
    for sw in plan.switches:
        ends = [link for link in plan.links if sw.name in (link.a.device, link.b.device)]
        assert sw.longest_cable_m == max(link.length_m for link in ends)
        if sw.platform == "cumulus":
            assert sw.pfc_headroom is not None and sw.pfc_headroom.cable_m == 3 and sw.pfc_headroom.speed_gbps == 800
            assert nvue_document(plan, sw)["qos"]["pfc"]["default-global"]["cable-length"] == 50
