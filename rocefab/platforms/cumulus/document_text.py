"""An NVUE `set` tree printed as the YAML `nv config replace` takes, by a walk made for these trees.

A rail leaf's tree has about a thousand maps and three thousand values, and 4,096 switches are rendered for a
98,304-GPU fabric: the general writer (yamltext.dump_block) asks what each node is and how to print it every
time. This walk handles the trees NVUE documents are made of (maps, strings, integers), prints each key once per
document and each shared subtree once per depth; anything else returns None and the caller prints with
dump_block, so the text is always dump_block's (tests/test_nvue.py compares the two on generated trees). The
`nv set` form, written only on request, is config.nv_set_commands' own walk.

Two kinds of subtree the builder marks spare the walk most of its steps. A `Shared` subtree recurs as one
object (every port's link settings): printed once per depth, its text reused. A `Stamped` subtree is one of
many made alike, differing only in a few values (every server port's entry: its description and address; every
BGP neighbour's: description and AS): its `Stamp` prints a model of it once per depth, with stand-ins where the
values go, and each subtree is that text with its own values put in, one format call instead of a dozen lines
walked. The values are printed as the walk prints them (yaml_key for a key, yaml_string or the integer for a
value), so the text is the walk's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rocefab.renderers.yamltext import yaml_key, yaml_string


class _NotPlain(Exception):
    """A value other than a map, a string or an integer."""


class Shared(dict[str, Any]):
    """A subtree the builder puts in many places of one document or of many (every port's link settings, every
    neighbour's BFD timers): the walk prints it once per depth and reuses the text wherever the same object
    recurs, about a third of a rail leaf's nodes. It must not change once made; to every other reader it is a
    dict."""

    __slots__ = ("texts",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.texts: dict[int, str] = {}  # by depth


class Stamp:
    """The shape of subtrees made alike by `build` from `count` values (strings or integers, each printed once in
    the subtree: as a key alone in its map, or as a value). `build` must make the same shape whatever the values,
    its other keys and values fixed (Shared subtrees included), and the subtrees it makes must not change."""

    __slots__ = ("_fillers", "build", "count")

    def __init__(self, build: Callable[..., dict[str, Any]], count: int) -> None:
        self.build = build
        self.count = count
        self._fillers: dict[int, Callable[[tuple[str | int, ...]], str]] = {}  # by depth

    def make(self, *values: str | int) -> Stamped:
        made = Stamped(self.build(*values))
        made.stamp, made.filling = self, values
        return made

    def text(self, filling: tuple[str | int, ...], indent: int) -> str:
        """The subtree made of `filling`, printed at `indent`."""
        filler = self._fillers.get(indent)
        if filler is None:
            filler = self._fillers[indent] = _filler(*self._format(indent))
        return filler(filling)

    def _format(self, indent: int) -> tuple[str, tuple[bool, ...]]:
        """The text of a model subtree at `indent`, its stand-ins turned into format fields, and which of them
        are keys."""
        stand_ins = [f"rocefabslot{i}z" for i in range(self.count)]
        model = self.build(*stand_ins)
        _check_key_slots(model, frozenset(stand_ins))
        out: list[str] = []
        _walk(model, indent, _Printed(), out)
        text = "".join(out).replace("{", "{{").replace("}", "}}")
        keys = []
        for i, stand_in in enumerate(stand_ins):
            if text.count(stand_in) != 1:
                raise ValueError(f"value {i} of a stamp is printed {text.count(stand_in)} times, not once")
            keys.append(re.search(rf"^ *{stand_in}:", text, re.MULTILINE) is not None)
            text = text.replace(stand_in, f"{{{i}}}")
        return text, tuple(keys)


def _filler(text: str, keys: tuple[bool, ...]) -> Callable[[tuple[str | int, ...]], str]:
    """A function printing a stamp's values into its text as the walk would print them: a key as yaml_key, a
    string value as yaml_string, an integer as its digits (anything else: _NotPlain). Generated for the stamp's
    slots, as one format call: it runs for most entries of a rail fabric's Cumulus documents."""
    printed = ", ".join(f"_key(v[{i}])" if is_key else f"(_string(v[{i}]) if type(v[{i}]) is str else _number(v[{i}]))"
                        for i, is_key in enumerate(keys))
    namespace: dict[str, Any] = {"_text": text, "_key": yaml_key, "_string": yaml_string, "_number": _number}
    exec(f"def fill(v):\n    return _text.format({printed})", namespace)
    made: Callable[[tuple[str | int, ...]], str] = namespace["fill"]
    return made


def _number(value: object) -> str:
    if type(value) is int:
        return str(value)
    raise _NotPlain


def _check_key_slots(model: dict[Any, Any], stand_ins: frozenset[str]) -> None:
    """A value used as a key must be its map's only key: two such keys with one value would be one key."""
    for key, value in model.items():
        if key in stand_ins and len(model) > 1:
            raise ValueError(f"stamp value {key} shares its map with other keys")
        if isinstance(value, dict):
            _check_key_slots(value, stand_ins)


class Stamped(dict[str, Any]):
    """A subtree made by a Stamp (Stamp.make), printed as the stamp's text with its values; to every other reader
    a dict."""

    __slots__ = ("filling", "stamp")
    stamp: Stamp
    filling: tuple[str | int, ...]  # the values the stamp was given


def set_document_yaml(tree: dict[Any, Any]) -> str | None:
    """`dump_block([{"set": tree}])`, or None when the tree is empty or holds anything but maps, strings and
    integers."""
    if not tree:
        return None
    out = ["- set:\n"]
    try:
        _walk(tree, 4, _Printed(), out)
    except _NotPlain:
        return None
    return "".join(out)


# Each key's head line by depth, shared by every document this process prints: the keys are the same few hundred
# on every switch of a kind (link, mtu, state, the port names swp1s0...), and 4,096 switches printed each anew.
# Bounded: an unusual fabric with many distinct keys starts it afresh rather than growing it without end.
_HEADS: dict[int, dict[str, str]] = {}
_HEADS_KEPT = 200_000


class _Printed:
    """What a document repeats, printed once: each key's head line at each depth (a switch repeats a few hundred
    distinct keys thousands of times: link, mtu, state, type...; kept for every document, `_HEADS`) and each
    string value's text (for this document)."""

    def __init__(self) -> None:
        if sum(map(len, _HEADS.values())) > _HEADS_KEPT:
            _HEADS.clear()
        self.heads = _HEADS  # by depth, then key
        self.values: dict[str, str] = {}

    def heads_at(self, indent: int) -> dict[str, str]:
        found = self.heads.get(indent)
        if found is None:
            found = self.heads[indent] = {}
        return found

    def value(self, value: str) -> str:
        text = self.values[value] = yaml_string(value)
        return text


def _head(heads: dict[str, str], key: str, indent: int) -> str:
    text = heads[key] = f"{' ' * indent}{yaml_key(key)}:"
    return text


def _walk(tree: dict[Any, Any], indent: int, printed: _Printed, out: list[str]) -> None:
    append = out.append
    heads, values = printed.heads_at(indent), printed.values
    for key, value in tree.items():
        # strings only in the cache: True == 1 as a dict key, and must not print as 1
        head = (heads.get(key) or _head(heads, key, indent)) if type(key) is str else f"{' ' * indent}{yaml_key(key)}:"
        kind = type(value)
        if kind is str:
            append(f"{head} {values.get(value) or printed.value(value)}\n")
        elif kind is dict:
            if value:
                append(head + "\n")
                _walk(value, indent + 2, printed, out)
            else:
                append(head + " {}\n")
        elif kind is Shared and value:
            append(head + "\n")
            _walk_shared(value, indent + 2, printed, out)
        elif kind is Stamped and value:
            append(head + "\n")
            append(value.stamp.text(value.filling, indent + 2))
        elif kind is int:
            append(f"{head} {value}\n")
        else:
            raise _NotPlain


def _walk_shared(tree: Shared, indent: int, printed: _Printed, out: list[str]) -> None:
    known = tree.texts.get(indent)
    if known is not None:
        out.append(known)
        return
    start = len(out)
    _walk(tree, indent, printed, out)
    text = "".join(out[start:])
    out[start:] = [text]
    tree.texts[indent] = text
