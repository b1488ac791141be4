"""`record`: the decorator of the plan's data types, frozen to the type checker and cheap to build at run time.

A 98,304-GPU plan holds millions of ports, links and neighbours. A `dataclass(frozen=True)` sets each field through
`object.__setattr__` in its `__init__`, about four times the cost of a plain slot store (5.3 against 1.4 us for ten
fields, measured here), and building those objects was most of the planner's time. A record is a slotted dataclass
with a hash, like a frozen one; what it gives up is the run-time refusal of assignment, which `mypy --strict` still
enforces on every module of the package (it reads `record` as `frozen=True` through `dataclass_transform`).

Its `repr` is the dataclass's text without the dataclass's guard against a record holding itself (records hold
only values and other records, never themselves): the input keys are the reprs of every device and link
(input_keys.py), and the guard, a set lookup and a try/finally per nested record, was a third of their cost.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    made = dataclass(slots=True, unsafe_hash=True)(cls)
    made.__repr__ = _repr_of(made)  # type: ignore[assignment,method-assign]
    return made


def _repr_of(cls: type) -> object:
    """A `__repr__` printing what the dataclass's prints: `Name(field=value!r, ...)` of the fields shown in it."""
    shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields(cls) if f.repr)
    namespace: dict[str, object] = {}
    exec(f"def __repr__(self):\n    return f'{{self.__class__.__qualname__}}({shown})'", namespace)
    return namespace["__repr__"]
