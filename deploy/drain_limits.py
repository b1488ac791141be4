"""Which devices may be drained at the same time: the plan's redundancy, read through what-if
(renderers/failure_impact.py), since a drained switch carries no traffic, as a failed one.

A device is never drained where its loss alone would leave a leaf without an uplink or cut a host off every path
(a fabric with one spine, a single-homed host): that change needs a maintenance window, not a drain. The others
go in steps, in the order given; the devices of one step are drained together when, taken together,

- every path of every host (a bond, a rail NIC) keeps a member, except at most one rail NIC per host: the two
  leaves of a ToR pair, or two leaves of one rail block, are never in one step;
- no switch loses more than `upper_share` of the switches of the tier above it (default an eighth, and always at
  least one: one spine at a time under a leaf of 2 to 15 spines, 8 of 64; a super-spine drained narrows the
  leaves below the spines it feeds);
- no two devices of a step are cabled to each other;
- at most `rail_leaves_at_once` rail leaves (default 1): each takes a rail NIC of every node under it down, and
  the nodes out of the scheduler at once stay as few as one leaf's.

Each device's own what-if says whom it narrows; a step adds them up, and is checked once more as a whole (a step
that fails that check is split into single devices).

A rail leaf's drain takes one rail NIC of each node under it down, which only the scheduler can make harmless:
each step names those nodes (`nodes_losing_a_rail`) so they are drained in Slurm first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rocefab.platforms.disruption import Disruption
from rocefab.renderers.failure_impact import FabricIndex, Impact, evaluate
from rocefab.renderers.plan import FabricPlan


@dataclass(frozen=True, slots=True)
class DrainStep:
    devices: tuple[str, ...]
    nodes_losing_a_rail: tuple[str, ...]  # hosts whose NIC on a drained rail leaf goes dark meanwhile


@dataclass(frozen=True, slots=True)
class DrainPlan:
    steps: tuple[DrainStep, ...]
    refused: dict[str, str] = field(default_factory=dict)  # device -> why draining it alone cuts something off


def _why_not_alone(index: FabricIndex, impact: Impact) -> str | None:
    """Why draining one device cuts something off (a switch left without an uplink, a host without any path);
    None when it does not."""
    cut = [s.name for s in impact.switches if s.cut_off and index.hosts_of_switch.get(s.name)]
    if cut:
        return f"draining it leaves {_few(cut)} without an uplink"
    lost = Counter(h.host for h in impact.hosts if h.paths[1] == 0)
    whole = sorted(host for host, n in lost.items() if n == len(index.host_paths[host]))
    if whole:
        return f"draining it cuts {_few(whole)} off every path"
    return None


def _few(names: Sequence[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


@dataclass(frozen=True, slots=True)
class _Cost:
    """What draining one device takes away: switches' uppers, hosts' path members."""

    uppers: dict[str, int]  # switch -> switches of the tier above it no longer reaches
    members: dict[tuple[str, str], int]  # (host, path) -> members lost
    neighbours: frozenset[str]
    rail_leaf: bool  # it serves rail NICs


def _cost(index: FabricIndex, name: str, impact: Impact) -> _Cost:
    switch = index.switches.get(name)
    neighbours = frozenset(set(switch.ups) | set(switch.downs) | ({switch.partner} if switch.partner else set())
                           ) if switch is not None else frozenset()
    return _Cost({s.name: s.uppers[0] - s.uppers[1] for s in impact.switches if s.uppers and s.uppers[1] < s.uppers[0]},
                 {(h.host, h.path): h.paths[0] - h.paths[1] for h in impact.hosts}, neighbours,
                 switch is not None and switch.rail is not None)


@dataclass(slots=True)
class _Step:
    devices: list[str] = field(default_factory=list)
    uppers: Counter[str] = field(default_factory=Counter)
    members: Counter[tuple[str, str]] = field(default_factory=Counter)
    neighbours: set[str] = field(default_factory=set)

    rail_leaves: int = 0

    def takes(self, name: str, cost: _Cost, planned: dict[tuple[str, str], int], upper_limit: Mapping[str, int],
              rail_leaves_at_once: int) -> bool:
        if name in self.neighbours or any(self.uppers[s] + n > upper_limit[s] for s, n in cost.uppers.items()):
            return False
        if cost.rail_leaf and self.rail_leaves >= rail_leaves_at_once:
            return False
        whole: set[str] = set()
        for key in set(self.members) | set(cost.members):
            if self.members[key] + cost.members.get(key, 0) >= planned[key]:
                host, path = key
                if not path.startswith("rail ") or host in whole:
                    return False  # a bond with no member left, or a second rail NIC of one node
                whole.add(host)
        return True

    def add(self, name: str, cost: _Cost) -> None:
        self.devices.append(name)
        self.uppers.update(cost.uppers)
        self.members.update(cost.members)
        self.neighbours |= cost.neighbours
        self.rail_leaves += cost.rail_leaf


UPPER_SHARE = 1 / 8


def upper_limits(index: FabricIndex, upper_share: float = UPPER_SHARE) -> dict[str, int]:
    """Per switch, how many of the switches above it may be drained at once: a share of them, at least one."""
    return {name: max(1, int(len(s.ups) * upper_share)) for name, s in index.switches.items()}


def drain_steps(index: FabricIndex, names: Sequence[str], upper_share: float = UPPER_SHARE,
                rail_leaves_at_once: int = 1) -> DrainPlan:
    """`names` (in the order given, which the steps keep) packed into steps that may each be drained at once."""
    planned = {(host, path.label): len(path.members) for host, paths in index.host_paths.items() for path in paths}
    limits = upper_limits(index, upper_share)
    refused: dict[str, str] = {}
    steps: list[_Step] = []
    for name in names:
        alone = evaluate(index, frozenset({name}), frozenset())
        why = _why_not_alone(index, alone)
        if why is not None:
            refused[name] = why
            continue
        cost = _cost(index, name, alone)
        step = next((step for step in steps
                     if step.takes(name, cost, planned, limits, rail_leaves_at_once)), None)
        if step is None:
            step = _Step()
            steps.append(step)
        step.add(name, cost)
    finished: list[DrainStep] = []
    for step in steps:
        done = _finished(index, step.devices, limits)
        finished += [done] if done is not None else [d for n in step.devices if (d := _finished(index, [n], None))]
    return DrainPlan(tuple(finished), refused)


def _finished(index: FabricIndex, devices: Sequence[str], limits: Mapping[str, int] | None) -> DrainStep | None:
    """The step, checked as a whole with what-if (None when it breaks a rule: it is then split); a single device
    (`limits` None) is taken as it is, having passed the check alone."""
    impact = evaluate(index, frozenset(devices), frozenset())
    lost = Counter(h.host for h in impact.hosts if h.paths[1] == 0)
    bond_lost = any(h.paths[1] == 0 for h in impact.hosts if not h.path.startswith("rail "))
    narrowed = limits is not None and any(s.uppers and s.uppers[0] - s.uppers[1] > limits[s.name]
                                          for s in impact.switches)
    broken = any(n > 1 for n in lost.values()) or bond_lost or narrowed
    if broken and len(devices) > 1:
        return None
    rails = sorted({h.host for h in impact.hosts if h.path.startswith("rail ") and h.paths[1] == 0})
    return DrainStep(tuple(devices), tuple(rails))


def drain_plan(plan: FabricPlan, changing: Mapping[str, Disruption], rail_leaves_at_once: int = 1) -> DrainPlan:
    """The drain steps for the switches whose change is beyond hitless (`changing`: device -> its class), in the
    plan's order, with up to `rail_leaves_at_once` rail leaves (of different rail blocks) per step; hosts are left
    to the scheduler."""
    switches = [s.name for s in plan.switches
                if s.name in changing and changing[s.name] is not Disruption.HITLESS]
    if not switches:
        return DrainPlan(())
    return drain_steps(FabricIndex(plan), switches, rail_leaves_at_once=rail_leaves_at_once)


def plan_json(drain: DrainPlan) -> dict[str, object]:
    return {"steps": [{"devices": list(step.devices), "nodes_losing_a_rail": list(step.nodes_losing_a_rail)}
                      for step in drain.steps], "not_drainable": dict(drain.refused)}
