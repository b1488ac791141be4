"""Golden files: every example intent, rendered, must match tests/golden/<intent>/ byte for byte.

Regenerate with `pytest tests/test_golden.py --regen-golden` and review the diff like any other change.
"""

from __future__ import annotations

import difflib
import json
import shutil

import pytest
from conftest import FULL_GOLDEN, ROOT, SAMPLED_GOLDEN, example_files, example_plan

from rocefab.renderers.output import manifest_json

GOLDEN = ROOT / "tests" / "golden"
GOLDEN_STRUCTURED = ROOT / "tests" / "golden-structured"


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


def _structured_dump(name: str) -> dict[str, str]:
    """Every device's structured config (what its unit decided, before any template printed it), as JSON."""
    from dataclasses import asdict, is_dataclass

    from rocefab.platforms import host_unit, unit
    from rocefab.renderers.render import target_of

    plan = example_plan(name)
    dumps = {}
    for switch in plan.switches:
        config = unit(switch.platform).structured()(plan, switch, target_of(switch))
        dumps[f"structured/{switch.name}.json"] = json.dumps(asdict(config) if is_dataclass(config) else config,
                                                             indent=1, sort_keys=False) + "\n"
    hosts = host_unit()
    for host in plan.hosts[:2]:
        config = hosts.structured()(plan, host, hosts.target)
        dumps[f"structured/{host.name}.json"] = json.dumps(asdict(config), indent=1) + "\n"
    return dumps


@pytest.mark.parametrize("name", FULL_GOLDEN)
def test_structured_config_matches_golden(name: str, request: pytest.FixtureRequest) -> None:
    """The decisions on their own: a change in what a unit decides shows here even where a template would
    print it the same, and a template change shows in the rendered goldens alone."""
    folder = GOLDEN_STRUCTURED / name
    dumps = _structured_dump(name)
    if request.config.getoption("--regen-golden"):
        shutil.rmtree(folder, ignore_errors=True)
        for path, text in dumps.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text, encoding="utf-8")
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert on_disk == sorted(dumps), "structured dumps added or missing"
    for path, text in dumps.items():
        assert (folder / path).read_text(encoding="utf-8") == text, f"{name}/{path} differs"
