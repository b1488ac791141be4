"""An NVUE `set` tree printed as the YAML `nv config replace` takes, by a walk made for these trees.

A rail leaf's tree has about a thousand maps and three thousand values, and 4,096 switches are rendered for a
98,304-GPU fabric: the general writer (yamltext.dump_block) asks what each node is and how to print it every
time. This walk handles the trees NVUE documents are made of (maps, strings, integers), prints each key once per
document and each shared subtree once per depth; anything else returns None and the caller prints with
dump_block, so the text is always dump_block's (tests/test_nvue.py compares the two on generated trees). The
`nv set` form, written only on request, is config.nv_set_commands' own walk.
"""

from __future__ import annotations

from typing import Any

from rocefab.renderers.yamltext import yaml_key, yaml_string


class _NotPlain(Exception):
    """A value other than a map, a string or an integer."""


class Shared(dict[str, Any]):
    """A subtree the builder puts in many places of one document (every port's link settings, every neighbour's
    BFD timers): the walk prints it once per depth and reuses the text wherever the same object recurs, about a
    third of a rail leaf's nodes. It must not change once in the tree; to every other reader it is a dict."""


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


class _Printed:
    """What a document repeats, printed once per document: each key's head line at each depth (a switch repeats a
    few hundred distinct keys thousands of times: link, mtu, state, type...), each string value's text, and each
    Shared subtree's text per depth."""

    def __init__(self) -> None:
        self.heads: dict[int, dict[str, str]] = {}  # by depth, then key
        self.values: dict[str, str] = {}
        self.shared: dict[tuple[int, int], str] = {}

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
        elif kind is int:
            append(f"{head} {value}\n")
        else:
            raise _NotPlain


def _walk_shared(tree: Shared, indent: int, printed: _Printed, out: list[str]) -> None:
    known = printed.shared.get((id(tree), indent))  # the tree holds the object, so its id stays its own
    if known is not None:
        out.append(known)
        return
    start = len(out)
    _walk(tree, indent, printed, out)
    text = "".join(out[start:])
    out[start:] = [text]
    printed.shared[(id(tree), indent)] = text
