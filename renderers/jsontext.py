"""JSON for plans: the outline indented, every leaf record on one line.

A 1,024-node plan is some 16 MB of JSON. The standard library's C encoder is fast but only without
indentation; indenting every level runs the pure-Python encoder at several times the cost and gives a
million lines. Here a record (a dataclass or dict) is spread over lines only when it holds a list of
records (a plan its switches, a switch its ports); everything else is one compact line from the C
encoder: a port, a link, a NIC, a BGP neighbour per line, greppable and diffable.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable
from enum import Enum
from operator import attrgetter
from typing import Any

import orjson

_FIELDS: dict[type, tuple[str, ...]] = {}
_LIST_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(getattr(cls, "__dataclass_fields__", ()))
    return names


def _list_fields(cls: type) -> tuple[str, ...]:
    """The fields of a dataclass declared as lists or tuples: the only ones that can hold records."""
    names = _LIST_FIELDS.get(cls)
    if names is None:
        fields = getattr(cls, "__dataclass_fields__", {})
        names = _LIST_FIELDS[cls] = tuple(
            name for name, f in fields.items() if any(t in str(f.type) for t in ("tuple[", "list[", "Sequence["))
        )
    return names


_AS_DICT: dict[type, Callable[[object], dict[str, Any]]] = {}


def _record(value: object) -> dict[str, Any]:
    """A record's fields as the dict the encoders print, for each of millions of nested records: the `default`
    of the C encoder, and of orjson, whose own reading of a slotted dataclass looks each field's declaration up
    anew, at twice the cost of a dict made by code written for the class."""
    kind = type(value)
    as_dict = _AS_DICT.get(kind)
    if as_dict is None:
        as_dict = _AS_DICT[kind] = _dict_maker(kind)
    return as_dict(value)


def _dict_maker(kind: type) -> Callable[[object], dict[str, Any]]:
    """A function giving a `kind` record's fields as a dict, field names as keys, in their declared order."""
    names = _fields(kind)
    if not names:
        raise TypeError(f"{kind.__name__} is not JSON serialisable")
    # a field's name is an identifier (dataclasses refuses any other), so the text below is the dict's literal
    items = ", ".join(f"{name!r}: value.{name}" for name in names)
    namespace: dict[str, Any] = {}
    exec(f"def as_dict(value):\n    return {{{items}}}", namespace)
    made: Callable[[object], dict[str, Any]] = namespace["as_dict"]
    return made


_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)


def _encoder(key_separator: str, item_separator: str) -> Callable[[object], str]:
    """A one-line JSON printer with these separators, records (dataclasses) as objects."""
    if _c_make_encoder is None:  # pragma: no cover - Python builds without the C accelerator
        return json.JSONEncoder(default=_record, separators=(item_separator, key_separator)).encode
    # One C encoder for every record: JSONEncoder.encode would build a new one per call, which is most of the
    # cost for records of a few fields. Arguments as JSONEncoder passes them, without circular checks.
    iterencode = _c_make_encoder(None, _record, json.encoder.encode_basestring_ascii, None, key_separator,
                                 item_separator, False, False, True)

    def encode(value: object) -> str:
        return "".join(iterencode(value, 0))

    return encode


_encode = _encoder(": ", ", ")
_encode_standard_tight = _encoder(":", ",")

def _holds_only_exact(hint: object, seen: set[type]) -> bool:
    """Whether every value of type `hint` prints the same from orjson as from the standard encoder: strings,
    integers, booleans, None, enums, and tuples, lists, str-keyed dicts and records of those. Not floats: the
    two print some with exponents differently (orjson 1e16 and 0.00001, the standard 1e+16 and 1e-05)."""
    if hint in (str, int, bool, type(None)) or (isinstance(hint, type) and issubclass(hint, Enum)):
        return True
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if hint in seen:
            return True
        seen.add(hint)
        return all(_holds_only_exact(h, seen) for h in typing.get_type_hints(hint).values())
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (tuple, list, types.UnionType, typing.Union):
        return all(_holds_only_exact(a, seen) for a in args if a is not Ellipsis)
    if origin is dict:
        return args[0] is str and _holds_only_exact(args[1], seen)
    return False


