"""A record prints what a dataclass prints (its repr is the input keys' text, input_keys.py)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

import pytest
from conftest import example_plan


def _dataclass_text(value: Any) -> str:
    """What dataclasses' own __repr__ prints, field by field, nested records included."""
    if is_dataclass(value) and not isinstance(value, type):
        shown = ", ".join(f"{f.name}={_dataclass_text(getattr(value, f.name))}" for f in fields(value) if f.repr)
        return f"{type(value).__qualname__}({shown})"
    if isinstance(value, tuple):
        items = [_dataclass_text(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_dataclass_text(v) for v in value) + "]"
    return repr(value)


@pytest.mark.parametrize("name", ["lab", "pod32", "tor128-3tier"])
def test_a_records_repr_is_the_dataclass_text(name: str) -> None:
    plan = example_plan(name)
    for value in (*plan.switches, *plan.hosts, *plan.links, plan.qos, plan.source, plan.host_profile):
        assert repr(value) == _dataclass_text(value)


def test_the_enums_print_what_enum_prints() -> None:
    from enum import Enum

    from rocefab.renderers.plan import LinkKind, PortRole, Role

    for cls in (PortRole, LinkKind, Role):
        for member in cls:
            assert repr(member) == Enum.__repr__(member) == f"<{cls.__name__}.{member.name}: {member.value!r}>"
