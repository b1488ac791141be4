"""A rail-optimized fabric through the whole path: lab up, dry run, apply in waves (one leaf per rail and their
hosts first), then an empty diff and a passing verify, whose ECMP rows see each rail leaf's one summary of its
host /31s on the spines. EOS rail leaves, NVUE spines, hosts with one routed NIC per rail."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from test_rail_host_script import RAIL_INTENT


def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=240, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def intent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = copy.deepcopy(RAIL_INTENT)
    data["topology"]["models"] = {"leaf": "DCS-7060X6-64PE", "spine": "SN5600"}
    path = tmp_path_factory.mktemp("rail") / "rail-mixed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def inventory(intent: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("lab") / "lab"
    started = rocefab("lab", "up", intent, "--dir", folder)
    assert started.returncode == 0, started.stdout + started.stderr
    yield folder / "inventory.yaml"
    assert rocefab("lab", "down", "--dir", folder).returncode == 0


def test_rail_fabric_whole_path(intent: Path, inventory: Path, tmp_path: Path) -> None:
    plan = rocefab("plan", intent)
    assert plan.returncode == 0, plan.stderr
    dry = rocefab("apply", intent, "-i", inventory, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "\n+rule from 10.128." in dry.stdout  # a host's --check sees its missing policy rule
    total = dry.stdout.strip().splitlines()[-1]
    assert total.endswith("would change")

    applied = rocefab("apply", intent, "-i", inventory, "--yes", "--backup-dir", tmp_path / "backups")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    # one leaf per rail, all four hosts, then the spines
    assert re.search(r"apply in 3 wave\(s\): [\w-]+, [\w-]+ \| gpu001, gpu002, gpu003, gpu004 \| ", applied.stdout)

    after = rocefab("diff", intent, "-i", inventory)
    assert after.returncode == 0, after.stdout + after.stderr
    assert after.stdout.strip().splitlines()[-1].endswith("unchanged")
    assert "would change" not in after.stdout.strip().splitlines()[-1]

    verified = rocefab("verify", intent, "-i", inventory, "--json")
    report = json.loads(verified.stdout)
    failed = [c for c in report["checks"] if c["verdict"] == "fail"]
    assert verified.returncode == 0 and not failed, failed
    # The spines reach each rail leaf's host links by its one summary (4 servers: a /29), over the one link to it;
    # the host /31s themselves never leave their leaf.
    ecmp = {(c["device"], c["port"]): c for c in report["checks"] if c["check"] == "ecmp"}
    summaries = [(device, prefix) for device, prefix in ecmp if prefix.startswith(("10.128.", "10.136."))]
    assert summaries and all(prefix.endswith("/29") for _, prefix in summaries), sorted(ecmp)
    assert all(ecmp[key]["observed"].startswith(ecmp[key]["expected"].split(" (")[0]) for key in summaries)
