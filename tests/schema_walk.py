"""Every leaf field of a schema, found by walking its Pydantic models, so tests over "every string field" or
"every number field" cover a field the day it is added.

A leaf is a path into the YAML document (keys, list index 0 for list items, `KEY` for a free-form mapping key)
and what it holds: str, int, float, bool, literal, ip-network, ip-address or enum. Fields reached through one member
of a tagged union (the two topology shapes) carry that member's tag as `shape`.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Tag

KEY = "<key>"  # stands for a key of a free-form mapping (extra_env's variable names, dscp_map's DSCPs)
ENTRY = "<entry>"  # stands for the value under some key of such a mapping; `concrete` names the key


@dataclass(frozen=True)
class Leaf:
    path: tuple[str | int, ...]
    kind: str  # str, int, float, bool, literal, ip-network, ip-address, enum, path
    shape: str | None = None  # the union tag the path passes through, if any
    literal: tuple[Any, ...] = ()

    @property
    def key_field(self) -> bool:
        return bool(self.path) and self.path[-1] == KEY


def leaves(model: type[BaseModel]) -> list[Leaf]:
    found: dict[tuple[Any, ...], Leaf] = {}
    for leaf in _model(model, (), None):
        found.setdefault((leaf.path, leaf.kind, leaf.shape), leaf)
    return list(found.values())


def _model(model: type[BaseModel], path: tuple[str | int, ...], shape: str | None) -> Iterator[Leaf]:
    for name, info in model.model_fields.items():
        yield from _walk(info.annotation, (*path, name), shape)


def _walk(annotation: Any, path: tuple[str | int, ...], shape: str | None) -> Iterator[Leaf]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        tags = [m.tag for m in annotation.__metadata__ if isinstance(m, Tag)]
        yield from _walk(args[0], path, tags[0] if tags else shape)
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg is not type(None):
                yield from _walk(arg, path, shape)
    elif origin is tuple:
        members = [args[0]] if len(args) == 2 and args[1] is Ellipsis else list(args)
        for index, member in enumerate(members):
            yield from _walk(member, (*path, index), shape)
    elif origin is dict:
        yield from _walk(args[0], (*path, KEY), shape)
        yield from _walk(args[1], (*path, ENTRY), shape)
    elif origin is typing.Literal:
        yield Leaf(path, "literal", shape, args)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from _model(annotation, path, shape)
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        yield Leaf(path, "enum", shape, tuple(m.value for m in annotation))
    elif annotation is bool:
        yield Leaf(path, "bool", shape)
    elif annotation is int:
        yield Leaf(path, "int", shape)
    elif annotation is float:
        yield Leaf(path, "float", shape)
    elif annotation is str:
        yield Leaf(path, "str", shape)
    elif annotation is IPv4Network:
        yield Leaf(path, "ip-network", shape)
    elif annotation is IPv4Address:
        yield Leaf(path, "ip-address", shape)
    elif annotation is Path:
        yield Leaf(path, "path", shape)
    else:
        raise TypeError(f"{path}: the walker does not know {annotation!r}; teach it, so the field is covered")


def can_set(document: Any, path: tuple[str | int, ...]) -> bool:
    """Whether `path` can be set in `document`: every list index on the way exists (mappings are created)."""
    node = document
    for part in path[:-1]:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False
            node = node[part]
        else:
            if not isinstance(node, dict):
                return False
            node = node.get(part, {})
    return isinstance(node, dict) if isinstance(path[-1], str) else isinstance(node, list) and path[-1] < len(node)


def set_value(document: Any, path: tuple[str | int, ...], value: Any, key: Any = None) -> None:
    """Set `path` in `document` (in place); for a `KEY` leaf, add a key `value` mapped to `key`'s value."""
    node = document
    for part in path[:-1]:
        node = node[part] if isinstance(part, int) else node.setdefault(part, {})
    last = path[-1]
    if last == KEY:
        node[value] = key
    else:
        node[last] = value


def get_value(document: Any, path: tuple[str | int, ...]) -> Any:
    node = document
    for part in path:
        node = node[part]
    return node


def concrete(path: tuple[str | int, ...], key: str) -> tuple[str | int, ...]:
    """`path` with each free-form mapping entry placeholder replaced by `key`."""
    return tuple(key if part == ENTRY else part for part in path)
