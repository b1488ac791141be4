"""The output folder as operators keep it: in git, with notes beside the rendered files. A render replaces
only what the previous render wrote (per its manifest), refuses to overwrite anything else, and a failed
render changes nothing."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from conftest import INTENTS, TEST_VERSION

from rocefab.renderers.output import (
    MANIFEST,
    STAGING_PREFIX,
    Entry,
    Filled,
    OutputError,
    changed_files,
    manifest_json,
    publish,
    read_manifest,
    source_of,
    write_files,
)
from rocefab.renderers.render import AnyFile, RenderedFile, StreamedFile
from rocefab.renderers.unchanged import Unchanged


def rocefab(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=60, cwd=cwd)


def _files(**contents: str) -> list[RenderedFile]:
    return [RenderedFile(path.replace("__", "/"), "fabric", "test", text) for path, text in contents.items()]


def _publish(target: Path, files: Sequence[AnyFile]) -> list[Entry]:
    return publish(target, lambda folder, unchanged: Filled(write_files(folder, files, unchanged))).entries


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rendering_twice_into_a_git_repository_keeps_git_and_notes(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    out = tmp_path / "out"
    out.mkdir()
    env_git = [git, "-C", str(out), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*env_git, "init", "-q"], check=True)
    (out / "NOTES.md").write_text("change 1234: lab fabric\n")
    first = rocefab("render", INTENTS / "lab.yaml", "-o", out)
    assert first.returncode == 0, first.stderr
    subprocess.run([*env_git, "add", "-A"], check=True)
    subprocess.run([*env_git, "commit", "-qm", "rendered"], check=True)
    again = rocefab("render", INTENTS / "lab.yaml", "-o", out)
    assert again.returncode == 0, again.stderr
    assert (out / ".git" / "HEAD").is_file()
    assert (out / "NOTES.md").read_text() == "change 1234: lab fabric\n"
    status = subprocess.run([*env_git, "status", "--porcelain"], capture_output=True, text=True, check=True)
    assert status.stdout == "", "an unchanged intent must leave a git-tracked output folder clean"
    # a real change shows as exactly the files it touches
    intent = tmp_path / "lab.yaml"
    ets = "qos:\n  ets:\n    roce_percent: 60\n    default_percent: 40\n"
    intent.write_text((INTENTS / "lab.yaml").read_text() + ets)
    changed = rocefab("render", intent, "-o", out)
    assert changed.returncode == 0, changed.stderr
    status = subprocess.run([*env_git, "status", "--porcelain"], capture_output=True, text=True, check=True)
    touched = sorted(line[3:] for line in status.stdout.splitlines())
    assert "NOTES.md" not in touched and not any(t.startswith(".git") for t in touched)
    assert "manifest.json" in touched and any(t.startswith("switches/") for t in touched)
    assert not any(t.startswith("hosts/") for t in touched), "ETS weights do not reach the hosts"


def test_render_into_the_current_folder_keeps_its_other_files(tmp_path: Path) -> None:
    (tmp_path / "README.txt").write_text("mine")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "ntp.txt").write_text("also mine")
    result = rocefab("render", INTENTS / "lab.yaml", "-o", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "README.txt").read_text() == "mine"
    assert (tmp_path / "site" / "ntp.txt").read_text() == "also mine"
    assert (tmp_path / "switches" / "leaf1-a.cfg").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(STAGING_PREFIX)], "no staging folder left"


def test_only_the_previous_renders_files_are_replaced_or_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(out, _files(a__one="1\n", a__two="2\n", b__three="3\n"))
    (out / "a" / "mine.txt").write_text("kept")
    (out / "notes.md").write_text("kept too")
    _publish(out, _files(a__one="1 again\n", c__four="4\n"))
    assert _tree(out) == {"a/mine.txt": "kept", "notes.md": "kept too", "a/one": "1 again\n", "c/four": "4\n",
                          MANIFEST: (out / MANIFEST).read_text()}
    assert not (out / "b").exists(), "a folder the removed files leave empty goes too"
    assert [e.path for e in read_manifest(out).entries] == ["a/one", "c/four"]


def test_a_file_no_manifest_claims_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "cabling.csv").write_text("the site's own cabling sheet")
    with pytest.raises(OutputError, match=r"already holds cabling\.csv, which no previous render"):
        _publish(out, _files(**{"cabling.csv": "rendered\n", "x__y": "z\n"}))
    assert _tree(out) == {"cabling.csv": "the site's own cabling sheet"}, "nothing written, nothing removed"


def test_a_symlinked_folder_on_the_way_is_refused(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "switches").symlink_to(elsewhere)
    with pytest.raises(OutputError, match=r"switches/leaf\.cfg"):
        _publish(out, [RenderedFile("switches/leaf.cfg", "leaf", "test", "x\n")])
    assert list(elsewhere.iterdir()) == []


def test_new_nested_folders_and_existing_ones_both_end_up_complete(tmp_path: Path) -> None:
    # a/ exists (with a file of the site's), a/b/ and c/d/e/ do not: those move whole, a/'s files one by one
    out = tmp_path / "out"
    (out / "a").mkdir(parents=True)
    (out / "a" / "mine.txt").write_text("kept")
    files = _files(a__one="1\n", a__b__two="2\n", a__b__three="3\n", c__d__e__four="4\n", five="5\n")
    _publish(out, files)
    assert _tree(out) == {"a/mine.txt": "kept", "a/one": "1\n", "a/b/two": "2\n", "a/b/three": "3\n",
                          "c/d/e/four": "4\n", "five": "5\n", MANIFEST: (out / MANIFEST).read_text()}
    assert not [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]


@pytest.mark.parametrize("blocker", ["dangling link", "file for a folder"])
def test_what_a_listing_shows_blocks_like_a_file(tmp_path: Path, blocker: str) -> None:
    out = tmp_path / "out"
    (out / "switches").mkdir(parents=True)
    if blocker == "dangling link":
        (out / "switches" / "leaf.cfg").symlink_to(tmp_path / "nowhere")
        path = "switches/leaf.cfg"
    else:
        (out / "switches" / "hosts").write_text("a file where a folder would go")
        path = "switches/hosts/gpu.sh"
    with pytest.raises(OutputError, match=re.escape(path)):
        _publish(out, [RenderedFile(path, "x", "test", "x\n"), RenderedFile("other/ok", "x", "test", "y\n")])
    assert not (out / "other").exists()


def test_a_file_rendered_as_it_is_stays_in_place_and_anything_else_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = [*_files(same="same\n", edited="rendered\n", mode="mode\n", link="link\n", grown="grown\n"),
             RenderedFile("run.sh", "fabric", "test", "#!/bin/sh\n", executable=True)]
    _publish(out, first)
    before = {p.name: p.stat() for p in out.iterdir()}
    (out / "edited").write_text("RENDERED\n")  # same size, other bytes
    (out / "mode").chmod(0o600)
    (out / "link").unlink()
    (tmp_path / "elsewhere").write_text("link\n")
    (out / "link").symlink_to(tmp_path / "elsewhere")
    (out / "grown").write_text("grown\nand more\n")
    entries = _publish(out, first)
    after = {p.name: p.lstat() for p in out.iterdir()}
    kept = sorted(e.path for e in entries if e.kept)
    assert kept == ["run.sh", "same"]
    for name in kept:  # the very file the first render wrote: same inode, not touched
        assert (after[name].st_ino, after[name].st_mtime_ns) == (before[name].st_ino, before[name].st_mtime_ns)
    assert _tree(out) == {**{f.path: f.content for f in first}, MANIFEST: (out / MANIFEST).read_text()}
    assert not (out / "link").is_symlink() and (tmp_path / "elsewhere").read_text() == "link\n"
    assert (out / "mode").stat().st_mode & 0o777 == before["same"].st_mode & 0o777
    assert changed_files(out, read_manifest(out)) == []


def test_only_the_previous_renders_files_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "cabling.csv").write_text("rendered\n")  # the very bytes, but no manifest claims the file
    with pytest.raises(OutputError, match=r"already holds cabling\.csv"):
        _publish(out, _files(**{"cabling.csv": "rendered\n"}))


@pytest.mark.parametrize(("before", "after"), [
    (["{", "\n}\n"], ["{", "\n}\n"]),  # the same: kept
    (["a" * 5000, "b", "c" * 3000], ["a" * 5000, "B", "c" * 3000]),  # differs after an agreed first piece
    (["a", "b"], ["a", "b", "c"]),  # longer now
    (["a", "b", "c"], ["a", "b"]),  # shorter now
    (["a"], []),  # empty now
])
def test_a_streamed_file_is_kept_only_when_every_piece_agrees(tmp_path: Path, before: list[str],
                                                              after: list[str]) -> None:
    out = tmp_path / "out"

    def streamed(pieces: list[str]) -> StreamedFile:
        def write(emit: Callable[[str], None]) -> None:
            for piece in pieces:
                emit(piece)
        return StreamedFile("plan.json", "fabric", "plan", write)

    _publish(out, [streamed(before)])
    inode = (out / "plan.json").stat().st_ino
    entries = publish(out, lambda folder, unchanged: Filled(write_files(folder, [streamed(after)], unchanged))).entries
    text = "".join(after)
    assert (out / "plan.json").read_text() == text
    assert entries[0].sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert entries[0].kept == (before == after) == ((out / "plan.json").stat().st_ino == inode)


def test_a_streamed_file_edited_while_compared_fails_the_render(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(out, [StreamedFile("plan.json", "fabric", "plan", lambda emit: emit("a" * 5000 + "b"))])

    def write(emit: Callable[[str], None]) -> None:
        emit("a" * 5000)  # agrees with the file, so nothing is written yet
        with (out / "plan.json").open("r+b") as f:  # someone edits it in place meanwhile
            f.write(b"X")
        emit("c")  # differs: the agreed part would be copied from the edited file

    with pytest.raises(OSError, match="changed while this render read it"):
        _publish(out, [StreamedFile("plan.json", "fabric", "plan", write)])
    assert (out / "plan.json").read_text() == "X" + "a" * 4999 + "b", "the edit stays; nothing else changed"
    assert not [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]


def test_a_failed_render_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(out, _files(a__one="1\n"))
    before = _tree(out)

    def failing(folder: Path, unchanged: Unchanged) -> Filled:
        write_files(folder, _files(a__one="half\n"), unchanged)
        raise RuntimeError("renderer crashed")

    with pytest.raises(RuntimeError):
        publish(out, failing)
    assert _tree(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]


def test_the_manifest_says_what_it_was_rendered_from_and_catches_edits(tmp_path: Path) -> None:
    intent = INTENTS / "lab.yaml"
    out = tmp_path / "out"
    publish(out, lambda folder, unchanged: Filled(write_files(folder, _files(a__one="1\n", a__two="2\n"), unchanged)),
            source_of(intent, TEST_VERSION))
    manifest = read_manifest(out)
    assert manifest.rocefab == TEST_VERSION
    assert manifest.intent_sha256 == hashlib.sha256(intent.read_bytes()).hexdigest()
    assert changed_files(out, manifest) == []
    (out / "a" / "two").write_text("edited\n")
    (out / "a" / "one").unlink()
    assert changed_files(out, manifest) == ["a/one", "a/two"]


@pytest.mark.parametrize("document", [
    "not json", json.dumps({"files": [{"path": "../escape", "device": "d", "kind": "k", "sha256": "0"}]}),
    json.dumps({"files": [{"path": "/etc/passwd", "device": "d", "kind": "k", "sha256": "0"}]}),
    json.dumps({"files": "nope"}), json.dumps([1, 2]),
])
def test_a_manifest_rocefab_did_not_write_is_refused(tmp_path: Path, document: str) -> None:
    (tmp_path / MANIFEST).write_text(document)
    with pytest.raises(OutputError):
        read_manifest(tmp_path)
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(OutputError):
        _publish(tmp_path, _files(a="1\n"))
    assert (tmp_path / "keep.txt").read_text() == "x"


def test_a_killed_renders_staging_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    """A render killed mid-way leaves its staging folder; the next render removes it when its process is gone
    on this host, and leaves a running render's and another host's alone."""
    import os
    import socket

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in socket.gethostname())[:64]
    dead = tmp_path / f"{STAGING_PREFIX}{host}-{int(gone.stdout)}-abc_1234"
    running = tmp_path / f"{STAGING_PREFIX}{host}-{os.getppid()}-def_5678"
    elsewhere = tmp_path / f"{STAGING_PREFIX}other-node-{int(gone.stdout)}-ghi_9012"
    for folder in (dead, running, elsewhere):
        (folder / "switches").mkdir(parents=True)
        (folder / "switches" / "leaf1.cfg").write_text("half written\n")
    _publish(tmp_path, _files(**{"a.txt": "a\n"}))
    assert not dead.exists()
    assert running.is_dir() and elsewhere.is_dir()


def test_each_manifest_line_is_what_json_dumps_prints_for_the_entry() -> None:
    entries = [Entry('hosts/gpu"1".sh', "gpü1", "host-script", "ab" * 32, executable=True),
               Entry("a\\b\nc.txt", "fabric", "kind\t1", "cd" * 32)]
    lines = manifest_json(entries).splitlines()
    for entry in sorted(entries, key=lambda e: e.path):
        fields: dict[str, object] = {"path": entry.path, "device": entry.device, "kind": entry.kind,
                                     "sha256": entry.sha256, **({"executable": True} if entry.executable else {})}
        assert f"    {json.dumps(fields)}" in [line.removesuffix(",") for line in lines]
    assert [e["path"] for e in json.loads(manifest_json(entries))["files"]] == sorted(e.path for e in entries)
