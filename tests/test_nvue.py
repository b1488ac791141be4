"""The NVUE YAML and the `nv set` commands rendered for a Cumulus switch say the same thing."""

from __future__ import annotations

import copy
import shlex
from typing import Any

import pytest
from conftest import EXAMPLES, example_files
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.models.loader import load_yaml12
from rocefab.platforms.cumulus.config import nv_set_commands
from rocefab.platforms.cumulus.document_text import Shared, Stamp, set_document_yaml
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


_TOKENS = st.sampled_from(["swp1", "on", "off", "yes", "10.0.0.1/32", "a b", "x:y", "#", "", "9216", "it's", "é",
                          "{0}", "a{b}"])
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


class _Slot:
    """Where a stamp's value goes in a model tree (tests only)."""

    def __init__(self, index: int) -> None:
        self.index = index


def _filled(model: Any, values: tuple[Any, ...]) -> Any:
    if isinstance(model, _Slot):
        return values[model.index]
    if isinstance(model, dict):
        return {_filled(k, values): _filled(v, values) for k, v in model.items()}
    return model


def _leaf_paths(tree: dict[Any, Any], path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = []
    for key, value in tree.items():
        found += _leaf_paths(value, (*path, key)) if isinstance(value, dict) else [(*path, key)]
    return found


_VALUES = st.one_of(_TOKENS, st.integers(min_value=0, max_value=70000))


@settings(max_examples=400, deadline=None)
@given(_TREES.filter(lambda t: isinstance(t, dict) and bool(t)), st.data())
def test_stamped_subtrees_print_as_their_plain_copies_would(shape: dict[Any, Any], data: st.DataObject) -> None:
    """Subtrees a Stamp makes alike, with values put in where the model has stand-ins (values of the model and a
    key alone in its map), in several places and depths of a tree: printed as the general writer prints plain
    copies, whatever the values (ones to quote, integers, booleans, which the walk leaves to the general writer)."""
    model = copy.deepcopy(shape)
    leaves = _leaf_paths(model)
    chosen = data.draw(st.lists(st.sampled_from(leaves), unique=True, max_size=3)) if leaves else []
    for index, path in enumerate(chosen):
        node = model
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = _Slot(index)
    count = len(chosen)
    if data.draw(st.booleans()):
        model["keyed"] = {_Slot(count): data.draw(_TREES)}  # a key of its own map
        count += 1
    if count == 0:
        return
    stamp = Stamp(lambda *values: _filled(model, values), count)
    tree: dict[Any, Any] = {}
    plain: dict[Any, Any] = {}
    for n, slot in enumerate(data.draw(st.lists(st.sampled_from(_SLOTS), min_size=1, max_size=4))):
        values = data.draw(st.tuples(*[_VALUES] * count))
        for target, value in ((tree, stamp.make(*values)), (plain, _filled(model, values))):
            node = target
            for key in slot[:-1]:
                node = node.setdefault(key, {})
            node[f"{slot[-1]}{n}"] = value
    assert _as_rendered(tree) == _as_rendered(plain)
    assert nv_set_commands(tree) == nv_set_commands(plain)


def _as_rendered(tree: dict[Any, Any]) -> str:
    """The text render_switch gives a tree: the walk's, or the general writer's where the walk leaves it (None);
    "refused" where either refuses a key no configuration may have."""
    try:
        return set_document_yaml(tree) or dump_block([{"set": tree}])
    except ValueError:
        return "refused"


def test_a_stamped_boolean_leaves_the_document_to_the_general_writer() -> None:
    stamp = Stamp(lambda a, b: {"description": a, "enable": b}, 2)
    tree = {"interface": {"swp1": stamp.make("x", 1), "swp2": stamp.make("y", True)}}  # type: ignore[arg-type]
    assert set_document_yaml(tree) is None
    assert set_document_yaml({"interface": {"swp1": stamp.make("x", 1)}}) == (
        "- set:\n    interface:\n      swp1:\n        description: x\n        enable: 1\n")


def test_a_stamp_refuses_a_model_its_text_could_not_stand_for() -> None:
    shared_map = Stamp(lambda a: {"address": {a: {}, "10.0.0.1/32": {}}}, 1)
    twice = Stamp(lambda a: {"description": a, "alias": a}, 1)
    for stamp in (shared_map, twice):
        with pytest.raises(ValueError):
            set_document_yaml({"interface": {"swp1": stamp.make("x")}})


def test_one_walk_leaves_other_values_to_the_general_walkers() -> None:
    assert set_document_yaml({"a": {"b": True}}) is None
    assert set_document_yaml({"a": [1]}) is None
    assert set_document_yaml({}) is None
