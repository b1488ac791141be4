"""The NVUE YAML and the `nv set` commands rendered for a Cumulus switch say the same thing."""

from __future__ import annotations

import copy
import shlex
from typing import Any

import pytest
from conftest import EXAMPLES, example_files
from hypothesis import given
from hypothesis import strategies as st

from rocefab.models.loader import load_yaml12
from rocefab.platforms.cumulus.config import nv_set_commands
from rocefab.platforms.cumulus.document_text import Shared, set_document_yaml
from rocefab.renderers.yamltext import dump_block

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


_TOKENS = st.sampled_from(["swp1", "on", "off", "yes", "10.0.0.1/32", "a b", "x:y", "#", "", "9216", "it's", "é"])
_TREES = st.recursive(
    st.one_of(_TOKENS, st.integers(min_value=-5, max_value=70000)),
    lambda children: st.dictionaries(st.one_of(_TOKENS, st.integers(0, 4096)), children, max_size=4),
    max_leaves=40,
)

_SLOTS = [("interface", "swp1", "link"), ("interface", "swp2", "link"), ("vrf", "bfd"), ("deep", "a", "b", "c"),
          ("top",)]


@given(st.dictionaries(_TOKENS, _TREES, min_size=1, max_size=5))
def test_the_fast_walk_prints_what_the_general_writer_prints(tree: dict[Any, Any]) -> None:
    """The switch configs are printed by a walk made for NVUE trees (document_text); its text must be
    dump_block's."""
    try:
        expected: str | None = dump_block([{"set": tree}])
    except ValueError:
        expected = None  # a key no configuration may have: the fast walk refuses it too
    if expected is None:
        with pytest.raises(ValueError):
            set_document_yaml(tree)
    else:
        assert set_document_yaml(tree) == expected


@given(_TREES.filter(lambda t: isinstance(t, dict) and bool(t)), st.lists(st.sampled_from(_SLOTS), min_size=1))
def test_a_shared_subtree_prints_as_a_copy_would(subtree: dict[Any, Any], slots: list[tuple[str, ...]]) -> None:
    """One Shared object in several places and depths of a tree: the walk reuses its text, which must be what
    the general writer prints for the same tree with a plain copy in each place."""
    shared, copied = Shared(subtree), subtree
    tree: dict[Any, Any] = {}
    plain: dict[Any, Any] = {}
    for slot in slots:
        for target, value in ((tree, shared), (plain, copy.deepcopy(copied))):
            node = target
            for key in slot[:-1]:
                node = node.setdefault(key, {})
            node[slot[-1]] = value
    try:
        expected = dump_block([{"set": plain}])
    except ValueError:
        return  # a key no configuration may have: covered by the test above
    assert set_document_yaml(tree) == expected
    assert nv_set_commands(tree) == nv_set_commands(plain)


def test_one_walk_leaves_other_values_to_the_general_walkers() -> None:
    assert set_document_yaml({"a": {"b": True}}) is None
    assert set_document_yaml({"a": [1]}) is None
    assert set_document_yaml({}) is None
