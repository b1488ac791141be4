"""A full or read-only disk: render, apply and the backups say so plainly (exit 2, the path, no traceback) and
leave nothing half-written; rollback --latest skips a backup a full disk cut short. The disks are real: small
tmpfs mounts (root, as CI runs); where mounting is not permitted these tests skip and say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from rocefab.deploy.durable import writable_with_room, write_whole
from rocefab.rollback_flow import latest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tiny(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: room for a few small files, not for a render or 64 MiB of backups."""
    point = tmp_path / "tiny"
    point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def read_only(point: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)


def rocefab(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=300, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def test_render_onto_a_full_disk_is_a_clear_error(tiny: Path) -> None:
    result = rocefab("render", ROOT / "intents" / "lab.yaml", "-o", tiny / "out")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "No space left on device" in result.stderr, result.stderr
    assert str(tiny / "out") in result.stderr
    assert not (tiny / "out").exists() or not any((tiny / "out").iterdir()), "a failed render publishes nothing"


def test_render_onto_a_read_only_disk_is_a_clear_error(tiny: Path) -> None:
    read_only(tiny)
    result = rocefab("render", ROOT / "intents" / "lab.yaml", "-o", tiny / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "Read-only file system" in result.stderr and str(tiny) in result.stderr, result.stderr


def test_a_whole_file_or_none(tiny: Path) -> None:
    write_whole(tiny / "small.cfg", "hostname leaf1-a\n")
    with pytest.raises(OSError, match="No space left"):
        write_whole(tiny / "big.cfg", "x" * 200_000)
    assert sorted(p.name for p in tiny.iterdir()) == ["small.cfg"], "no empty or partial file is left"
    assert (tiny / "small.cfg").read_text(encoding="utf-8") == "hostname leaf1-a\n"


def test_the_backup_folder_is_checked_before_anything_changes(tiny: Path, tmp_path: Path) -> None:
    assert writable_with_room(tmp_path / "roomy", need=1) is None
    full = writable_with_room(tiny / "backups")
    assert full is not None and "MiB free there" in full
    read_only(tiny)
    refused = writable_with_room(tiny / "other")
    assert refused is not None and "Read-only file system" in refused
    # apply stops on it before it reads the inventory: no lab and no inventory file needed, nothing reached
    result = rocefab("apply", ROOT / "intents" / "lab.yaml", "-i", tmp_path / "no-such-inventory.yaml", "--yes",
                     "--backup-dir", tiny / "backups")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"{tiny / 'backups'}: backups cannot be saved" in result.stderr and "nothing was changed" in result.stderr


def test_rollback_latest_skips_a_backup_a_full_disk_cut_short(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "rocefab-backups"
    whole = folder / "20261204T050000-aaaaaa"
    cut = folder / "20261204T060000-bbbbbb"
    for backup, text in ((whole, "hostname leaf1-a\n"), (cut, "")):
        backup.mkdir(parents=True)
        (backup / "leaf1-a.cfg").write_text(text, encoding="utf-8")
        (backup / "backup.json").write_text(json.dumps({"devices": {"leaf1-a": "eos"}}), encoding="utf-8")
    (folder / "20261204T070000-cccccc").mkdir()  # an empty folder: not a backup at all, passed over quietly
    assert latest(folder) == whole
    said = capsys.readouterr().err
    assert f"{cut}: skipped, not a whole backup: leaf1-a.cfg missing or empty" in said
    assert "cccccc" not in said
    (whole / "leaf1-a.cfg").unlink()
    with pytest.raises(typer.Exit):
        latest(folder)
