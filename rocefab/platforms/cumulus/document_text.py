"""An NVUE `set` tree printed both ways in one walk: the YAML `nv config replace` takes and the `nv set` lines.

A rail leaf's tree has about a thousand maps and three thousand values, and 4,096 switches are rendered for a
98,304-GPU fabric: walking each tree once instead of twice (yamltext.dump_block, then config.nv_set_commands)
saves a third of the switch configs' time. The walk handles the trees NVUE documents are made of (maps, strings,
integers); anything else returns None and the caller prints with the two general walkers, so the text is always
theirs (tests/test_nvue.py compares the two on generated trees).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rocefab.renderers.yamltext import yaml_key, yaml_string


class _NotPlain(Exception):
    """A value other than a map, a string or an integer."""


class Shared(dict[str, Any]):
    """A subtree the builder puts in many places of one document (every port's link settings, every neighbour's
    BFD timers): the walk prints it once per depth and reuses the text wherever the same object recurs, about a
    third of a rail leaf's nodes. It must not change once in the tree; to every other reader it is a dict."""


def set_document_text(tree: dict[Any, Any], prefix: str, quote: Callable[[str], str]) -> tuple[str, list[str]] | None:
    """(`dump_block([{"set": tree}])`, the `nv set` lines of `tree` under `prefix`, each token through `quote`),
    or None when the tree holds anything but maps, strings and integers."""
    if not tree:
        return None
    yaml_out = ["- set:\n"]
    lines: list[str] = []
    try:
        _walk(tree, 4, prefix, _Printed(quote), yaml_out, lines)
    except _NotPlain:
        return None
    return "".join(yaml_out), lines


class _Printed:
    """Each key's YAML text and each token's `nv set` text, asked for once per document: a switch repeats a few
    hundred distinct keys and values thousands of times (link, mtu, state, type, swp...)."""

    def __init__(self, quote: Callable[[str], str]) -> None:
        self.quote = quote
        self.keys: dict[Any, str] = {}
        self.tokens: dict[str, str] = {}
        # per Shared subtree and depth: its YAML text and its `nv set` lines less the path before them
        self.shared: dict[tuple[int, int], tuple[str, list[str]]] = {}

    def key(self, key: Any) -> str:
        text = self.keys[key] = yaml_key(key)
        return text

    def token(self, token: str) -> str:
        text = self.tokens[token] = self.quote(token)
        return text


def _walk(tree: dict[Any, Any], indent: int, prefix: str, printed: _Printed, yaml_out: list[str],
          lines: list[str]) -> None:
    pad = " " * indent
    to_yaml = yaml_out.append
    to_set = lines.append
    keys, tokens = printed.keys, printed.tokens
    for key, value in tree.items():
        # strings only in the caches' fast path: True == 1 as a dict key, and must not print as 1
        if type(key) is str:
            head = f"{pad}{keys.get(key) or printed.key(key)}:"
            path = f"{prefix} {tokens.get(key) or printed.token(key)}"
        else:
            head = f"{pad}{yaml_key(key)}:"
            path = f"{prefix} {printed.quote(str(key))}"
        kind = type(value)
        if kind is dict:
            if value:
                to_yaml(head + "\n")
                _walk(value, indent + 2, path, printed, yaml_out, lines)
            else:
                to_yaml(head + " {}\n")
                to_set(path)
        elif kind is Shared and value:
            to_yaml(head + "\n")
            _walk_shared(value, indent + 2, path, printed, yaml_out, lines)
        elif kind is str:
            to_yaml(f"{head} {yaml_string(value)}\n")
            to_set(f"{path} {tokens.get(value) or printed.token(value)}")
        elif kind is int:
            to_yaml(f"{head} {value}\n")
            to_set(f"{path} {value}")
        else:
            raise _NotPlain


def _walk_shared(tree: Shared, indent: int, path: str, printed: _Printed, yaml_out: list[str],
                 lines: list[str]) -> None:
    known = printed.shared.get((id(tree), indent))  # the tree holds the object, so its id stays its own
    if known is not None:
        text, tails = known
        yaml_out.append(text)
        lines.extend([path + tail for tail in tails])
        return
    yaml_from, lines_from = len(yaml_out), len(lines)
    _walk(tree, indent, path, printed, yaml_out, lines)
    text = "".join(yaml_out[yaml_from:])
    yaml_out[yaml_from:] = [text]
    cut = len(path)
    printed.shared[(id(tree), indent)] = (text, [line[cut:] for line in lines[lines_from:]])
