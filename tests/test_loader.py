"""Loading: positions, YAML 1.2 booleans, duplicate keys, error wording."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import INTENTS

from rocefab.models.loader import IntentLoadError, load_intent, parse_yaml


def _errors(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "intent.yaml"
    path.write_text(text)
    with pytest.raises(IntentLoadError) as info:
        load_intent(path)
    return [str(e).replace(str(path), "F") for e in info.value.errors]


def test_positions_of_keys_and_items() -> None:
    _, source = parse_yaml("a:\n  b: 1\n  c:\n    - x\n    - y\n", "f.yaml")
    assert source.locate(("a", "b")).line == 2
    assert (source.locate(("a", "c", 1)).line, source.locate(("a", "c", 1)).col) == (5, 7)
    # An absent path falls back to its nearest ancestor.
    assert source.locate(("a", "c", 7, "z")).line == 4 - 1


def test_yes_and_on_stay_strings() -> None:
    data, _ = parse_yaml("a: yes\nb: on\nc: true\nd: off\n", "f.yaml")
    assert data == {"a": "yes", "b": "on", "c": True, "d": "off"}


def test_duplicate_keys_are_errors(tmp_path: Path) -> None:
    errors = _errors(tmp_path, "fabric: {name: a}\nfabric: {name: b}\n")
    assert errors == ["F:2:1 fabric: duplicate key 'fabric' (first given on line 1); YAML would silently keep only "
                      "the last one"]


def test_unknown_key_names_line_and_suggests(tmp_path: Path) -> None:
    text = (INTENTS / "lab.yaml").read_text().replace("  spines: {model: SN5600, count: 1}",
                                                        "  spines: {model: SN5600, count: 1, cuont: 2}")
    errors = _errors(tmp_path, text)
    assert len(errors) == 1
    assert errors[0].startswith("F:17:37 topology.spines.cuont: unknown key 'cuont'; did you mean 'count'?")


def test_missing_key_points_at_parent(tmp_path: Path) -> None:
    text = (INTENTS / "lab.yaml").read_text().replace("  asn: {spine: 65000, leaf_first: 65101}\n", "")
    errors = _errors(tmp_path, text)
    assert errors == ["F:10:1 underlay.asn: required key 'asn' is missing"]


def test_not_a_mapping(tmp_path: Path) -> None:
    assert _errors(tmp_path, "- a\n- b\n") == ["F:1:1 the file must hold a YAML mapping at top level"]


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(IntentLoadError, match="cannot read"):
        load_intent(tmp_path / "absent.yaml")


def test_all_examples_load() -> None:
    for path in INTENTS.glob("*.yaml"):
        assert load_intent(path).intent.fabric.name


def test_numbers_follow_yaml_12() -> None:
    data, _ = parse_yaml("mac: 44:38:39:12:00:02\nzero_led: 010\nhex: 0x1F\ntime: 1:30\nspeed: 400\n", "f.yaml")
    # YAML 1.1 would read a base-60 integer, an octal 8 and 90 seconds.
    assert data == {"mac": "44:38:39:12:00:02", "zero_led": 10, "hex": 31, "time": "1:30", "speed": 400}