def _float_fields(kind: type) -> tuple[str, ...] | None:
    """For a record type: its fields declared `float` (or `float | None`), when every other field holds only
    what orjson prints exactly (`_holds_only_exact`); None when orjson could print it otherwise anyway."""
    if not dataclasses.is_dataclass(kind):
        return None
    floats = []
    for name, hint in typing.get_type_hints(kind).items():
        if hint is float or hint == float | None:
            floats.append(name)
        elif not _holds_only_exact(hint, set()):
            return None
    return tuple(floats)


# Floats orjson prints as the standard encoder does (repr's shortest digits, no exponent): zero and magnitudes
# from 1e-4 up to 1e16. Below, orjson writes no exponent (0.00001 for 1e-05); above, the exponent's form has
# differed between orjson releases (1e16, 1e+16); NaN and the infinities it writes as null.
_LEAST_PLAIN, _BEYOND_PLAIN = 1e-4, 1e16


def _plain_float(value: object) -> bool:
    if type(value) is float:
        return value == 0.0 or _LEAST_PLAIN <= abs(value) < _BEYOND_PLAIN
    return value is None or type(value) is int  # an int where a float is declared prints as an int in both


def _plain_floats(values: list[object]) -> bool:
    """`all(map(_plain_float, values))`, asked of C loops rather than of a Python call per value (99,840
    bandwidth pairs' minimum rates)."""
    kinds = set(map(type, values))
    if not kinds <= _PLAIN_KINDS:
        return False
    floats = typing.cast(list[float], values if kinds == {float} else [v for v in values if type(v) is float])
    # zero prints alike; NaN and the infinities fail both tests
    sizes: list[float] = list(map(abs, filter(None, floats)))
    return all(map(_LEAST_PLAIN.__le__, sizes)) and all(map(_BEYOND_PLAIN.__gt__, sizes))


_PLAIN_KINDS = frozenset({float, int, type(None)})
_EXACT: dict[type, tuple[str, ...] | None] = {}


def _exact_fields(kind: type) -> tuple[str, ...] | None:
    """`_float_fields(kind)`, worked out once per type."""
    try:
        return _EXACT[kind]
    except KeyError:
        floats = _EXACT[kind] = _float_fields(kind)
        return floats


def _encode_tight(value: object) -> str:
    """The standard encoder's one-line text without blanks, made by orjson (about twice as fast on plan records,
    and a 98,304-GPU plan/ is 2.4 million of them) for a record whose declared types print the same from both,
    a float field only while its value is one orjson prints alike (`_plain_float`: 99,840 bandwidth pairs'
    minimum rates), and unless the text holds a character beyond ASCII (orjson prints UTF-8, the standard
    encoder escapes it)."""
    floats = _exact_fields(type(value))
    if floats is not None and all(_plain_float(getattr(value, name)) for name in floats):
        try:
            data = orjson.dumps(value, default=_record, option=orjson.OPT_PASSTHROUGH_DATACLASS)
        except orjson.JSONEncodeError:  # an integer beyond 64 bits
            return _encode_standard_tight(value)
        if data.isascii():
            return data.decode()
    return _encode_standard_tight(value)


_dumps_record = functools.partial(orjson.dumps, default=_record, option=orjson.OPT_PASSTHROUGH_DATACLASS)


def _joined_tight(values: list[Any] | tuple[Any, ...], separator: str) -> str:
    """`separator.join(map(_encode_tight, values))` for records of one type that `_encode_tight` always gives to
    orjson (no float field, every field printed alike by both encoders): one orjson call per record from C,
    without a Python call of its own, and one ASCII test for all (a plan/ part's ports and links)."""
    try:
        data = separator.encode().join(map(_dumps_record, values))
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: the records one by one
        return separator.join(map(_encode_tight, values))
    return data.decode() if data.isascii() else separator.join(map(_encode_tight, values))


def encode_compact(value: object) -> str:
    """`value` as one line of JSON without blanks between items (as `jq -c` prints), records (dataclasses) as
    objects: the form of a JSON Lines file no one reads by eye, where the blanks were a tenth of the bytes."""
    return _encode_tight(value)


