"""Block-style YAML for configuration trees of maps, lists, strings, integers and booleans.

PyYAML spends most of a large fabric's render time representing nodes in Python. This writer walks
the tree directly and prints the text PyYAML's safe dumper prints for the same tree (block style,
insertion order, indentless lists, width 1000); it asks PyYAML only how to quote each distinct
string, so quoting stays exactly PyYAML's.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import yaml

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# Strings PyYAML prints plain, recognised without asking it: ASCII words (a letter first, so never a number,
# date or indicator) joined by single spaces, and dotted-quad addresses with an optional prefix length. Words
# a YAML 1.1 reader turns into booleans or null are left to PyYAML, which quotes them. Configuration is
# mostly such strings, and most are unique (descriptions, addresses), so the cache alone would not help.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*(?: [A-Za-z0-9_./-]+)*|[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?")
_YAML11_WORDS = frozenset({"yes", "no", "true", "false", "on", "off", "null"})


def _string(text: str) -> str:
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML11_WORDS:
        return text
    return _asked(text)


@lru_cache(maxsize=65536)
def _asked(text: str) -> str:
    dumped: str = yaml.dump([text], Dumper=_Dumper, default_flow_style=False, width=1000)
    scalar = dumped[2:-1]  # "- <scalar>\n"
    if "\n" in scalar:
        raise ValueError(f"multi-line string {text!r} in a configuration tree")
    return scalar


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as configuration YAML")


_KEYS: dict[object, str] = {}  # keys already printed: a dict lookup is cheaper than the lru_cache's call


def _key(key: str | int | bool) -> str:
    text = _scalar(key)
    # PyYAML writes keys it cannot print simply (escapes, over 128 characters) as "? key"; configuration
    # keys are names, addresses and numbers, so such a key is a bug upstream.
    if text.startswith('"') or len(text) > 128:
        raise ValueError(f"{key!r} is not a simple mapping key")
    if type(key) is str and len(_KEYS) < 65536:  # strings only: True == 1, and 1 must not answer for True
        _KEYS[key] = text
    return text


def yaml_key(key: str | int | bool) -> str:
    """`key` as this writer prints a mapping key."""
    return _KEYS.get(key) or _key(key)


yaml_string = _string  # a string as this writer prints it, quoted as PyYAML would


def _inline(value: object) -> str | None:
    """The text after `key:` or `- ` when the value fits on that line, else None."""
    if isinstance(value, dict):
        return None if value else "{}"
    if isinstance(value, list | tuple):
        return None if value else "[]"
    return _scalar(value)


def _mapping(tree: dict[Any, Any], indent: int, lead: str, out: list[str]) -> None:
    """Write `tree` with its keys at `indent`; the first line starts with `lead` instead of spaces.

    Exact types first (a config tree is plain dicts, strings and ints): the common cases cost one `type()`
    and one comparison each, and everything else takes the general `_inline` path."""
    pad = " " * indent
    deeper = " " * (indent + 2)
    first = lead
    append = out.append
    for key, value in tree.items():
        head = f"{first}{_KEYS.get(key) or _key(key)}:"
        first = pad
        kind = type(value)
        if kind is dict:
            if value:
                append(head + "\n")
                _mapping(value, indent + 2, deeper, out)
            else:
                append(head + " {}\n")
        elif kind is str:
            append(f"{head} {_string(value)}\n")
        elif kind is int:
            append(f"{head} {value}\n")
        else:
            inline = _inline(value)
            if inline is not None:
                append(f"{head} {inline}\n")
            elif isinstance(value, dict):
                append(head + "\n")
                _mapping(value, indent + 2, deeper, out)
            else:
                append(head + "\n")
                _sequence(value, indent, pad, out)  # PyYAML indents a list no further than its key


def _sequence(items: list[Any] | tuple[Any, ...], indent: int, lead: str, out: list[str]) -> None:
    pad = " " * indent
    first = lead
    for item in items:
        dash = f"{first}- "
        first = pad
        inline = _inline(item)
        if inline is not None:
            out.append(f"{dash}{inline}\n")
        elif isinstance(item, dict):
            _mapping(item, indent + 2, dash, out)
        else:
            _sequence(item, indent + 2, dash, out)


def dump_block(document: dict[Any, Any] | list[Any]) -> str:
    """The document as block YAML, byte for byte what `yaml.dump(document, Dumper=SafeDumper,
    sort_keys=False, default_flow_style=False, width=1000)` prints.

    >>> print(dump_block([{"set": {"interface": {"swp1": {"link": {"mtu": 9216, "state": {"up": {}}}}},
    ...                                "enable": "on", "list": [1, True]}}]), end="")
    - set:
        interface:
          swp1:
            link:
              mtu: 9216
              state:
                up: {}
        enable: 'on'
        list:
        - 1
        - true
    """
    inline = _inline(document)
    if inline is not None:
        return inline + "\n"
    out: list[str] = []
    if isinstance(document, dict):
        _mapping(document, 0, "", out)
    else:
        _sequence(document, 0, "", out)
    return "".join(out)
