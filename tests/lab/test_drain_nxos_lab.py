"""Graceful removal on the lab's NX-OS spines (two Arista pairs under two Nexus spines, NX-API): `rocefab drain`
isolates a spine with `system mode maintenance` and reads the leaves until their routes to the other pair leave by
the other spine only; the second spine is refused while the first is drained; `apply --drain` of an ECN retune (a
queuing-policy change, disruptive on NX-OS) goes spine by spine, drained, committed, verified, undrained; a pulled
link that keeps the traffic from moving stops the run with the spine left drained and says how to end it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from verifylab import ecn_retuned, pushed_lab_fixture, rocefab, verify_json

from rocefab.renderers.pipeline import check_file

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "tests" / "lab" / "intents" / "nxos-spines.yaml"
PLAN = check_file(INTENT, "0.0.0-test").plan
assert PLAN is not None

lab = pushed_lab_fixture(INTENT, "nxdrain")


def subnet_paths(inventory: Path) -> str:
    """What verify sees of leaf1-a's ECMP group to the leaf2 pair's subnet."""
    _, report = verify_json(INTENT, inventory)
    check = next(c for c in report["checks"] if c["device"] == "leaf1-a" and c["check"] == "ecmp"
                 and c["port"] == "10.101.1.0/24")
    return str(check["observed"])


def test_nxos_spines_drain_one_at_a_time(lab: Path, tmp_path: Path, subtests: pytest.Subtests) -> None:
    inventory = lab / "inventory.yaml"
    with subtests.test(msg="drain spine1: the leaves keep each other over spine2 only"):
        drained = rocefab("drain", INTENT, "-i", inventory, "--only", "spine1", "--json")
        assert drained.returncode == 0, drained.stdout + drained.stderr
        report = json.loads(drained.stdout)
        rows = {(c["device"], c["prefix"]): (c["expected"], c["observed"], c["verdict"]) for c in report["checks"]}
        assert report["quiet"] and [(q["device"], q["verdict"]) for q in report["queues"]] == [("spine1", "pass")]
        assert report["moved"] and len(rows) == 12, report  # each leaf: the other pair's subnet and two loopbacks
        assert rows[("leaf1-a", "10.101.1.0/24")] == ("2 paths (leaf2 pair subnet)", "2 paths", "pass"), rows
        assert {v[2] for v in rows.values()} == {"pass"}
        try:
            assert subnet_paths(inventory).startswith("2 paths")
            other = rocefab("drain", INTENT, "-i", inventory, "--only", "spine2")
            assert other.returncode == 1, other.stdout + other.stderr
            assert "in maintenance mode already: spine1" in other.stderr, other.stderr
            assert "not drained together: spine1; then spine2" in other.stderr and "nothing was changed" in other.stderr
            assert rocefab("diff", INTENT, "-i", inventory, "--only", "spine1", "--exit-code").returncode == 0, \
                "maintenance mode is no configuration: nothing to push"
        finally:
            undrained = rocefab("undrain", INTENT, "-i", inventory, "--only", "spine1")
        assert undrained.returncode == 0, undrained.stdout + undrained.stderr
        assert subnet_paths(inventory).startswith("4 paths")
    with subtests.test(msg="a lossless queue still pausing keeps the drain from being done"):
        port = next(p.name for p in PLAN.switch("spine1").ports if p.peer.device == "leaf2-a")
        assert rocefab("lab", "fault", "spine1", "pause-storm", port, "--dir", lab).returncode == 0
        try:
            busy = rocefab("drain", INTENT, "-i", inventory, "--only", "spine1", "--timeout", "5", "--json")
        finally:
            assert rocefab("lab", "fault", "--clear", "--dir", lab).returncode == 0
        assert busy.returncode == 1, busy.stdout + busy.stderr
        report = json.loads(busy.stdout)
        assert report["moved"] and report["quiet"] is False, report
        assert f"{port} " in report["queues"][0]["observed"] and "pause frames" in report["queues"][0]["observed"]
        assert "spine1 still drained: the routes moved, but the lossless queue was not quiet" in busy.stderr
        assert rocefab("undrain", INTENT, "-i", inventory, "--only", "spine1").returncode == 0
    with subtests.test(msg="apply --drain: spine by spine"):
        intent = ecn_retuned(INTENT, tmp_path, 200)
        done = rocefab("apply", intent, "-i", inventory, "--only", "spine1,spine2", "--yes", "--confirm", "0",
                       "--drain", "--backup-dir", tmp_path / "bk")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "apply in 2 wave(s): spine1 | spine2" in done.stdout, done.stdout
        # drained: each leaf's routes through the spine (the other pair's subnet and loopbacks); undrained: those and
        # the spine's own loopback, which only it carries
        steps = [line for line in done.stderr.splitlines() if re.match(r"(un)?drained spine", line)]
        assert steps == ["drained spine1: 12 route(s) on 4 neighbour(s) moved",
                         "undrained spine1: 16 route(s) on 4 neighbour(s) back",
                         "drained spine2: 12 route(s) on 4 neighbour(s) moved",
                         "undrained spine2: 16 route(s) on 4 neighbour(s) back"], done.stderr
        code, report = verify_json(intent, inventory, "--only", "spine1,spine2")  # the leaves keep their ECN
        assert code == 0, [c for c in report["checks"] if c["verdict"] != "pass"]
    with subtests.test(msg="traffic that cannot move leaves the spine drained, and says so"):
        # one of spine2's links to leaf1-b pulled: with spine1 drained leaf1-b reaches the leaf2 pair over one link,
        # not the two the plan leaves it
        port = next(p.name for p in PLAN.switch("spine2").ports if p.peer.device == "leaf1-b")
        assert rocefab("lab", "fault", "spine2", "link-down", port, "--dir", lab).returncode == 0
        intent = ecn_retuned(INTENT, tmp_path, 300)
        try:
            stopped = rocefab("apply", intent, "-i", inventory, "--only", "spine1,spine2", "--yes", "--confirm", "0",
                              "--drain", "--drain-timeout", "6", "--backup-dir", tmp_path / "bk")
        finally:
            assert rocefab("lab", "fault", "--clear", "--dir", lab).returncode == 0
        assert stopped.returncode == 1, stopped.stdout + stopped.stderr
        text = " ".join(stopped.stdout.split())
        assert "drained spine1, but the neighbours' routes did not move within 6 s" in text, stopped.stdout
        assert "left drained (rocefab undrain --only spine1)" in text and "nothing was committed" in text
        again = rocefab("apply", intent, "-i", inventory, "--only", "spine1,spine2", "--yes", "--confirm", "0",
                        "--drain", "--backup-dir", tmp_path / "bk")
        assert again.returncode == 1 and "spine1: drained already: undrain it first" in again.stderr, again.stderr
        assert rocefab("undrain", INTENT, "-i", inventory, "--only", "spine1").returncode == 0
        assert subnet_paths(inventory).startswith("4 paths")
