"""Outlined plan JSON holds exactly the plan, whatever the outline depth."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import EXAMPLES, example_plan

from rocefab.renderers.jsontext import dumps_outline
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


def test_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        dumps_outline({"a": object()})
