"""The NVUE YAML and the `nv set` commands rendered for a Cumulus switch say the same thing."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from conftest import EXAMPLES, example_files

from rocefab.models.loader import load_yaml12
from rocefab.platforms.cumulus.config import nv_set_commands

CUMULUS = [(name, f.device) for name in EXAMPLES for f in example_files(name) if f.kind == "nvue-yaml"]


def _paths(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Independent flattening of the loaded YAML: scalars end a path with their value, `{}` with the key."""
    out: list[tuple[str, ...]] = []
    for key, value in tree.items():
        path = (*prefix, str(key))
        if isinstance(value, dict):
            out.extend(_paths(value, path) if value else [path])
        else:
            assert isinstance(value, str | int), f"{'.'.join(path)}: {value!r} is not a string or number"
            assert not isinstance(value, bool), f"{'.'.join(path)}: YAML boolean would not round-trip in NVUE"
            out.append((*path, str(value)))
    return out


@pytest.mark.parametrize(("example", "device"), CUMULUS)
def test_yaml_and_commands_say_the_same(example: str, device: str) -> None:
    files = {f.path: f.content for f in example_files(example)}
    doc = load_yaml12(files[f"switches/{device}.nvue.yaml"])
    assert isinstance(doc, list) and list(doc[0]) == ["set"], "one `- set:` document, as nv config replace takes"
    from_yaml = _paths(doc[0]["set"])
    commands = [line for line in files[f"switches/{device}.nv-set.txt"].splitlines() if not line.startswith("#")]
    from_commands = []
    for line in commands:
        tokens = shlex.split(line)
        assert tokens[:2] == ["nv", "set"], line
        from_commands.append(tuple(tokens[2:]))
    assert len(from_commands) == len(set(from_commands)), "a command is repeated"
    assert sorted(from_commands) == sorted(from_yaml)


def test_commands_flatten_scalars_and_empty_maps() -> None:
    tree = {"interface": {"lo": {"ip": {"address": {"10.0.0.1/32": {}}}}, "swp1": {"description": "a b"}}}
    assert nv_set_commands(tree) == [
        "nv set interface lo ip address 10.0.0.1/32",
        'nv set interface swp1 description "a b"',
    ]


def test_on_stays_a_string_in_yaml() -> None:
    name, device = CUMULUS[0]
    text = {f.path: f.content for f in example_files(name)}[f"switches/{device}.nvue.yaml"]
    assert "enable: 'on'" in text and "enable: on" not in text
