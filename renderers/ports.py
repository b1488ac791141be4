"""Front-panel port allocation on one switch: cages, breakouts and the names the NOS gives them."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field

from rocefab.models.catalogue import CageGroup, SwitchModel
from rocefab.renderers.plan import Breakout
from rocefab.renderers.record import record


class AllocationError(Exception):
    """A request the switch cannot satisfy. `code` is the finding code the planner reports."""

    def __init__(self, code: str, message: str, hint: str = "", path: tuple[str | int, ...] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.path = path  # the intent field that asked for it, when the caller knows


@record
class Port:
    name: str
    cage: int
    speed_gbps: int
    lanes: int
    broken_out: bool


@dataclass(slots=True)
class _SplitCage:
    speed_gbps: int
    children: tuple[Port, ...]
    next_index: int = 0

    def left(self, speed_gbps: int) -> int:
        """How many more `speed_gbps` lanes this cage can give."""
        return len(self.children) - self.next_index if self.speed_gbps == speed_gbps else 0

    def take(self) -> Port:
        port = self.children[self.next_index]
        self.next_index += 1
        return port


# (id of the model, cage, child speed) -> (the model, the cage's child ports, its breakout). Ports and breakouts are
# immutable and the same on every switch of a model, so a fabric of 4,096 switches names each lane once; the model
# is kept in the entry so its id cannot be reused by another.
_LANES: dict[tuple[int, int, int], tuple[SwitchModel, tuple[Port, ...], Breakout]] = {}


def _lanes(model: SwitchModel, group: CageGroup, cage: int, speed_gbps: int) -> tuple[tuple[Port, ...], Breakout]:
    key = (id(model), cage, speed_gbps)
    known = _LANES.get(key)
    if known is not None and known[0] is model:
        return known[1], known[2]
    spec = model.spec
    factor = group.speed_gbps // speed_gbps
    lanes = group.lanes // factor
    children = tuple(Port(spec.child_name(cage, i, lanes), cage, speed_gbps, lanes, broken_out=True)
                     for i in range(factor))
    breakout = Breakout(cage, spec.port_name(cage), factor, speed_gbps, lanes, tuple(c.name for c in children))
    if len(_LANES) < 65536:
        _LANES[key] = (model, children, breakout)
    return children, breakout


@dataclass(slots=True)
class PortAllocator:
    """Hands out ports of a requested speed, breaking cages out when the model allows it.

    Allocation is deterministic: the same sequence of requests always yields the same ports.
    """

    model: SwitchModel
    device: str
    _whole: dict[int, str] = field(default_factory=dict)  # cage -> purpose, unbroken cages in use
    _split: dict[int, _SplitCage] = field(default_factory=dict)
    _split_purpose: dict[int, str] = field(default_factory=dict)
    breakouts: list[Breakout] = field(default_factory=list)
    _groups: dict[int, CageGroup] = field(init=False)  # cage -> its group, for constant-time lookups
    _ascending: list[int] = field(init=False)
    # (speed, first cage) -> index into _ascending below which no cage can give that speed any more. Cages
    # only ever fill up, so a cage found full stays full and next_port never rescans it.
    _cursor: dict[tuple[int, int], int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._groups = {cage: group for group in self.model.cage_groups for cage in group.cages}
        self._ascending = sorted(self._groups)

    def _check_cage(self, cage: int) -> None:
        if cage not in self._groups:
            raise AllocationError(
                "port-not-on-model",
                f"{self.device}: {self.model.name} has no front-panel cage {cage} "
                f"(it has {self.model.cage_count})",
            )

    def free_capacity(self, cage: int, speed_gbps: int) -> int:
        """How many more `speed_gbps` ports `cage` can still give."""
        group = self._groups.get(cage)
        if group is None or cage in self._whole:
            return 0
        split = self._split.get(cage)
        if split is not None:
            return split.left(speed_gbps)
        factor = group.breakout_factor(cage, speed_gbps)
        return factor or 0

    def take(
        self, speed_gbps: int, count: int, cages: Iterable[int], purpose: str, explicit: bool = False
    ) -> list[Port]:
        """Allocate `count` ports of `speed_gbps` from `cages`, in that order."""
        taken: list[Port] = []
        for cage in cages:
            if len(taken) == count:
                break
            if explicit:
                self._check_cage(cage)
                owner = self._whole.get(cage) or self._split_purpose.get(cage)
                if owner is not None and owner != purpose:
                    raise AllocationError(
                        "port-used-twice",
                        f"{self.device}: cage {cage} is asked for both {owner} and {purpose}",
                    )
            if self.free_capacity(cage, speed_gbps) == 0:
                if explicit:
                    raise AllocationError(
                        "breakout-unsupported",
                        f"{self.device}: cage {cage} of {self.model.name} cannot provide a {speed_gbps}G port "
                        f"for {purpose}",
                        f"speeds this model offers: {', '.join(f'{s}G' for s in self.model.speeds_gbps())}",
                    )
                continue
            while len(taken) < count and self.free_capacity(cage, speed_gbps):
                taken.append(self._take_one(cage, speed_gbps, purpose))
        if len(taken) < count:
            raise AllocationError(
                "ports-exhausted",
                f"{self.device}: {self.model.name} has no room for {count} x {speed_gbps}G ports for {purpose} "
                f"(found {len(taken)})",
                "use fewer hosts or uplinks per leaf, a larger model, or list cages explicitly",
            )
        return taken

    def next_port(self, speed_gbps: int, purpose: str, first: int = 1) -> Port:
        """The lowest free `speed_gbps` port from cage `first` up: `take(speed, 1, ascending_cages(first))`
        without rescanning the cages already full, so filling a 64-cage switch port by port stays linear."""
        key = (speed_gbps, first)
        index = self._cursor.get(key)
        if index is None:
            index = bisect_left(self._ascending, first)
        ascending = self._ascending
        while index < len(ascending):
            cage = ascending[index]
            split = self._split.get(cage)
            if split is not None:
                # the next lane of a cage already broken out: most calls on a broken-out switch end here
                if split.left(speed_gbps):
                    self._cursor[key] = index
                    return split.take()
            elif self.free_capacity(cage, speed_gbps):
                self._cursor[key] = index
                return self._take_one(cage, speed_gbps, purpose)
            index += 1
        self._cursor[key] = index
        return self.take(speed_gbps, 1, (), purpose)[0]  # raises ports-exhausted

    def reserve_top(self, speed_gbps: int, count: int, purpose: str) -> list[Port]:
        """Take `count` ports from the highest-numbered free cages, returned in ascending order.

        Uplinks and peer links sit at the top of the front panel, hosts from the bottom, so growing the
        host count never renumbers the fabric ports.
        """
        chosen: list[int] = []
        capacity = 0
        for group in reversed(self.model.cage_groups):
            for cage in reversed(group.cages):
                if capacity >= count:
                    break
                free = self.free_capacity(cage, speed_gbps)
                if free and cage not in self._split:
                    chosen.append(cage)
                    capacity += free
        return self.take(speed_gbps, count, sorted(chosen), purpose)

    def _take_one(self, cage: int, speed_gbps: int, purpose: str) -> Port:
        group = self._groups.get(cage)
        assert group is not None
        if speed_gbps == group.speed_gbps:
            self._whole[cage] = purpose
            return Port(self.model.spec.port_name(cage), cage, speed_gbps, group.lanes, broken_out=False)
        split = self._split.get(cage)
        if split is None:
            children, breakout = _lanes(self.model, group, cage, speed_gbps)
            split = self._split[cage] = _SplitCage(speed_gbps, children)
            self._split_purpose[cage] = purpose
            self.breakouts.append(breakout)
        return split.take()

    def ascending_cages(self, first: int = 1) -> list[int]:
        return self._ascending[bisect_left(self._ascending, first):]