def _items(value: object) -> list[tuple[str, Any]] | None:
    """The key/value pairs of a record, or None for anything else."""
    names = _fields(type(value))
    if names:
        return [(name, getattr(value, name)) for name in names]
    if isinstance(value, dict):
        return list(value.items())
    return None


def _is_record_list(value: object) -> bool:
    return isinstance(value, list | tuple) and bool(value) and _items(value[0]) is not None


def dumps_outline(value: object, tight: bool = False) -> str:
    """`value` (dataclasses, dicts, lists, tuples, scalars) as JSON: the top level and every record
    holding a list of records indented, the rest compact.

    >>> print(dumps_outline({"name": "s1", "ports": [{"name": "p1", "peer": {"device": "l1"}}], "vlans": [1, 2]}),
    ...       end="")
    {
      "name": "s1",
      "ports": [
        {"name": "p1", "peer": {"device": "l1"}}
      ],
      "vlans": [1, 2]
    }
    """
    parts: list[str] = []
    write_outline(value, parts.append, tight)
    return "".join(parts)


class _Out(list[str]):
    """The text so far, handed to `emit` a few thousand pieces at a time, so a plan of hundreds of megabytes
    is never held whole (nor as a list of millions of pieces)."""

    def __init__(self, emit: Callable[[str], object], leaf: Callable[[object], str]) -> None:
        super().__init__()
        self.emit = emit
        self.leaf = leaf  # what prints a value on one line

    def flush(self, at_least: int = 0) -> None:
        if len(self) > at_least:
            self.emit("".join(self))
            self.clear()


def write_outline(value: object, emit: Callable[[str], object], tight: bool = False) -> None:
    """What `dumps_outline` returns, given to `emit` in pieces; `tight` prints the one-line values without blanks
    (encode_compact), for files read by programs."""
    out = _Out(emit, _encode_tight if tight else _encode)
    items = _items(value)
    if items is not None:
        _write_record(items, "", out)
    elif _is_record_list(value):
        _write_list(value, "", out)  # type: ignore[arg-type]
    else:
        out.append(out.leaf(value))
    out.append("\n")
    out.flush()


def _write_value(value: object, pad: str, out: _Out) -> None:
    if _is_record_list(value):
        _write_list(value, pad, out)  # type: ignore[arg-type]
        return
    if _fields(type(value)):
        if any(_is_record_list(getattr(value, name)) for name in _list_fields(type(value))):
            _write_record([(name, getattr(value, name)) for name in _fields(type(value))], pad, out)
            return
    elif isinstance(value, dict) and any(_is_record_list(v) for v in value.values()):
        _write_record(list(value.items()), pad, out)
        return
    out.append(out.leaf(value))


def _write_record(items: list[tuple[str, Any]], pad: str, out: _Out) -> None:
    inner = pad + "  "
    separator = "{"
    for key, item in items:
        out.append(f"{separator}\n{inner}{_encode(key)}: ")
        separator = ","
        _write_value(item, inner, out)
    out.append(f"\n{pad}}}" if items else "{}")


def _write_list(values: list[Any] | tuple[Any, ...], pad: str, out: _Out) -> None:
    inner = pad + "  "
    kind = type(values[0]) if values else None
    if kind is not None and _fields(kind) and not _list_fields(kind) and all(type(v) is kind for v in values):
        # Records without list fields are one line each whatever they hold: a plan's ports, links and BGP
        # neighbours, more than a million in a 98,304-GPU fabric, printed without a per-record decision.
        separator = f",\n{inner}"
        floats = _exact_fields(kind) if out.leaf is _encode_tight else None
        for start in range(0, len(values), 4096):
            chunk = values[start:start + 4096]
            by_orjson = floats is not None and all(_plain_floats(list(map(attrgetter(name), chunk))) for name in floats)
            joined = _joined_tight(chunk, separator) if by_orjson else separator.join(map(out.leaf, chunk))
            out.append(("[\n" + inner if start == 0 else separator) + joined)
            out.flush()
        out.append(f"\n{pad}]")
        return
    separator = "["
    for item in values:
        out.append(f"{separator}\n{inner}")
        separator = ","
        _write_value(item, inner, out)
        out.flush(at_least=4096)
    out.append(f"\n{pad}]")
