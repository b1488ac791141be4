"""apply --drain on the lab (an EOS pair under a Cumulus spine): an ECN retune is beyond hitless on EOS (no Arista
source, so cautious) and hitless on NVUE, so each leaf is drained, committed, verified and undrained in a wave of
its own with the spine's routes read at each step; the spine's change goes in an ordinary wave. Traffic that cannot
move (a pulled cable on the other leaf) stops the run before any commit with the leaf left drained, said so with how
to end it; a drained switch refuses the next apply --drain; the pair is never drained together."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from verifylab import ecn_retuned, pushed_lab_fixture, rocefab, verify_json

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intents" / "lab.yaml"


lab = pushed_lab_fixture(INTENT, "drain")


def spine_paths(intent: Path, inventory: Path) -> str:
    _, report = verify_json(intent, inventory)
    check = next(c for c in report["checks"] if c["device"] == "spine1" and c["check"] == "ecmp"
                 and c["port"] == "10.101.0.0/24")
    return str(check["observed"])


def test_apply_drains_each_leaf_in_turn_and_a_failure_leaves_it_drained(lab: Path, tmp_path: Path,
                                                                         subtests: pytest.Subtests) -> None:
    inventory = lab / "inventory.yaml"
    with subtests.test(msg="drain, commit, verify, undrain, leaf by leaf"):
        intent = ecn_retuned(INTENT, tmp_path, 200)
        done = rocefab("apply", intent, "-i", inventory, "--yes", "--confirm", "0", "--drain",
                       "--backup-dir", tmp_path / "bk")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "apply in 4 wave(s): leaf1-a | leaf1-b | gpu001, gpu002, gpu003, gpu004 | spine1" in done.stdout
        order = [line for line in done.stderr.splitlines() if re.match(r"(un)?drained leaf1-", line)]
        assert order == ["drained leaf1-a: 1 route(s) on 1 neighbour(s) moved",
                         "undrained leaf1-a: 3 route(s) on 2 neighbour(s) back",
                         "drained leaf1-b: 1 route(s) on 1 neighbour(s) moved",
                         "undrained leaf1-b: 3 route(s) on 2 neighbour(s) back"], done.stderr
        assert verify_json(intent, inventory)[0] == 0, "every switch undrained and as planned"
    with subtests.test(msg="traffic that cannot move leaves the leaf drained, and says so"):
        # leaf1-b's first uplink is pulled: with leaf1-a drained the spine reaches the pair over one link, not the
        # two the plan leaves it, so apply stops after the drain, before any commit, and leaf1-a stays drained
        intent = ecn_retuned(INTENT, tmp_path, 300)
        assert rocefab("lab", "fault", "spine1", "link-down", "swp3", "--dir", lab).returncode == 0
        try:
            stopped = rocefab("apply", intent, "-i", inventory, "--yes", "--confirm", "0", "--drain",
                              "--drain-timeout", "6", "--backup-dir", tmp_path / "bk")
        finally:
            assert rocefab("lab", "fault", "--clear", "--dir", lab).returncode == 0
        assert stopped.returncode == 1, stopped.stdout + stopped.stderr
        text = " ".join(stopped.stdout.split())
        assert "drained leaf1-a, but the neighbours' routes did not move within 6 s" in text, stopped.stdout
        assert "left drained (rocefab undrain --only leaf1-a)" in text and "nothing was committed" in text
        assert spine_paths(intent, inventory).startswith("2 paths"), "leaf1-a is still out of the spine's group"
        refused = rocefab("apply", intent, "-i", inventory, "--yes", "--confirm", "0", "--drain",
                          "--backup-dir", tmp_path / "bk")
        assert refused.returncode == 1 and "leaf1-a: drained already: undrain it first" in refused.stderr
        assert rocefab("undrain", intent, "-i", inventory, "--only", "leaf1-a").returncode == 0
        assert spine_paths(intent, inventory).startswith("4 paths")
