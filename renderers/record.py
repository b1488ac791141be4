"""`record`: the decorator of the plan's data types, frozen to the type checker and cheap to build at run time.

A 98,304-GPU plan holds millions of ports, links and neighbours. A `dataclass(frozen=True)` sets each field through
`object.__setattr__` in its `__init__`, about four times the cost of a plain slot store (5.3 against 1.4 us for ten
fields, measured here), and building those objects was most of the planner's time. A record is a slotted dataclass
with a hash, like a frozen one; what it gives up is the run-time refusal of assignment, which `mypy --strict` still
enforces on every module of the package (it reads `record` as `frozen=True` through `dataclass_transform`).

Its `repr` is the dataclass's text without the dataclass's guard against a record holding itself (records hold
only values and other records, never themselves): the input keys are the reprs of every device and link
(input_keys.py), and the guard, a set lookup and a try/finally per nested record, was a third of their cost.
For the same reason the enums records hold (`quick_repr`) print their members' repr from a table made once:
`Enum.__repr__` formats it anew each time, for each of half a million ports' roles.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from typing import TypeVar, dataclass_transform

T = TypeVar("T")
E = TypeVar("E", bound=type[Enum])


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


def quick_repr(cls: E) -> E:
    """An enum whose members print `Enum.__repr__`'s text, looked up instead of formatted (a fourth of the cost
    of a 98,304-GPU plan's reprs); the enum must be complete when decorated."""
    texts = {member: Enum.__repr__(member) for member in cls}

    def __repr__(self: Enum) -> str:
        return texts[self]

    cls.__repr__ = __repr__  # type: ignore[assignment,method-assign]
    return cls
