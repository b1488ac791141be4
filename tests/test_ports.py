"""Port allocation: the fast next-port path hands out exactly what a full scan would, breakouts included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.models.catalogue import MODELS
from rocefab.renderers.ports import AllocationError, PortAllocator

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
