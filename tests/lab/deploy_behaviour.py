"""The deploy behaviour every device session must show, written once (after NAPALM's shared getter tests):
each platform's test module subclasses `DeployBehaviour` with a small adapter for its emulator, and inherits
every scenario. Adding a platform means adding an adapter; the scenarios stay as they are.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rocefab.deploy import unified
from rocefab.deploy.device_lock import Mark, own_mark
from rocefab.deploy.fleet import Fleet, Status, Target
from rocefab.deploy.inventory import Access
from rocefab.deploy.session import DeployError, DeviceSession, new_run_id

PASSWORD = "lab-Behaviour-4"


class DeployBehaviour:
    """Subclasses name the session class and implement the adapter methods below."""

    session: ClassVar[type[DeviceSession]]
    name: ClassVar[str]

    # --- adapter ---------------------------------------------------------------------------------------
    def serve(self, tmp_path: Path) -> AbstractContextManager[tuple[Any, Access]]:
        """A running emulator of the platform and the access to it."""
        raise NotImplementedError

    def candidate(self) -> str:
        raise NotImplementedError

    def state(self, device: Any) -> str:
        """What the device runs, as text a test can compare."""
        raise NotImplementedError

    def smaller(self) -> tuple[str, str]:
        """A candidate with one setting left out, and what its diff must show about that setting's removal."""
        raise NotImplementedError

    def refuse(self, device: Any) -> None:
        """Make the device refuse part of the candidate, as the real one refuses a line it does not take."""
        raise NotImplementedError

    def slow(self, device: Any, seconds: float) -> None:
        raise NotImplementedError

    def commit_command(self) -> str:
        """A regex matching the command that makes the commit on the device."""
        raise NotImplementedError

    # --- the scenarios -----------------------------------------------------------------------------------
    @pytest.fixture
    def lab(self, tmp_path: Path) -> Iterator[tuple[Any, Access]]:
        with self.serve(tmp_path) as served:
            yield served

    def test_dry_run_changes_nothing_and_shows_the_change(self, lab: tuple[Any, Access]) -> None:
        device, access = lab
        before = self.state(device)
        with self.session(access) as session:
            session.load(self.candidate())
            diff = session.diff()
            session.discard()
        assert diff.strip(), "the factory state differs from the candidate"
        assert self.state(device) == before
        # What review tools read: one file per device under rocefab's headers, hunks whose counts add up.
        assert diff.startswith(f"--- {access.name} (running)\n+++ {access.name} (candidate)\n@@ "), diff[:200]
        assert unified.malformed(diff) == [], unified.malformed(diff)
        assert unified.counts(diff).added > 0

    def test_commit_converges_and_nothing_is_left_to_change(self, lab: tuple[Any, Access]) -> None:
        _, access = lab
        with self.session(access) as session:
            session.load(self.candidate())
            session.commit()
            assert session.verify(self.candidate()) == ""
            session.confirm()
        with self.session(access) as session:
            session.load(self.candidate())
            assert session.diff() == ""
            session.discard()

    def test_replace_removes_what_the_candidate_leaves_out(self, lab: tuple[Any, Access]) -> None:
        _, access = lab
        if not self.session.has_backup:
            pytest.skip("a host's script has no running config to replace: each run sets only what it lists")
        with self.session(access) as session:
            session.load(self.candidate())
            session.commit()
            session.confirm()
        smaller, removal = self.smaller()
        with self.session(access) as session:
            session.load(smaller)
            diff = session.diff()
            session.discard()
        assert removal in diff, diff

    def test_a_refused_candidate_leaves_the_device_unchanged(self, lab: tuple[Any, Access]) -> None:
        device, access = lab
        self.refuse(device)
        before = self.state(device)
        results = Fleet([Target(access, self.candidate())], self.session).apply([[access.name]], None)
        assert results[0].status is Status.FAILED and results[0].error, results[0]
        assert self.state(device) == before

    def test_rollback_restores_the_config_from_before(self, lab: tuple[Any, Access]) -> None:
        device, access = lab
        before = self.state(device)
        with self.session(access) as session:
            session.load(self.candidate())
            session.commit()
            assert self.state(device) != before
            if not self.session.can_rollback:
                with pytest.raises(DeployError, match=r"rolled back|rerun"):
                    session.rollback()
                return
            session.rollback()
        assert self.state(device) == before

    def test_a_wrong_password_fails_clearly_and_is_never_shown(self, lab: tuple[Any, Access]) -> None:
        from rocefab.deploy.inventory import Secret

        _, access = lab
        wrong = replace(access, password=Secret("nope-Wrong-8"))
        results = Fleet([Target(wrong, self.candidate())], self.session).dry_run()
        assert results[0].status is Status.FAILED
        error = results[0].error or ""
        assert error and "nope-Wrong-8" not in error and PASSWORD not in error, error

    def test_a_slow_device_fails_within_its_timeout(self, lab: tuple[Any, Access]) -> None:
        device, access = lab
        self.slow(device, 4)
        started = time.monotonic()
        results = Fleet([Target(replace(access, timeout_s=1), self.candidate())], self.session).dry_run()
        self.slow(device, 0)
        assert results[0].status is Status.FAILED and results[0].error
        assert time.monotonic() - started < 4, "the inventory's timeout bounds every request"

    def test_an_unreachable_device_fails_fast_with_a_reason(self, lab: tuple[Any, Access]) -> None:
        device, access = lab
        device.reach.down = True
        started = time.monotonic()
        results = Fleet([Target(access, self.candidate())], self.session).dry_run()
        device.reach.clear()
        assert results[0].status is Status.FAILED, results[0]
        assert results[0].error and results[0].error.strip(": ")
        assert time.monotonic() - started < access.timeout_s

    def test_lost_at_its_commit_is_reported_as_state_unknown(self, lab: tuple[Any, Access]) -> None:
        device, access = lab
        device.reach.down_on, device.reach.down_after = self.commit_command(), True
        results = Fleet([Target(access, self.candidate())], self.session).apply([[access.name]], None)
        device.reach.clear()
        assert results[0].status is Status.UNKNOWN, results[0]
        assert "rolled back:" not in (results[0].error or "")

    def test_a_run_holds_the_device_until_it_lets_go(self, lab: tuple[Any, Access]) -> None:
        """The lock mark, through the platform's own commands: placed by the first run's preflight, it stops a second
        run's preflight (naming the first) and keeps a dry run from staging; removed, the device is free again."""
        device, access = lab
        target = Target(access, self.candidate())
        first_run, second_run = new_run_id(), "20261204T010203-abcdef"
        first = Fleet([target], self.session, run_id=first_run, mark=own_mark(first_run))
        assert [r.status for r in first.preflight()] == [Status.NOT_CHECKED] and first.claimed == {access.name}
        with self.session(access) as session:
            assert session.lock_marks() == [own_mark(first_run).name]
        second = Fleet([target], self.session, run_id=second_run, mark=Mark(second_run, "bob", "ops-2", 777))
        refused = second.preflight()
        assert refused[0].status is Status.FAILED and second.claimed == set()
        assert f"locked by rocefab run {first_run} of " in (refused[0].error or ""), refused[0].error
        before = self.state(device)
        looked = Fleet([target], self.session).dry_run()
        assert looked[0].status is Status.FAILED and "not compared" in (looked[0].error or "")
        assert self.state(device) == before
        assert first.release_marks() == {} and first.claimed == set()
        assert [r.status for r in second.preflight()] == [Status.NOT_CHECKED]
        assert second.release_marks() == {}
        with self.session(access) as session:
            assert session.lock_marks() == []
