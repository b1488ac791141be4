"""Golden files: every example intent, rendered, must match tests/golden/<intent>/ byte for byte.

Regenerate with `pytest tests/test_golden.py --regen-golden` and review the diff like any other change.
"""

from __future__ import annotations

import difflib
import shutil

import pytest
from conftest import FULL_GOLDEN, ROOT, SAMPLED_GOLDEN, example_files

from rocefab.renderers.output import manifest_json

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("name", FULL_GOLDEN)
def test_rendered_output_matches_golden(name: str, request: pytest.FixtureRequest) -> None:
    files = example_files(name)
    folder = GOLDEN / name
    if request.config.getoption("--regen-golden"):
        shutil.rmtree(folder, ignore_errors=True)
        for f in files:
            (folder / f.path).parent.mkdir(parents=True, exist_ok=True)
            (folder / f.path).write_text(f.content, encoding="utf-8")
        (folder / "manifest.json").write_text(manifest_json(list(files)), encoding="utf-8")
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert on_disk == sorted([f.path for f in files] + ["manifest.json"]), "files added or missing"
    for f in files:
        expected = (folder / f.path).read_text(encoding="utf-8")
        if expected != f.content:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), f.content.splitlines(True),
                                                f"golden/{name}/{f.path}", "rendered", n=2))
            pytest.fail(f"{f.path} differs from its golden file:\n{diff[:4000]}")
    assert (folder / "manifest.json").read_text(encoding="utf-8") == manifest_json(list(files))


@pytest.mark.parametrize("name", sorted(SAMPLED_GOLDEN))
def test_sampled_output_matches_golden(name: str, request: pytest.FixtureRequest) -> None:
    """Large examples keep the plan, the artifacts and a few devices of each tier as golden files."""
    rendered = {f.path: f.content for f in example_files(name)}
    folder = GOLDEN / name
    if request.config.getoption("--regen-golden"):
        shutil.rmtree(folder, ignore_errors=True)
        for path in SAMPLED_GOLDEN[name]:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(rendered[path], encoding="utf-8")
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert on_disk == sorted(SAMPLED_GOLDEN[name]), "golden sample files added or missing"
    for path in SAMPLED_GOLDEN[name]:
        expected = (folder / path).read_text(encoding="utf-8")
        if expected != rendered[path]:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), rendered[path].splitlines(True),
                                                f"golden/{name}/{path}", "rendered", n=2))
            pytest.fail(f"{path} differs from its golden file:\n{diff[:4000]}")


def test_every_example_has_golden_files() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) == sorted([*FULL_GOLDEN, *SAMPLED_GOLDEN])
