"""`rocefab what-if`: figures computed by hand for pod32 (4 leaf pairs, 2 spines, 8 uplinks from each leaf to
each spine, 8 hosts per pair with 2 bonds each: 16 host ports of 400G and 16 uplinks of 400G per leaf) and
cluster1024-rail (128 leaves, 16 per rail, 64 spines, one 400G uplink from each leaf to each spine, 64 rail NICs
per leaf); the incremental evaluation checked against a from-scratch recomputation on every example."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import example_plan

from rocefab.renderers.failure_impact import FabricIndex, FailureSpecError, Impact, SwitchImpact, evaluate
from rocefab.renderers.plan import FabricPlan, LinkKind

ROOT = Path(__file__).resolve().parents[1]


@cache
def index_of(name: str) -> FabricIndex:
    return FabricIndex(example_plan(name))


def what_if(name: str, *specs: str) -> Impact:
    index = index_of(name)
    devices, links = index.resolve(specs)
    return evaluate(index, devices, links)


def by_name(impact: Impact) -> dict[str, SwitchImpact]:
    return {s.name: s for s in impact.switches}


def test_pod32_one_spine_fails_halves_every_leaf_and_flags_a_storm_risk() -> None:
    impact = what_if("pod32", "spine1")
    assert [s.name for s in impact.switches] == [f"rack{r}-{x}" for r in range(1, 5) for x in "ab"]
    assert impact.unchanged_switches == 1  # spine2: its links to every leaf are all there
    for s in impact.switches:
        assert s.ecmp_up == (16, 8) and s.uppers == (2, 1)
        assert s.oversubscription == (1.0, 2.0)  # 16 x 400G of hosts over 8 x 400G of uplinks
        assert s.pfc_storm_risk, "2:1 beyond the plan with one spine left (fewer than four)"
    assert impact.hosts == ()


def test_pod32_one_leaf_fails_its_hosts_keep_each_bond_on_one_member() -> None:
    impact = what_if("pod32", "rack1-a")
    switches = by_name(impact)
    assert set(switches) == {"spine1", "spine2", "rack1-b"}
    for spine in ("spine1", "spine2"):
        s = switches[spine]
        assert s.lowers_lost == ("rack1-a",) and s.ecmp_down_min == (8, 8)
    partner = switches["rack1-b"]
    assert partner.peer_lost and partner.ecmp_up == (16, 16)
    assert impact.hosts_cut_off == () and impact.hosts_degraded == tuple(f"gpu{i:03}" for i in range(1, 9))
    assert {(h.path, h.paths) for h in impact.hosts} == {("bond0", (2, 1)), ("bond1", (2, 1))}
    assert len(impact.hosts) == 16


def test_pod32_one_uplink_fails() -> None:
    impact = what_if("pod32", "rack1-a:Ethernet47/1")
    assert impact.failed_links == ("rack1-a:Ethernet47/1 - spine1:Ethernet1/1",)
    switches = by_name(impact)
    assert switches["spine1"].ecmp_down_min == (8, 7)
    assert switches["rack1-a"].ecmp_up == (16, 15)
    assert switches["rack1-a"].oversubscription == (1.0, round(16 / 15, 3))
    assert what_if("pod32", "spine1:Ethernet1/1").failed_links == impact.failed_links, "either end names it"


def test_pod32_both_leaves_of_a_pair_cut_their_hosts_off() -> None:
    impact = what_if("pod32", "rack1-a", "rack1-b")
    assert impact.hosts_cut_off == tuple(f"gpu{i:03}" for i in range(1, 9))
    assert {h.paths for h in impact.hosts} == {(2, 0)}


def test_pod32_a_leaf_cut_from_the_spines_carries_its_hosts_over_the_peer_link_until_that_goes_too() -> None:
    index = index_of("pod32")
    uplinks = [f"rack1-a:{p.name}" for p in index.plan.switch("rack1-a").ports if p.role.value == "uplink"]
    assert len(uplinks) == 16
    impact = what_if("pod32", *uplinks)
    leaf = by_name(impact)["rack1-a"]
    assert leaf.cut_off and leaf.ecmp_up == (16, 0) and leaf.oversubscription == (1.0, None)
    assert impact.hosts == (), "the MLAG peer carries the bonds' traffic across the peer link"
    impact = what_if("pod32", *uplinks, "rack1-a:Ethernet63/1", "rack1-a:Ethernet64/1")
    assert impact.hosts_cut_off == () and len(impact.hosts_degraded) == 8
    assert by_name(impact)["rack1-b"].peer_lost


def test_pod32_both_spines_cut_every_host_off() -> None:
    impact = what_if("pod32", "spine1", "spine2")
    assert len(impact.hosts_cut_off) == 32 and all(s.cut_off for s in impact.switches)


def test_rail_one_spine_fails_every_leaf_loses_one_of_64() -> None:
    impact = what_if("cluster1024-rail", "spine001")
    assert len(impact.switches) == 128 and impact.unchanged_switches == 63
    for s in impact.switches:
        assert s.ecmp_up == (64, 63) and s.uppers == (64, 63)
        assert s.oversubscription == (1.0, round(64 / 63, 3))
        assert not s.pfc_storm_risk, "63 spines left: more than four"
    assert impact.hosts == ()


def test_rail_one_leaf_fails_64_hosts_lose_rail_0() -> None:
    impact = what_if("cluster1024-rail", "leaf001")
    assert impact.rails_hit == {"rail 0": 64}
    assert impact.hosts_cut_off == tuple(f"gpu{i:03}" for i in range(1, 65))
    assert len(impact.switches) == 64 and all(s.lowers_lost == ("leaf001",) for s in impact.switches)
    assert all(s.ecmp_down_min == (1, 1) for s in impact.switches)


def test_rail_a_whole_rail_fails() -> None:
    impact = what_if("cluster1024-rail", "rail:0")
    assert len(impact.failed_devices) == 16 and impact.rails_hit == {"rail 0": 1024}
    assert all(len(s.lowers_lost) == 16 for s in impact.switches)


def test_three_tier_a_spine_cut_from_above_still_serves_its_pod() -> None:
    supers = [s.name for s in index_of("tor128-3tier").plan.switches if s.role.value == "superspine"]
    impact = what_if("tor128-3tier", *supers)
    leaves = [s for s in impact.switches if s.role == "leaf"]
    assert leaves and all(s.ecmp_up is not None and s.ecmp_up[1] == 0 and not s.cut_off for s in leaves)
    assert impact.hosts == (), "every leaf still reaches its pod's spines"


@pytest.mark.parametrize("spec", ["nope", "rack1-a:Ethernet99/9", "rail:9", "pod:x"])
def test_a_failure_that_names_nothing_is_refused(spec: str) -> None:
    with pytest.raises(FailureSpecError):
        index_of("pod32").resolve([spec])


# --- the incremental evaluation against a recomputation of the whole fabric ---


def _reference(plan: FabricPlan, devices: frozenset[str], links: frozenset[int]) -> dict[str, tuple[object, ...]]:
    """Every surviving switch's (ECMP up, uppers, oversubscription, cut off), recomputed from nothing."""
    role_rank = {"superspine": 0, "spine": 1, "leaf": 2}
    up: dict[str, list[tuple[int, str]]] = {s.name: [] for s in plan.switches}
    down_gbps = Counter[str]()
    for i, link in enumerate(plan.links):
        if link.kind is LinkKind.FABRIC:
            up[link.a.device].append((i, link.b.device))
            if link.a.device not in devices and i not in links:
                down_gbps[link.b.device] += link.speed_gbps
        elif link.kind is LinkKind.HOST and link.b.device not in devices and i not in links:
            down_gbps[link.a.device] += link.speed_gbps
    leads: dict[str, bool] = {}
    out: dict[str, tuple[object, ...]] = {}
    for s in sorted(plan.switches, key=lambda s: role_rank[s.role.value]):
        if s.name in devices:
            leads[s.name] = False
            continue
        live = [(i, u) for i, u in up[s.name] if i not in links and u not in devices]
        good = [(i, u) for i, u in live if leads[u]]
        leads[s.name] = not up[s.name] or bool(good)
        up_gbps = sum(plan.links[i].speed_gbps for i, _ in good)
        ratio = None if not up[s.name] or up_gbps == 0 else round(down_gbps[s.name] / up_gbps, 3)
        out[s.name] = (len(good) if up[s.name] else None, len({u for _, u in good}) if up[s.name] else None,
                       ratio, bool(up[s.name]) and not live)
    return out


