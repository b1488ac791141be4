"""The command line as a user runs it: exit codes, what is written and what is not."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INTENTS

from rocefab.models.loader import load_yaml12


def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=60)


def test_render_writes_every_file_with_a_matching_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = rocefab("render", INTENTS / "pod32.yaml", "-o", out)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())["files"]
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert on_disk == sorted([e["path"] for e in manifest] + ["manifest.json"])
    for entry in manifest:
        assert hashlib.sha256((out / entry["path"]).read_bytes()).hexdigest() == entry["sha256"]
    platforms = {e["kind"] for e in manifest}
    assert {"eos-config", "nxos-config", "nvue-yaml", "host-script", "nccl-env"} <= platforms
    assert "nvue-commands" not in platforms, "one Cumulus form by default: the document apply pushes"
    assert (out / "hosts" / "gpu001.roce.sh").stat().st_mode & 0o111


def test_the_other_cumulus_form_is_written_on_request_and_goes_again_when_not(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert rocefab("render", INTENTS / "pod32.yaml", "-o", out, "--with", "nvue-commands").returncode == 0
    commands = (out / "switches" / "rack3-a.nv-set.txt").read_text()
    assert "nv set qos mapping default-global dscp 26 switch-priority 3" in commands
    assert rocefab("render", INTENTS / "pod32.yaml", "-o", out).returncode == 0
    assert not (out / "switches" / "rack3-a.nv-set.txt").exists(), "a re-render without it removes it"
    assert (out / "switches" / "rack3-a.nvue.yaml").is_file()
    refused = rocefab("render", INTENTS / "pod32.yaml", "-o", tmp_path / "other", "--with", "eos-config")
    assert refused.returncode == 2 and "not a kind rocefab leaves out" in refused.stderr
    assert not (tmp_path / "other").exists()


def test_render_is_deterministic(tmp_path: Path) -> None:
    for run in ("a", "b"):
        assert rocefab("render", INTENTS / "pod32.yaml", "-o", tmp_path / run).returncode == 0
    a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert a == b


def test_unknown_key_exits_2_names_key_and_line_and_writes_nothing(tmp_path: Path) -> None:
    intent = tmp_path / "pod.yaml"
    text = (INTENTS / "pod32.yaml").read_text()
    intent.write_text(text + "spine_count: 4\n")
    line = text.count("\n") + 1
    out = tmp_path / "out"
    result = rocefab("render", intent, "-o", out)
    assert result.returncode == 2
    assert f"{intent}:{line}:1 spine_count: unknown key 'spine_count'" in result.stderr
    assert "nothing was written" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [intent]


def test_semantic_error_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    intent = tmp_path / "bad.yaml"
    text = (INTENTS / "lab.yaml").read_text().replace("fabric:\n", "qos: {cnp: {dscp: 26, priority: 6}}\nfabric:\n")
    intent.write_text(text)
    result = rocefab("render", intent, "-o", tmp_path / "out")
    assert result.returncode == 1
    # Column 13 of the inserted line (the file opens with comments): the `dscp` key inside the flow mapping.
    line = text.splitlines().index("qos: {cnp: {dscp: 26, priority: 6}}") + 1
    said = f"{intent}:{line}:13: error [cnp-dscp-conflict] qos.cnp.dscp: CNP and RoCE data share DSCP 26"
    assert said in result.stderr
    assert not (tmp_path / "out").exists()


def test_validate_and_plan(tmp_path: Path) -> None:
    result = rocefab("validate", INTENTS / "pod32.yaml")
    assert result.returncode == 0
    assert "valid - 10 switches, 32 hosts" in result.stdout
    result = rocefab("plan", INTENTS / "pod32.yaml")
    assert result.returncode == 0 and "rack4-b" in result.stdout
    assert "cables: 128 fabric at 400G, 128 host at 400G, 6 peer-link at 400G, 2 peer-link at 800G" in result.stdout
    document = json.loads(rocefab("plan", INTENTS / "pod32.yaml", "--json").stdout)
    assert len(document["plan"]["switches"]) == 10 and document["plan"]["qos"]["roce_tos"] == 106
    assert [t["role"] for t in document["summary"]["tiers"]] == ["spine", "leaf"]
    assert document["summary"]["bisection_gbps"] == 25600


def test_schema_validates_the_examples_and_rejects_an_unknown_key() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    result = rocefab("schema")
    schema = json.loads(result.stdout)
    validator = jsonschema.Draft202012Validator(schema)
    for path in INTENTS.glob("*.yaml"):
        data = json.loads(json.dumps(load_yaml12(path.read_text())))
        assert not list(validator.iter_errors(data)), path
        data["unexpected"] = 1
        assert list(validator.iter_errors(data)), "additionalProperties must be false"


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    result = rocefab("validate", tmp_path / "nope.yaml")
    assert result.returncode == 2 and "cannot read" in result.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_plan_check_error_found_while_rendering_writes_nothing(tmp_path: Path, jobs: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """render runs the checks on the finished plan while its workers render: an error there is printed as any
    finding is, exits 1, and leaves no output folder behind."""
    from typer.testing import CliRunner

    import rocefab.renderers.pipeline as pipeline
    from rocefab.cli import app
    from rocefab.models.findings import Finding, Severity

    def failing(plan: object) -> list[Finding]:
        return [Finding("late-error", Severity.ERROR, ("topology",), "found on the finished plan")]

    monkeypatch.setattr(pipeline, "check_plan", failing)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(INTENTS / "tor128-3tier.yaml"), "-o", str(out), "-j", jobs])
    assert result.exit_code == 1, result.output
    assert "error [late-error] topology: found on the finished plan" in result.output
    assert "1 error(s) in" in result.output and "nothing was written" in result.output
    assert "wrote" not in result.output
    assert not out.exists()


@pytest.mark.parametrize(("severity", "exit_code"), [("warning", 2), ("error", 1)])
def test_a_refused_output_folder_still_shows_the_plan_checks_first(tmp_path: Path, severity: str, exit_code: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An output folder refused before the render begins: the plan's findings are printed before the refusal,
    and an error among them exits 1 as a check alone would."""
    from typer.testing import CliRunner

    import rocefab.renderers.pipeline as pipeline
    from rocefab.cli import app
    from rocefab.models.findings import Finding, Severity

    def late(plan: object) -> list[Finding]:
        return [Finding("late-finding", Severity(severity), ("topology",), "found on the finished plan")]

    monkeypatch.setattr(pipeline, "check_plan", late)
    blocker = tmp_path / "out"
    blocker.write_text("not a folder\n")
    result = CliRunner().invoke(app, ["render", str(INTENTS / "pod32.yaml"), "-o", str(blocker)])
    assert result.exit_code == exit_code, result.output
    assert f"{severity} [late-finding] topology: found on the finished plan" in result.output
    assert ("exists and is not a folder" in result.output) == (severity == "warning")
    assert blocker.read_text() == "not a folder\n"


def test_a_position_prints_as_itself_not_as_an_emoji(capsys: pytest.CaptureFixture[str]) -> None:
    """rich reads `:100:` as an emoji code; a file:line:col on line 100 must print unchanged."""
    from rocefab.console import err, out

    err.print("intent.yaml:100:9 services.raw.eos.leaf[0]: Input should be a valid string", markup=False)
    out.print("intent.yaml:100:9", markup=False)
    captured = capsys.readouterr()
    assert "intent.yaml:100:9 services" in captured.err and "intent.yaml:100:9" in captured.out
