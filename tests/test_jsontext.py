"""Outlined plan JSON holds exactly the plan, whatever the outline depth."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import EXAMPLES, example_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.renderers import jsontext
from rocefab.renderers.jsontext import dumps_outline, encode_compact
from rocefab.renderers.plan import plan_to_json


@pytest.mark.parametrize("name", EXAMPLES)
def test_plan_json_is_the_plan(name: str) -> None:
    plan = example_plan(name)
    expected = json.loads(json.dumps(dataclasses.asdict(plan)))
    assert json.loads(plan_to_json(plan)) == expected
    document = {"plan": plan, "switches": plan.switches, "empty": {}, "none": [], "scalar": 1}
    assert json.loads(dumps_outline(document)) == json.loads(json.dumps(
        {"plan": expected, "switches": expected["switches"], "empty": {}, "none": [], "scalar": 1}))


def test_one_port_per_line() -> None:
    text = plan_to_json(example_plan("lab"))
    port_lines = [line for line in text.splitlines() if line.lstrip().startswith('{"name": "swp')]
    assert port_lines and all(line.rstrip(",").endswith("}") for line in port_lines)


def test_a_compact_line_is_the_record_without_blanks() -> None:
    """A JSON Lines record: the same value as the outline's, on one line, no blank outside a string."""
    switch = example_plan("lab").switches[0]
    line = encode_compact(switch)
    assert json.loads(line) == json.loads(dumps_outline(switch))
    assert "\n" not in line
    outside_strings = "".join(part for i, part in enumerate(line.split('"')) if i % 2 == 0)
    assert " " not in outside_strings


def test_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        dumps_outline({"a": object()})


@dataclasses.dataclass(frozen=True)
class _One:
    name: str


@dataclasses.dataclass(frozen=True)
class _Pair:
    left: _One
    right: int


@dataclasses.dataclass(frozen=True)
class _Holder:
    items: tuple[_Pair, ...]


def test_record_lists_of_every_shape_print_the_same_values() -> None:
    # the one-class list of flat records takes the fast path; a mixed list, a list holding one-field records
    # and a record holding a list of records each take the general one
    pairs = tuple(_Pair(_One(f"p{i}"), i) for i in range(5000))  # more than one 4,096-record piece
    document = {"pairs": pairs, "mixed": [_One("a"), _Pair(_One("b"), 2), {"c": [1]}], "ones": [_One("x")],
                "holder": _Holder(pairs[:2]), "empty": ()}
    text = dumps_outline(document)
    assert json.loads(text) == json.loads(json.dumps({
        "pairs": [dataclasses.asdict(p) for p in pairs],
        "mixed": [{"name": "a"}, {"left": {"name": "b"}, "right": 2}, {"c": [1]}], "ones": [{"name": "x"}],
        "holder": {"items": [dataclasses.asdict(p) for p in pairs[:2]]}, "empty": []}))
    lines = text.splitlines()
    assert lines[1:4] == ['  "pairs": [', '    {"left": {"name": "p0"}, "right": 0},',
                          '    {"left": {"name": "p1"}, "right": 1},']
    assert '    {"left": {"name": "p4096"}, "right": 4096},' in lines


def _standard_tight(value: object) -> str:
    """The standard library's encoder, records as dicts of their fields (not recursively: it calls back)."""
    def as_dict(record: object) -> dict[str, object]:
        return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}  # type: ignore[arg-type]

    return json.dumps(value, default=as_dict, separators=(",", ":"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_compact_lines_are_the_standard_encoders_text(name: str) -> None:
    """plan/'s records take orjson's fast path; their text is the standard encoder's, byte for byte."""
    plan = example_plan(name)
    for item in (*plan.switches, *plan.hosts, *plan.links, plan.qos, plan.operations, plan.source):
        assert encode_compact(item) == _standard_tight(item)


@dataclasses.dataclass(frozen=True)
class _Measured:
    name: str
    value: float


@dataclasses.dataclass(frozen=True)
class _Keyed:
    by_number: dict[int, str]


@pytest.mark.parametrize("value", [
    _One("gpü001"),  # beyond ASCII: the standard encoder escapes it, orjson would not
    _Measured("a", 1e16), _Measured("b", 1e-05), _Measured("c", 2.5e-07), _Measured("d", 0.1),  # exponents
    _Keyed({1: "x"}), _Pair(_One("p"), 2**70), [_One("x"), 1.5e-9], {"k": _One("\u2028")},
])
def test_compact_text_where_orjson_would_differ(value: object) -> None:
    assert encode_compact(value) == _standard_tight(value)


@dataclasses.dataclass(frozen=True)
class _Rated:
    name: str
    rate: float
    floor: float | None
    inner: _One


_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**63), 2**63 - 1),
                    st.sampled_from([0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0,
                                     360.0, 0.1]))


@settings(max_examples=2000, deadline=None)
@given(rate=_FLOATS, floor=st.one_of(st.none(), _FLOATS))
def test_a_record_with_floats_prints_the_standard_encoders_text(rate: float, floor: float | None) -> None:
    """orjson prints a float field only when it prints it as the standard encoder does (the bandwidth plan's
    minimum rates); any other value, NaN, an infinity or one needing an exponent, takes the standard path."""
    value = _Rated("pair", rate, floor, _One("x"))
    assert encode_compact(value) == _standard_tight(value)
    assert jsontext._EXACT[_Rated] == ("rate", "floor")  # the float-aware fast path is the one under test


@settings(max_examples=500, deadline=None)
@given(values=st.lists(st.tuples(_FLOATS, st.one_of(st.none(), _FLOATS)), min_size=1, max_size=12))
def test_a_list_of_records_with_floats_prints_the_standard_encoders_text(
        values: list[tuple[float, float | None]]) -> None:
    """A list of one record type with float fields goes to orjson a piece at a time when every float of the
    piece prints alike from both (the bandwidth plan's 99,840 pairs); one that does not sends the piece down the
    standard path. Either way each line is the standard encoder's."""
    records = [_Rated(f"pair{i}", rate, floor, _One("x")) for i, (rate, floor) in enumerate(values)]
    lines = ",\n    ".join(map(_standard_tight, records))
    assert dumps_outline({"pairs": records}, tight=True) == f'{{\n  "pairs": [\n    {lines}\n  ]\n}}\n'