def _compare(name: str, devices: frozenset[str], links: frozenset[int]) -> None:
    index = index_of(name)
    planned = _reference(index.plan, frozenset(), frozenset())
    expected = _reference(index.plan, devices, links)
    impact = evaluate(index, devices, links)
    seen = {s.name: (None if s.ecmp_up is None else s.ecmp_up[1], None if s.uppers is None else s.uppers[1],
                     s.oversubscription[1], s.cut_off) for s in impact.switches}
    for switch, figures in expected.items():
        assert seen.get(switch, planned[switch]) == figures, (name, sorted(devices), sorted(links), switch)


@pytest.mark.parametrize("name", ["pod32", "cluster1024-rail", "tor128-3tier", "lab"])
def test_every_single_switch_failure_agrees_with_a_recomputation(name: str) -> None:
    for switch in index_of(name).switches:
        _compare(name, frozenset({switch}), frozenset())


@pytest.mark.parametrize("name", ["pod32", "tor128-3tier"])
def test_random_failures_of_devices_and_links_agree_with_a_recomputation(name: str) -> None:
    index = index_of(name)
    fabric = [i for i, link in enumerate(index.plan.links) if link.kind is not LinkKind.HOST]
    chooser = random.Random(31)
    for _ in range(60):
        devices = frozenset(chooser.sample(sorted(index.switches), chooser.randint(0, 4)))
        links = frozenset(chooser.sample(fabric, chooser.randint(0, 40)))
        _compare(name, devices, links)


def test_the_command_prints_json_and_exits_1_on_a_storm_risk() -> None:
    done = subprocess.run([sys.executable, "-m", "rocefab", "what-if", str(ROOT / "intents" / "pod32.yaml"),
                           "--fail", "spine1", "--json"], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["failed"] == {"devices": ["spine1"], "links": []}
    assert document["summary"]["pfc_storm_risk"] == 8 and document["summary"]["worst_oversubscription"] == 2.0
    assert document["switches"][0]["ecmp_up"] == {"planned": 16, "now": 8}
    bad = subprocess.run([sys.executable, "-m", "rocefab", "what-if", str(ROOT / "intents" / "pod32.yaml"),
                          "--fail", "spine9"], capture_output=True, text=True, check=False, timeout=120)
    assert bad.returncode == 2 and "spine9: not a device" in bad.stderr and "Traceback" not in bad.stderr
    each = subprocess.run([sys.executable, "-m", "rocefab", "what-if", str(ROOT / "intents" / "pod32.yaml"),
                           "--each", "--json"], capture_output=True, text=True, check=False, timeout=120)
    rows = json.loads(each.stdout)["each"]
    assert len(rows) == 10 and each.returncode == 1
    assert {r["fails"]: r["hosts_degraded"] for r in rows}["rack1-a"] == 8
