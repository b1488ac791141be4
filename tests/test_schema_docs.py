"""The JSON Schema as editors read it: every property described, switch models offered as a closed list, the
committed copy (schema/intent.schema.json) equal to what `rocefab schema` prints, and the bundled examples
pointing yaml-language-server at it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import EXAMPLES, INTENTS, ROOT
from typer.testing import CliRunner

from rocefab.cli import app
from rocefab.models.catalogue import MODELS
from rocefab.models.checks import check_intent
from rocefab.models.loader import IntentLoadError, load_intent

SCHEMA_FILE = ROOT / "schema" / "intent.schema.json"
SCHEMA_LINE = "# yaml-language-server: $schema=../schema/intent.schema.json"


@pytest.fixture(scope="module")
def printed() -> dict[str, Any]:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _properties(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property schema anywhere in `node` (nested objects, $defs, anyOf/oneOf members, items)."""
    if isinstance(node, dict):
        for name, prop in node.get("properties", {}).items():
            yield f"{where}.{name}", prop
        for key, value in node.items():
            yield from _properties(value, f"{where}.{key}" if key != "properties" else where)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _properties(item, f"{where}[{i}]")


def test_every_property_has_a_description(printed: dict[str, Any]) -> None:
    found = dict(_properties(printed, "$"))
    assert len(found) > 100  # the walk reaches the $defs, not only the top level
    missing = [path for path, prop in found.items() if not str(prop.get("description", "")).strip()]
    assert not missing, f"properties without a description: {missing}"


def _model_name_schemas(printed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    defs = printed["$defs"]
    named = {
        "Spines.model": defs["Spines"]["properties"]["model"],
        "LeafPair.model": defs["LeafPair"]["properties"]["model"],
        "TierModels.leaf": defs["TierModels"]["properties"]["leaf"],
        "TierModels.spine": defs["TierModels"]["properties"]["spine"],
    }
    superspine = defs["TierModels"]["properties"]["superspine"]
    named["TierModels.superspine"] = next(s for s in superspine["anyOf"] if s.get("type") == "string")
    return named


def test_switch_model_fields_list_the_catalogue(printed: dict[str, Any]) -> None:
    for path, schema in _model_name_schemas(printed).items():
        assert schema.get("enum") == sorted(MODELS), path
    # No other field carries the list: a new field naming a model goes through ModelName.
    with_models = [path for path, prop in _properties(printed, "$") if set(prop.get("enum", ())) & set(MODELS)]
    assert len(with_models) == 4  # superspine's enum sits in its anyOf member, not on the property itself


def _example_document(name: str) -> Any:
    return yaml.safe_load((INTENTS / f"{name}.yaml").read_text(encoding="utf-8"))


def test_an_editor_refuses_an_unknown_model_but_takes_the_examples(printed: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(printed)
    for name in EXAMPLES:
        errors = [e.message for e in validator.iter_errors(_example_document(name))]
        assert not errors, (name, errors)
    document = _example_document("lab")
    document["topology"]["spines"]["model"] = "SN9999"
    assert any("SN9999" in e.message for e in validator.iter_errors(document))


def test_validation_still_names_the_catalogue_itself(tmp_path: Path) -> None:
    """The enum is for editors only: the loader keeps its own lookup and its messages."""
    text = (INTENTS / "lab.yaml").read_text(encoding="utf-8").replace("model: SN5600", "model: sn5600")
    (tmp_path / "lower.yaml").write_text(text, encoding="utf-8")
    assert load_intent(tmp_path / "lower.yaml").intent.topology.spines.model == "sn5600"  # type: ignore[union-attr]
    (tmp_path / "unknown.yaml").write_text(text.replace("sn5600", "SN9999"), encoding="utf-8")
    try:
        loaded = load_intent(tmp_path / "unknown.yaml")
    except IntentLoadError as exc:  # pragma: no cover - the schema would have to refuse it
        pytest.fail(f"the schema refused the unknown model instead of the catalogue check: {exc.errors}")
    _, findings = check_intent(loaded.intent)
    assert any("SN9999" in f.message for f in findings)


def test_committed_schema_is_the_printed_one(printed: dict[str, Any]) -> None:
    committed = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert committed == printed, (
        "schema/intent.schema.json is out of date; regenerate it with "
        "`rocefab schema -o schema/intent.schema.json` and commit it")
    assert SCHEMA_FILE.read_text(encoding="utf-8") == json.dumps(printed, indent=2) + "\n"


def test_the_package_carries_the_schema() -> None:
    from importlib.resources import files

    assert (files("rocefab") / "schema" / "intent.schema.json").is_file()


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_point_their_editor_at_the_schema(name: str) -> None:
    path = INTENTS / f"{name}.yaml"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == SCHEMA_LINE
    target = (path.parent / first.split("$schema=", 1)[1]).resolve()
    assert target == SCHEMA_FILE.resolve()
