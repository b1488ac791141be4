"""Port allocation: the fast next-port path hands out exactly what a full scan would, breakouts included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.models.catalogue import MODELS
from rocefab.renderers.port_paths import PortPaths, SharedAllocator
from rocefab.renderers.ports import AllocationError, Port, PortAllocator

NAMES = sorted(MODELS)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    model = draw(st.sampled_from(NAMES))
    speeds = MODELS[model].speeds_gbps()
    cages = MODELS[model].cage_count
    return model, draw(st.lists(st.tuples(st.sampled_from(speeds), st.integers(1, cages)), max_size=200))


@settings(max_examples=200, deadline=None)
@given(requests())
def test_next_port_matches_a_full_scan(case: tuple[str, list[tuple[int, int]]]) -> None:
    model, asks = case
    fast, scan = PortAllocator(MODELS[model], "sw"), PortAllocator(MODELS[model], "sw")
    for speed, first in asks:
        try:
            expected = scan.take(speed, 1, scan.ascending_cages(first), "p")[0]
        except AllocationError as exc:
            with pytest.raises(AllocationError) as raised:
                fast.next_port(speed, "p", first)
            assert (raised.value.code, raised.value.message) == (exc.code, exc.message)
            continue
        assert fast.next_port(speed, "p", first) == expected
    assert fast.breakouts == scan.breakouts


Ask = tuple[int, str, int, int]  # (switch, request kind, speed, first cage or count)


@st.composite
def shared_requests(draw: st.DrawFn) -> tuple[str, list[Ask]]:
    """Requests dealt to three switches of one model, mostly the same few so that the switches' paths meet,
    part and meet again, with the requests that take a switch off the shared tree now and then."""
    model = draw(st.sampled_from(NAMES))
    speeds = MODELS[model].speeds_gbps()
    cages = MODELS[model].cage_count
    ask = st.tuples(
        st.integers(0, 2),
        st.sampled_from(["next", "next", "next", "top", "take", "free"]),
        st.sampled_from(speeds[:2]),
        st.integers(1, min(cages, 3)),
    )
    return model, draw(st.lists(ask, max_size=150))


def _ask(alloc: PortAllocator | SharedAllocator, kind: str, speed: int, number: int, purpose: str) -> object:
    if kind == "next":
        return alloc.next_port(speed, purpose, number)
    if kind == "top":
        return alloc.reserve_top(speed, number, purpose)
    if kind == "take":
        return alloc.take(speed, 1, [number], purpose, explicit=True)
    return alloc.free_capacity(number, speed)


@settings(max_examples=300, deadline=None)
@given(shared_requests())
def test_switches_sharing_a_request_tree_answer_as_their_own_allocators_would(
    case: tuple[str, list[Ask]],
) -> None:
    model, asks = case
    paths = PortPaths()
    shared = [SharedAllocator(MODELS[model], f"sw{i}", paths) for i in range(3)]
    own = [PortAllocator(MODELS[model], f"sw{i}") for i in range(3)]
    for n, (switch, kind, speed, number) in enumerate(asks):
        purpose = f"request {n}"  # each its own, as the planner's name the host or leaf asking
        try:
            expected = _ask(own[switch], kind, speed, number, purpose)
        except AllocationError as exc:
            with pytest.raises(AllocationError) as raised:
                _ask(shared[switch], kind, speed, number, purpose)
            assert (raised.value.code, raised.value.message) == (exc.code, exc.message)
            continue
        assert _ask(shared[switch], kind, speed, number, purpose) == expected
    for mine, theirs in zip(shared, own, strict=True):
        assert list(mine.breakouts) == theirs.breakouts


def test_a_second_switch_asking_what_the_first_did_gets_the_answers_from_the_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = MODELS["SN5600"]
    paths = PortPaths()
    first, second = SharedAllocator(model, "leaf1", paths), SharedAllocator(model, "leaf2", paths)
    asked = [first.reserve_top(400, 8, "up"), *(first.next_port(400, f"host {i}") for i in range(20))]
    worked_out: list[str] = []
    original = PortAllocator.next_port

    def counted(self: PortAllocator, speed_gbps: int, purpose: str, first: int = 1) -> Port:
        worked_out.append(self.device)
        return original(self, speed_gbps, purpose, first)

    monkeypatch.setattr(PortAllocator, "next_port", counted)
    again = [second.reserve_top(400, 8, "up"), *(second.next_port(400, f"host {i}") for i in range(20))]
    assert again == asked and worked_out == []
    assert list(second.breakouts) == list(first.breakouts) != []
    # a request leaf1 never made: leaf2's own allocator replays the 20 next-port requests, then answers it
    second.next_port(200, "host 20")
    assert worked_out == ["leaf2"] * 21
