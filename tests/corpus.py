"""The device output corpus (tests/fixtures/devices, see its README): loading samples by platform and command,
and the transformations the reader and emulator tests apply to them — every counter set to one value (a faulted
device, or a clean one), every way a release could drift (a key dropped or renamed, a table emptied, a one-row
table printed as a dict or a list), and the shape of an answer for comparing the lab's emulators with it."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "devices"
EVIDENCE = ("captured", "vendor-example", "reconstructed")
PLATFORMS = ("eos", "nxos", "cumulus", "host")


@cache
def index(platform: str) -> dict[str, Any]:
    found = yaml.safe_load((FIXTURES / platform / "index.yaml").read_text(encoding="utf-8"))
    assert isinstance(found, dict)
    return found


def platforms() -> list[str]:
    return [p for p in PLATFORMS if (FIXTURES / p / "index.yaml").is_file()]


def entries(platform: str, command: str) -> list[dict[str, Any]]:
    """Index entries whose command is `command` (as the reader sends it, a prefix: `show ip route` matches the
    sample for any prefix)."""
    return [e for e in index(platform).get("samples") or [] if str(e["command"]).startswith(command)]


def load(platform: str, file: str) -> Any:
    path = FIXTURES / platform / file
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else text


def sample(platform: str, command: str, release: str | None = None) -> Any:
    """The one sample of `command` (in `release`'s folder when given)."""
    found = [e for e in entries(platform, command) if release is None or e["file"].startswith(f"{release}/")]
    found = [e for e in found if e["file"].endswith(".json")] or found
    assert len(found) == 1, f"{platform}: {len(found)} samples of {command!r} (release {release})"
    return load(platform, found[0]["file"])


# -- counters set to one value ---------------------------------------------------------------------------------------
def _is_count(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.isdigit())


def counters_set(tree: Any, value: int, skip: frozenset[str] = frozenset()) -> Any:
    """`tree` with every counter (a JSON integer or a string of digits) set to `value`, in the type it had. Keys in
    `skip` hold numbers that are names, not counters (a CoS, a qos-group, a module), and keep them."""
    if isinstance(tree, dict):
        return {k: (v if k in skip else counters_set(v, value, skip)) for k, v in tree.items()}
    if isinstance(tree, list):
        return [counters_set(v, value, skip) for v in tree]
    if _is_count(tree):
        return str(value) if isinstance(tree, str) else value
    return tree


# -- drift: every single change a release could make -----------------------------------------------------------------
Path_ = tuple[Any, ...]


def _paths(tree: Any, at: Path_ = ()) -> Iterator[Path_]:
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield (*at, key)
            yield from _paths(value, (*at, key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _paths(value, (*at, i))


def _parent(tree: Any, path: Path_) -> Any:
    for step in path[:-1]:
        tree = tree[step]
    return tree


def drifts(tree: Any) -> Iterator[tuple[str, Any]]:
    """(what changed, the changed copy) for each key dropped, each key renamed, each value made a word that is no
    count, each list emptied or cut to its first row, each one-row list printed as a dict and each dict row as a
    one-row list."""
    for path in _paths(tree):
        parent = _parent(tree, path)
        key = path[-1]
        value = parent[key]
        label = "/".join(map(str, path))
        for what, change in (("dropped", "drop"), ("renamed", "rename"), ("not a count", "word")):
            if (change == "word" and not _is_count(value)) or (change != "word" and not isinstance(key, str)):
                continue
            copied = copy.deepcopy(tree)
            target = _parent(copied, path)
            if change == "drop":
                del target[key]
            elif change == "rename":
                target[f"{key}-renamed"] = target.pop(key)
            else:
                target[key] = "n/a"
            yield f"{label} {what}", copied
        if isinstance(value, list) and value:
            for what, replacement in (("emptied", []), ("cut to one row", value[:1]),
                                      ("one row as a dict", value[0])):
                copied = copy.deepcopy(tree)
                _parent(copied, path)[key] = copy.deepcopy(replacement)
                yield f"{label} {what}", copied
        elif isinstance(value, dict) and re.match(r"ROW_", str(key)):
            copied = copy.deepcopy(tree)
            _parent(copied, path)[key] = [copy.deepcopy(value)]
            yield f"{label} as a one-row list", copied


# -- shape ------------------------------------------------------------------------------------------------------------
# keys that are data, not names of fields: ports, numbers, classes, addresses, prefixes, configuration sessions
_DATA_KEY = re.compile(r"(?:Ethernet|Et|Port-Channel|Po|Vlan|Vl|Loopback|Lo|Management|mgmt|swp|eth|bond|peerlink)"
                       r"[\d/.:-]*\d.*|\d+|TC\d+(?:-\d+)?|DP\d+(?:-\d+)?|[\d.]+(?:/\d+)?|[0-9a-fA-F:]+(?:%\S+)?(?:/\d+)?"
                       r"|(?:rocefab|napalm)_[\w-]+")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "digits" if value.isdigit() else "str"
    return "null" if value is None else type(value).__name__


def shape(tree: Any, at: str = "") -> set[str]:
    """Every path of `tree` with the kind of what it leads to; keys that are data (a port, a class, an address)
    read as `*`, list items as `[]`, and a one-row NX-API table printed as a dict as the list it would be."""
    out: set[str] = set()
    if isinstance(tree, dict):
        for key, value in tree.items():
            step = "*" if _DATA_KEY.fullmatch(str(key)) else str(key)
            if str(key).startswith("ROW_") and isinstance(value, dict):
                value = [value]
            out |= shape(value, f"{at}/{step}")
        return out or {f"{at}: dict"}
    if isinstance(tree, list):
        for item in tree:
            out |= shape(item, f"{at}[]")
        return out or {f"{at}: list"}
    return {f"{at}: {_kind(tree)}"}


def beyond(printed: set[str], allowed: set[str]) -> set[str]:
    """Paths of `printed` no sample shows. An empty table (`/peers: dict`, `/peerList: list`) is within the samples
    where they have anything below that path: a device with nothing to list prints the table empty."""
    out = set()
    for path in printed - allowed:
        head, _, kind = path.rpartition(": ")
        if kind in ("dict", "list") and any(a.startswith(head + ("[]" if kind == "list" else "/")) for a in allowed):
            continue
        out.add(path)
    return out
