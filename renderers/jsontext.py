"""JSON for plans: outlined to a fixed depth, one record per line below it.

A 1,024-node plan is some 16 MB of JSON. The standard library's C encoder is fast but only without
indentation; indenting every level runs the pure-Python encoder at several times the cost and gives
a million lines. Outlining the first levels and letting the C encoder write each record below them
keeps a port, link or NIC per line: greppable and diffable, at C speed.
"""

from __future__ import annotations

import json
from typing import Any

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(getattr(cls, "__dataclass_fields__", ()))
    return names


def _record(value: object) -> dict[str, Any]:
    names = _fields(type(value))
    if not names:
        raise TypeError(f"{type(value).__name__} is not JSON serialisable")
    return {name: getattr(value, name) for name in names}


_encode = json.JSONEncoder(default=_record).encode


def dumps_outline(value: object, depth: int) -> str:
    """`value` (dataclasses, dicts, lists, tuples, scalars) as JSON, indented two spaces for `depth`
    levels and compact below.

    >>> print(dumps_outline({"a": [{"b": 1}, {"c": [2, 3]}], "d": {}}, 2), end="")
    {
      "a": [
        {"b": 1},
        {"c": [2, 3]}
      ],
      "d": {}
    }
    """
    out: list[str] = []
    _write(value, depth, "", out)
    out.append("\n")
    return "".join(out)


def _write(value: object, depth: int, pad: str, out: list[str]) -> None:
    names = _fields(type(value))
    items: Any
    if names:
        items = ((name, getattr(value, name)) for name in names)
    elif isinstance(value, dict) and value:
        items = value.items()
    elif isinstance(value, list | tuple) and value:
        items = None
    else:
        out.append(_encode(value))
        return
    if depth == 0:
        out.append(_encode(value))
        return
    inner = pad + "  "
    separator = ""
    if items is not None:
        out.append("{")
        for key, item in items:
            out.append(f'{separator}\n{inner}{_encode(key)}: ')
            separator = ","
            _write(item, depth - 1, inner, out)
        out.append(f"\n{pad}}}")
    else:
        assert isinstance(value, list | tuple)
        out.append("[")
        for item in value:
            out.append(f"{separator}\n{inner}")
            separator = ","
            _write(item, depth - 1, inner, out)
        out.append(f"\n{pad}]")
