"""What a command line is expected to do before anything rocefab-specific: --version, -h everywhere,
flags without type placeholders, completion, several intents per validate, JSON for machines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from conftest import INTENTS
from typer.testing import CliRunner

from rocefab import __version__
from rocefab.cli import app

runner = CliRunner()


def _commands() -> list[list[str]]:
    """Every command path of the app, e.g. ["lab", "up"]."""
    root = typer.main.get_command(app)
    paths: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():  # a group's commands
            walk(sub, [*path, name])

    walk(root, [])
    return paths


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0 and result.output == f"rocefab {__version__}\n"


@pytest.mark.parametrize("path", _commands(), ids=lambda p: " ".join(p) or "rocefab")
def test_every_command_takes_h_and_shows_flags_plainly(path: list[str]) -> None:
    short = runner.invoke(app, [*path, "-h"], prog_name="rocefab")
    long = runner.invoke(app, [*path, "--help"], prog_name="rocefab")
    assert short.exit_code == long.exit_code == 0, short.output
    assert short.output == long.output
    assert "<bool>" not in short.output, "a flag takes no value; its help must not show a type"
    assert "Usage: rocefab" in short.output


def test_shell_completion_is_offered() -> None:
    assert "--install-completion" in runner.invoke(app, ["-h"]).output


def test_validate_takes_several_intents_and_the_worst_exit_code_wins(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("fabric: {name: x}\nunknown_key: 1\n")
    clash = tmp_path / "clash.yaml"
    clash.write_text((INTENTS / "lab.yaml").read_text() + "qos: {cnp: {dscp: 26, priority: 6}}\n")
    both_good = runner.invoke(app, ["validate", str(INTENTS / "lab.yaml"), str(INTENTS / "pod32.yaml")])
    assert both_good.exit_code == 0
    assert both_good.stdout.count(": valid - ") == 2
    assert runner.invoke(app, ["validate", str(INTENTS / "lab.yaml"), str(clash)]).exit_code == 1
    assert runner.invoke(app, ["validate", str(bad), str(clash), str(INTENTS / "lab.yaml")]).exit_code == 2


def test_validate_json_is_one_document_with_positions(tmp_path: Path) -> None:
    clash = tmp_path / "clash.yaml"
    clash.write_text((INTENTS / "lab.yaml").read_text() + "qos: {cnp: {dscp: 26, priority: 6}}\n")
    result = runner.invoke(app, ["validate", "--json", str(INTENTS / "pod32.yaml"), str(clash)])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    good, bad = document["intents"]
    assert good["valid"] and good["switches"] == 10 and good["hosts"] == 32
    assert all({"severity", "code", "field", "line", "col", "message"} <= set(f) for f in good["findings"])
    assert not bad["valid"] and bad["exit_code"] == 1


def test_exit_code_on_a_push_is_refused_not_ignored(tmp_path: Path) -> None:
    """`--exit-code` only means something for a dry run; on a push it is an input error, before any device or
    inventory is touched (the inventory named does not even exist)."""
    result = runner.invoke(app, ["apply", str(INTENTS / "lab.yaml"), "-i", str(tmp_path / "none.yaml"),
                                 "--exit-code", "--yes"])
    assert result.exit_code == 2
    assert "--exit-code needs --dry-run" in result.output


def test_lab_fault_help_lists_every_fault_the_lab_knows() -> None:
    """`rocefab lab fault --help` names the kinds from a copy (the lab is an extra, not imported for --help):
    the copy is the lab's own list, in its order."""
    from rocefab.lab.control import KINDS
    from rocefab.lab_commands import KIND_NAMES

    assert tuple(KINDS) == KIND_NAMES
