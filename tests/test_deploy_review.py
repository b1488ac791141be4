"""The deploy commands' pure parts: what a rendered folder must be to be pushed, exit codes, the JSON document,
the newest backup, and the environment variable for the inventory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.main import get_command

from rocefab import __version__
from rocefab.cli import app
from rocefab.deploy.fleet import DeviceResult, Status
from rocefab.deploy_flow import outcome
from rocefab.deploy_rendered import provenance_problem, reviewed_files
from rocefab.deploy_report import print_json
from rocefab.renderers.output import Manifest, Source, manifest_json, read_manifest, source_of, write_files
from rocefab.renderers.render import RenderedFile
from rocefab.rollback_flow import latest, read_backup


def _folder(tmp_path: Path, intent: Path, version: str = __version__) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    entries = write_files(out, [RenderedFile("switches/leaf1-a.cfg", "leaf1-a", "eos-config", "hostname leaf1-a\n"),
                                RenderedFile("hosts/gpu001.roce.sh", "gpu001", "host-script", "#!/bin/bash\n"),
                                RenderedFile("cabling.csv", "fabric", "cabling-plan", "a,b\n")])
    (out / "manifest.json").write_text(manifest_json(entries, source_of(intent, version)))
    return out


@pytest.fixture
def intent(tmp_path: Path) -> Path:
    path = tmp_path / "intent.yaml"
    path.write_text("fabric: {name: x}\n")
    return path


def _exit_code(call: object) -> int:
    with pytest.raises(typer.Exit) as raised:
        assert callable(call)
        call()
    return raised.value.exit_code


def test_a_folder_rendered_from_this_intent_by_this_version_is_pushed_as_it_is(tmp_path: Path, intent: Path) -> None:
    out = _folder(tmp_path, intent)
    assert provenance_problem(intent, read_manifest(out)) is None
    files = reviewed_files(intent, out, allow_edited=False)
    assert [(f.device, f.kind, f.content) for f in files] == [  # in manifest order; fabric files are never pushed
        ("gpu001", "host-script", "#!/bin/bash\n"), ("leaf1-a", "eos-config", "hostname leaf1-a\n")]


def test_another_intent_version_or_an_unrecorded_source_is_refused(tmp_path: Path, intent: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = _folder(tmp_path, intent, version="0.0.1")
    problem = provenance_problem(intent, read_manifest(out))
    assert problem is not None and f"rendered by rocefab 0.0.1, this is rocefab {__version__}" in problem
    assert _exit_code(lambda: reviewed_files(intent, out, allow_edited=True)) == 2
    assert "nothing was changed" in capsys.readouterr().err
    manifest = read_manifest(out)
    intent.write_text("fabric: {name: y}\n")  # edited since the render
    changed = provenance_problem(intent, Manifest(manifest.entries, source_of(tmp_path / "old.yaml", __version__)
                                                  if (tmp_path / "old.yaml").write_text("fabric: {name: x}\n")
                                                  else None))
    assert changed is not None and f"not {intent} as it is now" in changed
    other = Manifest(manifest.entries, Source(__version__, "elsewhere.yaml", "0" * 64))
    problem = provenance_problem(intent, other)
    assert problem is not None and "rendered from another intent (elsewhere.yaml" in problem
    unrecorded = provenance_problem(intent, Manifest(manifest.entries, None))
    assert unrecorded is not None and "does not record the intent" in unrecorded


def test_edited_and_missing_device_files(tmp_path: Path, intent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _folder(tmp_path, intent)
    (out / "cabling.csv").write_text("edited, but never pushed\n")
    assert len(reviewed_files(intent, out, allow_edited=False)) == 2
    (out / "switches" / "leaf1-a.cfg").write_text("hostname leaf1-a\ninterface Ethernet1\n")
    assert _exit_code(lambda: reviewed_files(intent, out, allow_edited=False)) == 2
    assert "edited since the render: switches/leaf1-a.cfg" in capsys.readouterr().err
    assert [f.device for f in reviewed_files(intent, out, allow_edited=False, devices=["gpu001"])] == ["gpu001"]
    pushed = reviewed_files(intent, out, allow_edited=True)
    assert "interface Ethernet1" in next(f.content for f in pushed if f.device == "leaf1-a")
    assert "--allow-edited: pushing" in capsys.readouterr().err
    (out / "hosts" / "gpu001.roce.sh").unlink()
    assert _exit_code(lambda: reviewed_files(intent, out, allow_edited=True)) == 2
    assert "missing since the render: hosts/gpu001.roce.sh" in capsys.readouterr().err


def _result(status: Status, diff: str = "") -> DeviceResult:
    return DeviceResult("leaf1-a", "eos", status, diff)


def test_exit_codes() -> None:
    assert outcome([_result(Status.PENDING)]) == 0
    assert outcome([_result(Status.PENDING)], changes_fail=True) == 1
    assert outcome([_result(Status.UNCHANGED)], changes_fail=True) == 0
    assert outcome([_result(Status.FAILED), _result(Status.UNKNOWN)]) == 3


def test_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    diff = "--- leaf1-a (running)\n+++ leaf1-a (candidate)\n@@ -1 +1,2 @@\n a\n+b"
    print_json("diff", [_result(Status.PENDING, diff)], 1, run_id="r")
    document = json.loads(capsys.readouterr().out)
    assert document["command"] == "diff" and document["run_id"] == "r"
    (device,) = document["devices"]
    assert device["status"] == "pending" and device["added"] == 1 and device["removed"] == 0
    assert device["diff"] == diff.splitlines()
    assert document["summary"] == {"text": "1 would change", "by_status": {"pending": 1}, "would_change": 1,
                                   "exit_code": 1}


def test_latest_backup_and_what_it_leaves_alone(tmp_path: Path) -> None:
    for run in ("20261201T100000-aaaaaa", "20261201T110000-bbbbbb", "20261130T230000-cccccc"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "backup.json").write_text(json.dumps(
            {"devices": {"leaf1-a": "eos"}, "without_backup": {"gpu001": "host"}}))
        (tmp_path / run / "leaf1-a.cfg").write_text("hostname leaf1-a\n")
    (tmp_path / "20261202T000000-dddddd").mkdir()  # no backup.json: not a backup
    assert latest(tmp_path).name == "20261201T110000-bbbbbb"
    backup = read_backup(latest(tmp_path))
    assert backup.devices == {"leaf1-a": "eos"} and backup.without_backup == {"gpu001": "host"}
    with pytest.raises(typer.Exit):
        latest(tmp_path / "nowhere")


@pytest.mark.parametrize("command", ["diff", "apply", "rollback", "verify", "doctor"])
def test_the_inventory_falls_back_to_an_environment_variable(command: str) -> None:
    group = get_command(app)
    option = next(p for p in group.commands[command].params if p.name == "inventory")  # type: ignore[attr-defined]
    assert option.envvar == "ROCEFAB_INVENTORY"



def test_what_would_change_is_unknown_while_a_device_was_not_compared() -> None:
    from rocefab.deploy.fleet import DeviceResult, Status
    from rocefab.deploy_report import would_change

    compared = [DeviceResult("leaf1-a", "eos", Status.PENDING, diff="+x"), DeviceResult("leaf1-b", "eos",
                                                                                         Status.UNCHANGED)]
    assert would_change(compared) == 1
    for status in (Status.NOT_CHECKED, Status.NOT_STARTED, Status.UNKNOWN, Status.FAILED):
        assert would_change([*compared, DeviceResult("spine1", "cumulus", status)]) is None, status
    staged_then_failed = DeviceResult("spine1", "cumulus", Status.FAILED, diff="+y", error="commit refused")
    assert would_change([*compared, staged_then_failed]) == 1
