"""Every number, address, boolean and choice field of the schema, given a value of another type: refused
with its position and field, never coerced. (YAML already gives real integers, so 400.0 or `true` — which
Python counts as 1 — is a different value, and an address written as an integer is a mistake.)"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from intent_bases import BASES, check_bases_plan, concrete_path, shape_for
from schema_walk import Leaf, leaves, set_value
from typer.testing import CliRunner

from rocefab.cli import app
from rocefab.models.findings import dotted
from rocefab.models.intent import Intent

WRONG: dict[str, list[Any]] = {
    "int": [1.0, True, "1", [1]],
    # a float field takes an integer (5 is 5.0), but neither text, a boolean nor YAML's .nan and .inf
    "float": [True, "0.5", [1], float("nan"), float("inf")],
    "bool": ["yes", 1, "on"],
    "ip-network": [7, True, 167772160, "10.0.0.0/33"],
    "ip-address": [7, False, "10.0.0.256"],
    "enum": [1, True, "no-such-choice"],
}


def _wrong_values(leaf: Leaf) -> list[Any]:
    if leaf.kind == "literal":
        numbers = [v for v in leaf.literal if isinstance(v, int)]
        words = [v for v in leaf.literal if isinstance(v, str)]
        wrong: list[Any] = [float(numbers[0]), True] if numbers else []
        return [*wrong, 7 if words else "x", "no-such-choice"]
    return WRONG[leaf.kind]


TYPED = [leaf for leaf in leaves(Intent) if leaf.kind != "str"]


def test_both_bases_plan(tmp_path: Path) -> None:
    check_bases_plan(tmp_path)


def test_every_typed_field_is_walked() -> None:
    assert len(TYPED) >= 60
    for leaf in TYPED:
        shape_for(leaf)


@pytest.mark.parametrize("leaf", TYPED, ids=lambda leaf: f"{leaf.shape or 'any'}:{dotted(leaf.path)}")
def test_values_of_the_wrong_type_are_refused(leaf: Leaf, tmp_path: Path) -> None:
    for n, value in enumerate(_wrong_values(leaf)):
        doc = copy.deepcopy(BASES[shape_for(leaf)])
        if leaf.key_field:
            if isinstance(value, list):
                continue  # a list cannot be a key
            set_value(doc, leaf.path, value, key=3)
        else:
            set_value(doc, concrete_path(leaf), value)
        intent = tmp_path / f"case{n}.yaml"
        intent.write_text(yaml.safe_dump(doc), encoding="utf-8")
        out = tmp_path / f"out{n}"
        result = CliRunner().invoke(app, ["render", str(intent), "-o", str(out)])
        assert result.exit_code == 2, (value, result.stderr, result.stdout)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        shown = dotted(leaf.path[:-1]) if leaf.key_field else dotted(concrete_path(leaf))
        assert re.search(rf"{re.escape(str(intent))}:\d+:\d+ {re.escape(shown)}", result.stderr), (value, result.stderr)
        assert "nothing was written" in result.stderr and not out.exists()
