"""Commits awaiting their confirm, as each platform's reader finds them in device output (the corpus), and the
verify row they become: a pending revert is a failed check with the time left, never a pass."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from corpus import load

from rocefab.deploy.session import PendingCommit
from rocefab.deploy.verify.checks import Verdict
from rocefab.deploy.verify.run import Reading, pending_rows
from rocefab.platforms.cumulus.pending import pending as cumulus_pending
from rocefab.platforms.eos.pending import pending as eos_pending

RUN = "20261204T051857-4148ad"
VERSION = load("eos", "4.30/show_version.json")  # uptime 374.7 s


@pytest.mark.parametrize("file", ["reconstructed/show_configuration_sessions_detail_before_4_32.json",
                                  "reconstructed/show_configuration_sessions_detail_4_32.json"])
def test_eos_commit_timer_from_either_shape(file: str) -> None:
    found = eos_pending(load("eos", file), VERSION, "rocefab_")
    assert found == [PendingCommit(f"rocefab_{RUN}_2", pytest.approx(5412.38 - VERSION["uptime"]), RUN)]


def test_eos_without_a_timer_or_a_clock() -> None:
    sessions: dict[str, Any] = copy.deepcopy(load("eos", "reconstructed/show_configuration_sessions_detail_"
                                                         "before_4_32.json"))
    assert eos_pending(sessions, {}, "rocefab_")[0].seconds_left is None  # no uptime: time left not reported
    del sessions["sessions"][f"rocefab_{RUN}_2"]["commitBy"]
    assert eos_pending(sessions, VERSION, "rocefab_")[0].seconds_left is None  # still pending, time unknown
    sessions["sessions"][f"rocefab_{RUN}_2"]["state"] = "completed"
    assert eos_pending(sessions, VERSION, "rocefab_") == []
    assert eos_pending({}, VERSION, "rocefab_") == []
    anyone = eos_pending({"sessions": {"napalm_1": {"state": "pendingCommitTimer", "commitBy": 400}}}, VERSION,
                         "rocefab_")
    assert anyone[0].run is None and anyone[0].seconds_left == pytest.approx(400 - VERSION["uptime"])


@pytest.mark.parametrize(("status", "text", "runs", "left", "found"), [
    (0, "Confirm pending for rev_id 2: 293 seconds left", [RUN], 293.0, True),
    (0, "Pending confirm: 5 minutes remaining", [], 300.0, True),  # another client's window: still state
    (0, "No pending confirm", [RUN], None, False),
    (0, "There is no confirm pending", [RUN], None, False),
    (1, "Error: not understood", [RUN], None, True),  # our own unsettled commit: pending, time not reported
    (0, "a phrase nobody documented", [], None, False),  # no marker and nothing readable: nothing to settle
])
def test_cumulus_confirm_status(status: int, text: str, runs: list[str], left: float | None, found: bool) -> None:
    got = cumulus_pending(status, text, runs)
    assert bool(got) == found
    if found:
        assert got[0].seconds_left == left and got[0].run == (runs[-1] if runs else None)


def test_a_pending_commit_fails_verify_and_none_passes() -> None:
    waiting = PendingCommit("revision 2", 293.0, RUN)
    failed = pending_rows("spine1", Reading("spine1", None, pending=(waiting,)))
    assert [r.verdict for r in failed] == [Verdict.FAIL] and "pending revert in 293 s" in failed[0].observed
    assert [r.verdict for r in pending_rows("spine1", Reading("spine1", None, pending=()))] == [Verdict.PASS]
    unread = pending_rows("spine1", Reading("spine1", None, pending_error="timeout after 30 s"))
    assert [r.verdict for r in unread] == [Verdict.WARN] and "not read" in unread[0].observed
    assert pending_rows("nx1", Reading("nx1", None)) == []  # NX-OS: no commit-confirm, no row
