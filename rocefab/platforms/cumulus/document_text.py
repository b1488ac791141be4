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


def set_document_text(tree: dict[Any, Any], prefix: str, quote: Callable[[str], str]) -> tuple[str, list[str]] | None:
    """(`dump_block([{"set": tree}])`, the `nv set` lines of `tree` under `prefix`, each token through `quote`),
    or None when the tree holds anything but maps, strings and integers."""
    if not tree:
        return None
    yaml_out = ["- set:\n"]
    lines: list[str] = []
    try:
        _walk(tree, 4, prefix, quote, yaml_out, lines)
    except _NotPlain:
        return None
    return "".join(yaml_out), lines


def _walk(tree: dict[Any, Any], indent: int, prefix: str, quote: Callable[[str], str], yaml_out: list[str],
          lines: list[str]) -> None:
    pad = " " * indent
    to_yaml = yaml_out.append
    to_set = lines.append
    for key, value in tree.items():
        head = f"{pad}{yaml_key(key)}:"
        path = f"{prefix} {quote(key if type(key) is str else str(key))}"
        kind = type(value)
        if kind is dict:
            if value:
                to_yaml(head + "\n")
                _walk(value, indent + 2, path, quote, yaml_out, lines)
            else:
                to_yaml(head + " {}\n")
                to_set(path)
        elif kind is str:
            to_yaml(f"{head} {yaml_string(value)}\n")
            to_set(f"{path} {quote(value)}")
        elif kind is int:
            to_yaml(f"{head} {value}\n")
            to_set(f"{path} {value}")
        else:
            raise _NotPlain
