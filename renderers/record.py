"""`record`: the decorator of the plan's data types, frozen to the type checker and cheap to build at run time.

A 98,304-GPU plan holds millions of ports, links and neighbours. A `dataclass(frozen=True)` sets each field through
`object.__setattr__` in its `__init__`, about four times the cost of a plain slot store (5.3 against 1.4 us for ten
fields, measured here), and building those objects was most of the planner's time. A record is a slotted dataclass
with a hash, like a frozen one; what it gives up is the run-time refusal of assignment, which `mypy --strict` still
enforces on every module of the package (it reads `record` as `frozen=True` through `dataclass_transform`).

The input keys print records through `shown_values`: the values of the fields a record's repr shows, as a
tuple orjson prints in C (input_keys.key_text), rather than the repr, which spells every class and field name
in Python for each of a 98,304-GPU plan's half a million ports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    return dataclass(slots=True, unsafe_hash=True)(cls)


def shown_values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving the values of a `cls` record's fields shown in its repr, in their declared order: what
    the input keys print of each nested record (input_keys.key_text)."""
    names = [f.name for f in fields(cls) if f.repr]
    # a field's name is an identifier (dataclasses refuses any other), so this is the tuple's literal
    namespace: dict[str, object] = {}
    exec(f"def values(value):\n    return ({''.join(f'value.{name}, ' for name in names)})", namespace)
    made: Callable[[Any], tuple[Any, ...]] = namespace["values"]  # type: ignore[assignment]
    return made
