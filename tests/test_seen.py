"""A re-render trusts a kept file's recorded status instead of reading it back (renderers/seen.py), and only
when that is safe: an edit that keeps the size and even the modification time is still caught, a status stamped
in the probe's clock tick is not recorded, and a missing or broken record only means the files are read."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import NoReturn

import pytest
from conftest import INTENTS, TEST_VERSION

from rocefab.renderers import seen
from rocefab.renderers.cache_home import private_cache_folder
from rocefab.renderers.fanout import render_to_folder
from rocefab.renderers.output import Entry, Filled
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.unchanged import Unchanged

ON_REQUEST = frozenset({"nvue-commands"})


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    made = check_file(INTENTS / "pod32.yaml", TEST_VERSION).plan
    assert made is not None
    return made


def _render(plan: FabricPlan, out: Path, jobs: int) -> Filled:
    return render_to_folder(plan, out, jobs=jobs, min_devices=1, leave_out=ON_REQUEST)


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _no_reading(*_: object, **__: object) -> NoReturn:
    raise AssertionError("a kept file was read back although its record says it is unchanged")


@pytest.mark.parametrize("jobs", [1, 2])
def test_files_recorded_as_seen_are_kept_without_reading_them(plan: FabricPlan, tmp_path: Path, jobs: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _render(plan, out, jobs)
    _render(plan, out, jobs)  # every file is older than this render's probe: all recorded
    recorded = seen.load_seen(out.resolve())
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(recorded) == {f["path"] for f in manifest["files"]}
    before = _tree(out)
    monkeypatch.setattr(Unchanged, "previous_bytes", _no_reading)
    monkeypatch.setattr(Unchanged, "open_previous", _no_reading)
    again = _render(plan, out, jobs)
    assert again.rendered == ()
    assert all(e.kept for e in again.entries)
    assert _tree(out) == before


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_edit_keeping_size_and_modification_time_is_caught(plan: FabricPlan, tmp_path: Path, jobs: int) -> None:
    out = tmp_path / "out"
    _render(plan, out, jobs)
    _render(plan, out, jobs)
    before = _tree(out)
    host = plan.hosts[2].name
    edited = out / "hosts" / f"{host}.nccl.env"
    st = edited.stat()
    text = edited.read_bytes()
    edited.write_bytes(text.replace(b"=", b":", 1))  # same size, other bytes
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old modification time put back
    assert edited.stat().st_size == st.st_size and edited.stat().st_mtime_ns == st.st_mtime_ns
    again = _render(plan, out, jobs)
    assert set(again.rendered) == {host}
    assert _tree(out) == before


def test_a_broken_or_foreign_record_only_means_reading(plan: FabricPlan, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _render(plan, out, 1)
    before = _tree(out)
    record = seen.record_path(out.resolve())
    assert record is not None and record.is_file()
    for broken in (b"{not json", b'{"format": 1, "target": "/elsewhere", "files": {}}',
                   b'{"format": 1, "files": {"hosts/x": [1, 2]}}', b"[]"):
        record.write_bytes(broken)
        again = _render(plan, out, 1)
        assert again.rendered == ()
        assert _tree(out) == before
        assert seen.load_seen(out.resolve())  # written anew, usable


def _entry(path: str, stamp: seen.Stamp | None) -> Entry:
    return Entry(path, "fabric", "test", "0" * 64, 3, True, False, stamp)


def test_a_status_stamped_in_the_probes_tick_or_later_is_not_recorded(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    probe = tmp_path / "probe"
    probe.write_text("")
    now = max(probe.stat().st_mtime_ns, probe.stat().st_ctime_ns)
    regular = 0o100644
    entries = [
        _entry("old", (1, 2, regular, 3, now - 10**9, now - 10**9)),
        _entry("modified-late", (1, 3, regular, 3, now + 10**12, now - 10**9)),
        _entry("changed-late", (1, 4, regular, 3, now - 10**9, now + 10**12)),
        _entry("a-folder", (1, 5, 0o040755, 3, now - 10**9, now - 10**9)),
        _entry("unstamped", None),
    ]
    seen.save_seen(tmp_path, tmp_path / "scratch", entries, frozenset())
    recorded = seen.load_seen(tmp_path)
    assert set(recorded) == {"old"}
    assert recorded["old"] == seen.Seen("0" * 64, 3, (1, 2, regular, 3, now - 10**9, now - 10**9))
    assert list((tmp_path / "scratch").iterdir()) == []  # the probe is gone


def test_a_renamed_file_is_recorded_only_if_it_is_the_one_written(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    mine, other = tmp_path / "mine", tmp_path / "other"
    for path in (mine, other):
        path.write_text("rendered\n")
    entries = [_entry("mine", seen.stamp_of(mine.stat())), _entry("other", seen.stamp_of(other.stat()))]
    mine.rename(tmp_path / "moved")
    (tmp_path / "moved").rename(mine)  # renamed into place: a new change time, the rest as written
    other.write_text("edited since\n")
    time.sleep(0.05)  # the probe in a later clock tick than the rename
    seen.save_seen(tmp_path, tmp_path / "scratch", entries, frozenset({"mine", "other"}))
    recorded = seen.load_seen(tmp_path)
    assert set(recorded) == {"mine"}
    assert recorded["mine"].stamp == seen.stamp_of(mine.stat())


def test_records_are_kept_for_the_most_recent_folders_only(tmp_path: Path) -> None:
    folder = private_cache_folder("seen")
    assert folder is not None
    for n in range(seen.KEEP_RECORDS + 5):
        (tmp_path / f"out{n}").mkdir()
        (tmp_path / f"out{n}" / "f").write_text("x")
        seen.save_seen(tmp_path / f"out{n}", tmp_path, [], frozenset())
    assert len(list(folder.glob("*.json"))) <= seen.KEEP_RECORDS
    assert not list(folder.glob(".seen-*"))


def test_a_relative_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert private_cache_folder("seen") == tmp_path / ".cache" / "rocefab" / "seen"


def test_a_record_folder_others_can_write_is_not_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Anyone who could write a record could make a render keep an edited file as if it were rendered."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "rocefab" / "seen"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    assert seen.record_path(tmp_path / "out") is None
    seen.save_seen(tmp_path / "out", tmp_path, [], frozenset())  # writes nothing there
    assert list(folder.iterdir()) == []
    folder.chmod(0o700)
    assert seen.record_path(tmp_path / "out") is not None
