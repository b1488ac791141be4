"""Rendering on several processes writes the same folder, byte for byte, as rendering on one."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from conftest import INTENTS, TEST_VERSION

from rocefab.models.findings import Finding, Severity
from rocefab.renderers.fanout import render_to_folder
from rocefab.renderers.lab_cut import select_lab_cut
from rocefab.renderers.pipeline import check_file


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_parallel_render_matches_serial(tmp_path: Path) -> None:
    plan = check_file(INTENTS / "tor128-3tier.yaml", TEST_VERSION).plan
    assert plan is not None
    serial = render_to_folder(plan, tmp_path / "serial", jobs=1).entries
    parallel = render_to_folder(plan, tmp_path / "parallel", jobs=3, min_devices=1).entries
    assert sorted(serial, key=lambda e: e.path) == sorted(parallel, key=lambda e: e.path)
    assert _tree(tmp_path / "serial") == _tree(tmp_path / "parallel")
    manifest = json.loads((tmp_path / "parallel" / "manifest.json").read_text())["files"]
    # per host: script (with its boot unit), NCCL env, preflight; per switch its config (and NVUE's command
    # list); fabric: the host libraries (the NIC/bond script's, the preflight's), cabling, BOM, diagram, lab cut
    # and a startup config per switch it keeps, summary (JSON and page), inventory, plan's index and a part per
    # pod and one outside them, ANTA catalog (EOS), six monitoring and five bandwidth files
    pods = len({sw.pod for sw in plan.switches})
    assert len(manifest) == len(serial) == 3 * (len(plan.hosts)) + 2 + len(plan.switches) * 1 + 8 + pods + sum(
        1 for s in plan.switches if s.platform == "cumulus") + any(s.platform == "eos" for s in plan.switches) + 11 \
        + len(select_lab_cut(plan).switches)


def test_streamed_files_are_written_as_their_text(tmp_path: Path) -> None:
    """plan/'s parts and the plan's series are written piece by piece; on disk and in the manifest they are what
    their joined text is, and each piece boundary falls where it may (a plan larger than one piece)."""
    import hashlib

    from rocefab.renderers.render import StreamedFile, fabric_files

    plan = check_file(INTENTS / "cluster1024-rail.yaml", TEST_VERSION).plan
    assert plan is not None
    streamed = [f for f in fabric_files(plan) if isinstance(f, StreamedFile)]
    assert {f.path for f in streamed} == {"plan/no-pod.jsonl", "monitoring/textfile/rocefab_plan.prom"}
    pieces: list[str] = []
    streamed[-1].write(pieces.append)
    assert len(pieces) > 2  # the plan of 1,024 nodes arrives in several pieces
    entries = {e.path: e for e in render_to_folder(plan, tmp_path / "out", jobs=2).entries}
    for f in streamed:
        text = f.content
        assert (tmp_path / "out" / f.path).read_text(encoding="utf-8") == text
        assert entries[f.path].sha256 == hashlib.sha256(text.encode()).hexdigest()
        assert entries[f.path].lines == 0  # counted for a device's files only (summary.md's table)


@pytest.mark.parametrize("jobs", [1, 2])
def test_checks_that_fail_while_the_workers_render_publish_nothing(tmp_path: Path, jobs: int) -> None:
    """The plan's own checks run after the workers start; if they raise, no file reaches the folder, a folder
    the render made is gone again, and a previous render's files are as they were."""
    plan = check_file(INTENTS / "tor128-3tier.yaml", TEST_VERSION).plan
    assert plan is not None
    started: list[int] = []

    def failing() -> list[Finding]:
        started.append(len(multiprocessing.active_children()))
        raise RuntimeError("a plan check failed")

    with pytest.raises(RuntimeError, match="a plan check failed"):
        render_to_folder(plan, tmp_path / "new", jobs=jobs, min_devices=1, checks=failing)
    assert not (tmp_path / "new").exists()
    assert started == [jobs if jobs > 1 else 0]  # run while the workers exist, or before a serial render writes

    previous = tmp_path / "previous"
    render_to_folder(plan, previous, jobs=1)
    before = _tree(previous)
    with pytest.raises(RuntimeError):
        render_to_folder(plan, previous, jobs=jobs, min_devices=1, checks=failing)
    assert _tree(previous) == before
    assert sorted(p.name for p in previous.iterdir()) == sorted({p.split("/")[0] for p in before})


def test_what_the_checks_find_is_listed_in_the_summary_page(tmp_path: Path) -> None:
    plan = check_file(INTENTS / "tor128-3tier.yaml", TEST_VERSION).plan
    assert plan is not None
    found = Finding("late-finding", Severity.WARNING, ("topology",), "found while the workers rendered")
    render_to_folder(plan, tmp_path / "out", jobs=2, min_devices=1, checks=lambda: [found])
    assert "found while the workers rendered" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
