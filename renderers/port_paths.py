"""Port allocation shared by the switches of one model that are asked for ports in the same order.

Allocation is deterministic (ports.PortAllocator): a switch's answers depend only on its model and the requests
it was given before. A fabric asks the same of most of its switches: every rail leaf of a model reserves the
same uplinks, then gives its servers the next free port one by one; every spine gives each leaf of its pod the
next downlink. The planner used to work each answer out anew, about a third of planning a 98,304-GPU fabric.

Here the requests a model's switches were given form a tree shared by those switches (one tree per plan): a
switch walks down it while its requests are ones another switch of its model already made, taking the answers
found there, and an allocator of its own answers a request the tree does not hold yet, which then joins the
tree. That allocator is brought up to the switch's place in the tree by replaying the requests walked since it
last answered, with the purposes given (they appear in later error messages), so each request is worked out at
most twice per switch. Anything but the next-port and top-reservation requests leaves the tree for good.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rocefab.models.catalogue import SwitchModel
from rocefab.renderers.plan import Breakout
from rocefab.renderers.ports import Port, PortAllocator

# A request: ("next", speed, first cage) or ("top", speed, count)
Request = tuple[str, int, int]


class _Step:
    """A request answered at one place in the tree: the answer, and the breakouts made up to it."""

    __slots__ = ("answer", "breakouts", "depth", "following", "parent", "request")

    def __init__(self, parent: _Step | None, request: Request, answer: tuple[Port, ...],
                 breakouts: tuple[Breakout, ...]) -> None:
        self.parent = parent
        self.request = request
        self.answer = answer
        self.breakouts = breakouts
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.following: dict[Request, _Step] = {}


class PortPaths:
    """The request trees of one plan, one per switch model."""

    def __init__(self) -> None:
        # id of the model -> (the model, the tree's root); the model is kept so its id cannot be reused
        self._roots: dict[int, tuple[SwitchModel, _Step]] = {}

    def root(self, model: SwitchModel) -> _Step:
        known = self._roots.get(id(model))
        if known is None:
            known = self._roots[id(model)] = (model, _Step(None, ("", 0, 0), (), ()))
        return known[1]


class SharedAllocator:
    """A switch's port allocator (ports.PortAllocator's interface) answering from its model's request tree where
    it can."""

    __slots__ = ("_own", "_own_at", "_purposes", "_step", "device", "model")

    def __init__(self, model: SwitchModel, device: str, paths: PortPaths) -> None:
        self.model = model
        self.device = device
        self._step: _Step | None = paths.root(model)  # None: off the tree, the own allocator answers everything
        self._purposes: list[str] = []  # the purpose of each request on the way down, by depth - 1
        self._own: PortAllocator | None = None
        self._own_at: _Step | None = None  # the step the own allocator has answered up to

    def next_port(self, speed_gbps: int, purpose: str, first: int = 1) -> Port:
        """The lowest free `speed_gbps` port from cage `first` up (PortAllocator.next_port)."""
        step = self._step
        if step is not None:
            known = step.following.get(("next", speed_gbps, first))
            if known is not None:
                self._step = known
                self._purposes.append(purpose)
                return known.answer[0]
        return self._answer(("next", speed_gbps, first), purpose)[0]

    def reserve_top(self, speed_gbps: int, count: int, purpose: str) -> list[Port]:
        """`count` ports from the highest free cages, in ascending order (PortAllocator.reserve_top)."""
        step = self._step
        if step is not None:
            known = step.following.get(("top", speed_gbps, count))
            if known is not None:
                self._step = known
                self._purposes.append(purpose)
                return list(known.answer)
        return list(self._answer(("top", speed_gbps, count), purpose))

    def take(self, speed_gbps: int, count: int, cages: Iterable[int], purpose: str,
             explicit: bool = False) -> list[Port]:
        return self._leave().take(speed_gbps, count, cages, purpose, explicit)

    def free_capacity(self, cage: int, speed_gbps: int) -> int:
        return self._leave().free_capacity(cage, speed_gbps)

    def ascending_cages(self, first: int = 1) -> list[int]:
        return self._leave().ascending_cages(first)

    @property
    def breakouts(self) -> Sequence[Breakout]:
        """The cages broken out so far, in the order they were."""
        if self._step is not None:
            return self._step.breakouts
        assert self._own is not None
        return self._own.breakouts

    def _answer(self, request: Request, purpose: str) -> tuple[Port, ...]:
        """Work out a request the tree does not hold (or this switch is off it) and add it to the tree."""
        own = self._caught_up()
        step = self._step
        try:
            kind, speed, number = request
            answer = (own.next_port(speed, purpose, number),) if kind == "next" else \
                tuple(own.reserve_top(speed, number, purpose))
        except BaseException:
            self._step = None  # the tree holds answers, not failures: this switch leaves it
            raise
        if step is not None:
            made = own.breakouts
            breakouts = step.breakouts if len(made) == len(step.breakouts) else tuple(made)  # they only grow
            made_step = _Step(step, request, answer, breakouts)
            step.following[request] = made_step
            self._step = self._own_at = made_step
            self._purposes.append(purpose)
        return answer

    def _leave(self) -> PortAllocator:
        own = self._caught_up()
        self._step = None
        return own

    def _caught_up(self) -> PortAllocator:
        """The own allocator, having answered every request made so far."""
        own = self._own
        if own is None:
            own = self._own = PortAllocator(self.model, self.device)
        step = self._step
        if step is None or step is self._own_at:
            return own
        done = 0 if self._own_at is None else self._own_at.depth
        walked: list[_Step] = []
        while step is not None and step.depth > done:
            walked.append(step)
            step = step.parent
        for taken in reversed(walked):
            kind, speed, number = taken.request
            purpose = self._purposes[taken.depth - 1]
            if kind == "next":
                own.next_port(speed, purpose, number)
            else:
                own.reserve_top(speed, number, purpose)
        self._own_at = self._step
        return own
