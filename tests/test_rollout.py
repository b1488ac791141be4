"""Rollout order: a canary leaf group and its hosts first, for ToR pairs and rail-optimized leaves alike."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, example_plan

from rocefab.deploy.targets import rollout_waves
from rocefab.renderers.plan import FabricPlan, Role


def _leaves_of(plan: FabricPlan, host_name: str) -> set[str]:
    host = next(h for h in plan.hosts if h.name == host_name)
    return {*(m.switch for b in host.bonds for m in b.members), *(n.switch for n in host.nics)}


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("groups", [0, 1, 2])
def test_every_device_once_and_hosts_after_their_leaves(name: str, groups: int) -> None:
    plan = example_plan(name)
    waves = rollout_waves(plan, groups)
    flat = [device for wave in waves for device in wave]
    assert sorted(flat) == sorted([s.name for s in plan.switches] + [h.name for h in plan.hosts])
    hosts = {h.name for h in plan.hosts}
    position = {device: i for i, wave in enumerate(waves) for device in wave}
    for wave in waves:
        assert len({device in hosts for device in wave}) == 1, "a wave mixes switches and hosts"
    for host in hosts:
        assert all(position[leaf] < position[host] for leaf in _leaves_of(plan, host))


@pytest.mark.parametrize("name", EXAMPLES)
def test_canary_is_one_leaf_group_and_exactly_its_hosts(name: str) -> None:
    plan = example_plan(name)
    canary_switches, canary_hosts, *_ = rollout_waves(plan, 1)
    assert {s.role for s in plan.switches if s.name in canary_switches} == {Role.LEAF}
    attached = {h for h in (x.name for x in plan.hosts) if _leaves_of(plan, h) <= set(canary_switches)}
    assert set(canary_hosts) == attached
    rails = {s.rail for s in plan.switches if s.name in canary_switches}
    if rails != {None}:  # rail-optimized: one leaf per rail
        assert len(canary_switches) == len(rails) == len(plan.hosts[0].nics)
    else:
        assert len(canary_switches) == 2 and len({s.pair for s in plan.switches if s.name in canary_switches}) == 1


def test_rail_fabric_waves() -> None:
    waves = rollout_waves(example_plan("cluster1024-rail"), 1)
    assert [len(w) for w in waves] == [8, 64, 120 + 64, 960]
