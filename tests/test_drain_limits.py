"""What may be drained together (deploy/drain_limits.py), from the plan's redundancy as what-if computes it."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import example_plan

from rocefab.deploy.drain_limits import drain_plan, drain_steps
from rocefab.platforms.disruption import Disruption
from rocefab.renderers.failure_impact import FabricIndex, evaluate

ROOT = Path(__file__).resolve().parents[1]


@cache
def index_of(name: str) -> FabricIndex:
    return FabricIndex(example_plan(name))


def test_the_only_spine_of_the_lab_is_never_drained_and_the_pair_goes_one_leaf_at_a_time() -> None:
    plan = drain_steps(index_of("lab"), ["spine1", "leaf1-a", "leaf1-b"])
    assert plan.refused == {"spine1": "draining it leaves leaf1-a, leaf1-b without an uplink"}
    assert [s.devices for s in plan.steps] == [("leaf1-a",), ("leaf1-b",)]


def test_pod32_one_spine_at_a_time_and_never_both_leaves_of_a_pair() -> None:
    index = index_of("pod32")
    plan = drain_steps(index, list(index.switches))
    assert plan.refused == {}
    assert [s.devices for s in plan.steps] == [
        ("spine1",), ("spine2",), ("rack1-a", "rack2-a", "rack3-a", "rack4-a"),
        ("rack1-b", "rack2-b", "rack3-b", "rack4-b")]


def test_rail_leaves_go_one_at_a_time_and_name_the_nodes_to_drain_in_the_scheduler() -> None:
    index = index_of("cluster1024-rail")
    plan = drain_steps(index, ["leaf001", "leaf017", "spine001", "spine002"])
    # a leaf and a spine are cabled to each other: never in one step; two spines are an eighth of 64 at most
    assert [s.devices for s in plan.steps] == [("leaf001",), ("leaf017",), ("spine001", "spine002")]
    spines = drain_steps(index, [f"spine{i:03}" for i in range(1, 65)])
    assert [len(s.devices) for s in spines.steps] == [8] * 8, "an eighth of a leaf's 64 spines at a time"
    assert len(drain_steps(index, [f"spine{i:03}" for i in range(1, 65)], upper_share=0).steps) == 64
    assert plan.steps[0].nodes_losing_a_rail == tuple(f"gpu{i:03}" for i in range(1, 65))
    together = drain_steps(index, ["leaf001", "leaf017"], rail_leaves_at_once=2)
    assert len(together.steps) == 2, "leaf001 and leaf017 serve the same nodes (rails 0 and 1): never together"
    apart = drain_steps(index, ["leaf001", "leaf002"], rail_leaves_at_once=2)
    assert [s.devices for s in apart.steps] == [("leaf001", "leaf002")], "different nodes: together when allowed"


@pytest.mark.parametrize(("name", "rail_leaves"), [("pod32", 1), ("cluster1024-rail", 1), ("cluster1024-rail", 8),
                                                  ("tor128-3tier", 1)])
def test_every_step_of_a_whole_fabric_keeps_the_rules_when_evaluated_as_a_whole(name: str, rail_leaves: int) -> None:
    index = index_of(name)
    plan = drain_steps(index, list(index.switches), rail_leaves_at_once=rail_leaves)
    drained = [d for s in plan.steps for d in s.devices]
    assert sorted(drained + list(plan.refused)) == sorted(index.switches) and len(set(drained)) == len(drained)
    for step in plan.steps:
        impact = evaluate(index, frozenset(step.devices), frozenset())
        lost = Counter(h.host for h in impact.hosts if h.paths[1] == 0)
        assert all(n <= 1 for n in lost.values()), step.devices
        assert not [h for h in impact.hosts if h.paths[1] == 0 and not h.path.startswith("rail ")], step.devices
        assert all(s.uppers is None or s.uppers[0] - s.uppers[1] <= max(1, s.uppers[0] // 8)
                   for s in impact.switches), step.devices
        assert not [s for s in impact.switches if s.cut_off and index.hosts_of_switch.get(s.name)], step.devices


def test_more_rail_leaves_at_once_means_fewer_steps_and_still_one_rail_per_node() -> None:
    """cluster1024-rail's 128 rail leaves: one per step by default; eight at once (one of each of eight rail blocks)
    take an eighth of the steps, and each node still loses at most one rail NIC per step."""
    plan = example_plan("cluster1024-rail")
    leaves = [s.name for s in plan.switches if s.rail is not None]
    one, eight = drain_plan(plan, dict.fromkeys(leaves, Disruption.QOS_REPROGRAM)), \
        drain_plan(plan, dict.fromkeys(leaves, Disruption.QOS_REPROGRAM), rail_leaves_at_once=8)
    assert len(one.steps) == len(leaves) == 128 and len(eight.steps) == 16
    for step in eight.steps:
        nodes = step.nodes_losing_a_rail
        # each leaf serves 64 nodes and the eight are of eight blocks: 512 distinct nodes lose one rail each
        assert len(step.devices) == 8 and len(nodes) == len(set(nodes)) == 8 * 64, (step.devices, len(nodes))
