"""Every device driver honours the one DeviceSession contract (after NAPALM's base-driver test)."""

from __future__ import annotations

import inspect

import pytest

from rocefab.deploy.session import DeviceSession
from rocefab.deploy.targets import session_classes, session_factory

SESSIONS = session_classes()


@pytest.mark.parametrize("kind", sorted(SESSIONS))
def test_driver_implements_the_whole_contract(kind: str) -> None:
    driver = SESSIONS[kind]
    assert issubclass(driver, DeviceSession)
    assert not inspect.isabstract(driver), f"{driver.__name__} leaves {sorted(driver.__abstractmethods__)} open"
    for capability in ("commit_confirm", "can_rollback", "has_backup", "heavy_diff"):
        assert isinstance(getattr(driver, capability), bool), f"{driver.__name__}.{capability}"
    for name in DeviceSession.__abstractmethods__:
        ours = inspect.signature(getattr(driver, name))
        contract = inspect.signature(getattr(DeviceSession, name))
        assert list(ours.parameters) == list(contract.parameters), f"{driver.__name__}.{name}{ours}"


def test_drivers_without_rollback_never_share_a_wave_with_those_with_it() -> None:
    # The fleet runner relies on it: a wave is all-transactional or all-idempotent.
    assert {kind for kind, d in SESSIONS.items() if not d.can_rollback} == {"host"}


def test_stale_session_clearing_is_opt_in() -> None:
    assert not SESSIONS["eos"].clear_stale_sessions  # type: ignore[attr-defined]
    factory = session_factory(clear_stale_sessions=True)
    assert factory is not session_factory()


@pytest.mark.parametrize("kind", sorted(SESSIONS))
def test_every_driver_names_its_device_files_per_run_and_cleans_leftovers(kind: str) -> None:
    driver = SESSIONS[kind]
    # Each platform leaves something on the device between stage and commit (a session, a file): each must
    # know how to find what a killed run left.
    assert driver.cleanup_leftovers is not DeviceSession.cleanup_leftovers, f"{driver.__name__}"
    assert "run_id" in inspect.signature(driver).parameters


@pytest.mark.parametrize("kind", sorted(SESSIONS))
def test_every_driver_with_a_revert_window_reads_and_settles_its_pending_commits(kind: str) -> None:
    # A commit awaiting its confirm is device state: where the platform can leave one, its driver must find it
    # (read-only) and finish it (apply, rollback).
    driver = SESSIONS[kind]
    if driver.commit_confirm:
        assert driver.pending_commits is not DeviceSession.pending_commits, f"{driver.__name__}"
        assert driver.settle_pending is not DeviceSession.settle_pending, f"{driver.__name__}"
