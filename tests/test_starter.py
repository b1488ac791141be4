"""`rocefab init` and `rocefab examples`, registered on a small app of their own (the real CLI registers them the
same way): every accepted option combination writes an intent that passes `rocefab validate`'s check; a
combination that cannot build, a bad value or an existing file exits 2 and writes nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import typer
import yaml
from conftest import EXAMPLES, INTENTS, TEST_VERSION
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rocefab import starter_commands
from rocefab.models.catalogue import MODELS
from rocefab.renderers.pipeline import check_file
from rocefab.starter_intent import MAX_NICS, SPEEDS_GBPS

app = typer.Typer()
app.command()(starter_commands.init)
app.add_typer(starter_commands.examples_app, name="examples")
runner = CliRunner()


def _init(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["init", *args])
    return result.exit_code, result.output


def _valid(path: Path) -> None:
    checked = check_file(path, TEST_VERSION)
    assert checked.ok, [f"{f.code}: {f.message}" for f in checked.findings if f.is_error]


def test_defaults_write_a_valid_intent_with_its_schema_line(tmp_path: Path) -> None:
    target = tmp_path / "fabric.yaml"
    code, output = _init("-o", str(target))
    assert code == 0, output
    _valid(target)
    first, second = target.read_text(encoding="utf-8").splitlines()[:2]
    assert first.startswith("# yaml-language-server: $schema=")
    schema = Path(first.split("=", 1)[1])
    assert (schema if schema.is_absolute() else target.parent / schema).resolve() == \
        starter_commands.installed_schema().resolve()
    assert second.startswith("# 32 GPU servers")


@pytest.mark.parametrize("args", [
    ("--design", "rail"),
    ("--design", "tor", "--nodes", "128", "--nics", "1", "--speed", "200G"),
    ("--design", "rail", "--nodes", "64", "--nics", "4", "--leaf-model", "7060DX5-64S",
     "--spine-model", "n9k-c9364d-gx2a"),
    ("--design", "tor", "--nodes", "48", "--leaf-model", "N9K-C9332D-GX2B", "--speed", "100g", "--name", "pod-a"),
])
def test_typical_options_write_valid_intents(tmp_path: Path, args: tuple[str, ...]) -> None:
    target = tmp_path / "intent.yaml"
    code, output = _init("-o", str(target), *args)
    assert code == 0, output
    _valid(target)


_models = st.sampled_from(sorted(MODELS)).flatmap(
    lambda m: st.sampled_from([m, m.lower(), m.removeprefix("DCS-").removeprefix("N9K-")]))
_speeds = st.sampled_from(SPEEDS_GBPS).flatmap(lambda s: st.sampled_from([f"{s}G", f"{s}g", str(s)]))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(design=st.sampled_from(["tor", "rail"]), nodes=st.integers(1, 200),
       nics=st.none() | st.integers(1, MAX_NICS), speed=_speeds, leaf=_models, spine=_models,
       name=st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True))
def test_any_accepted_combination_validates(design: str, nodes: int, nics: int | None, speed: str, leaf: str,
                                           spine: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "intent.yaml"
        args = ["-o", str(target), "--design", design, "--nodes", str(nodes), "--speed", speed,
                "--leaf-model", leaf, "--spine-model", spine, "--name", name]
        code, output = _init(*args, *(["--nics", str(nics)] if nics is not None else []))
        event(f"exit {code}")
        if code == 0:
            _valid(target)
        else:
            # only a fabric the models cannot build is refused, with the reason
            assert code == 2, output
            assert "nothing was written" in output and "error [" in output, output
            assert not target.exists() and list(Path(folder).iterdir()) == []


@pytest.mark.parametrize(("args", "message"), [
    (("--speed", "300G"), "--speed '300G': expected one of"),
    (("--leaf-model", "SN9999"), "--leaf-model 'SN9999': not in the catalogue"),
    (("--spine-model", "7060"), "--spine-model '7060': not in the catalogue"),
    (("--design", "spine-leaf"), "--design 'spine-leaf': expected tor or rail"),
    (("--name", "Pod_A"), "--name 'Pod_A': lower-case letters"),
    (("--nodes", "0"), "--nodes"),
    (("--nics", "9"), "--nics"),
    (("--speed", "10G"), "cannot run 10G host ports"),
])
def test_bad_values_exit_2_and_write_nothing(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    target = tmp_path / "intent.yaml"
    code, output = _init("-o", str(target), *args)
    assert code == 2
    assert message in output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_kept_without_force(tmp_path: Path) -> None:
    target = tmp_path / "intent.yaml"
    target.write_text("mine\n", encoding="utf-8")
    code, output = _init("-o", str(target))
    assert code == 2 and "--force" in output
    assert target.read_text(encoding="utf-8") == "mine\n"
    code, output = _init("-o", str(target), "--force", "--design", "rail")
    assert code == 0, output
    _valid(target)


def test_examples_lists_every_bundled_intent() -> None:
    listed = {e.name: e for e in starter_commands.bundled_examples()}
    assert sorted(listed) == EXAMPLES
    for name, example in listed.items():
        text = (INTENTS / f"{name}.yaml").read_text(encoding="utf-8")
        comment = " ".join(line.lstrip("#").strip() for line in text.splitlines()[1:] if line.startswith("#"))
        assert example.description and comment.startswith(example.description), name
        assert example.description.endswith("."), name  # a whole sentence
        assert "yaml-language-server" not in example.description
        assert "servers" in example.size
    assert listed["cluster1024-rail"].size == "1024 servers x 8 NICs, rail-optimized"
    assert listed["pod32"].size == "32 servers, 4 leaf pair(s), 2 spine(s)"
    result = runner.invoke(app, ["examples"], terminal_width=300)
    assert result.exit_code == 0, result.output
    for name in EXAMPLES:
        assert name in result.output


def test_examples_copy_writes_a_valid_intent_pointing_at_the_schema(tmp_path: Path) -> None:
    result = runner.invoke(app, ["examples", "copy", "pod32", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    copied = tmp_path / "pod32.yaml"
    original = (INTENTS / "pod32.yaml").read_text(encoding="utf-8")
    lines = copied.read_text(encoding="utf-8").splitlines(keepends=True)
    assert "".join(lines[1:]) == "".join(original.splitlines(keepends=True)[1:])
    schema = Path(lines[0].strip().split("=", 1)[1])
    assert (schema if schema.is_absolute() else tmp_path / schema).resolve() == \
        starter_commands.installed_schema().resolve()
    assert yaml.safe_load(copied.read_text(encoding="utf-8")) == yaml.safe_load(original)
    _valid(copied)
    again = runner.invoke(app, ["examples", "copy", "pod32", "-o", str(tmp_path)])
    assert again.exit_code == 2 and "--force" in again.output
    missing = runner.invoke(app, ["examples", "copy", "pod99", "-o", str(tmp_path)])
    assert missing.exit_code == 2 and "no example 'pod99'" in missing.output
