"""Fan a rendered fabric out to its devices: dry run, staged apply with canary and rollback, restore.

One code path serves the dry run and the real run: every device is opened, its candidate staged and
diffed; a dry run then discards, an apply commits in waves. Within a wave every device is staged before
any is committed, so a candidate a device refuses stops the rollout before anything changed; a commit or
health check that fails rolls back every device the wave committed, so each device ends fully old or
fully new, and later waves are never touched.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from rocefab.deploy.inventory import Access
from rocefab.deploy.session import DeployError, DeviceSession


class Status(StrEnum):
    UNCHANGED = "unchanged"  # nothing to do
    PENDING = "would change"  # dry run: the diff is what apply would do
    COMMITTED = "committed"
    ROLLED_BACK = "rolled back"
    NOT_STARTED = "not started"  # a failure elsewhere stopped the rollout first
    FAILED = "failed"


@dataclass
class DeviceResult:
    name: str
    kind: str
    status: Status = Status.NOT_STARTED
    diff: str = ""
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class Target:
    access: Access
    candidate: str  # the rendered config (or host script) to stage

    @property
    def name(self) -> str:
        return self.access.name


SessionFactory = Callable[[Access], DeviceSession]
Progress = Callable[[str, str], None]  # (device, what just happened)


@dataclass
class _Live:
    target: Target
    result: DeviceResult
    session: DeviceSession | None = None
    committed: bool = False
    started: float = field(default_factory=time.monotonic)


def _noop(device: str, event: str) -> None:
    pass


class Fleet:
    def __init__(self, targets: Sequence[Target], sessions: SessionFactory, concurrency: int = 16,
                 progress: Progress = _noop, replace: bool = True) -> None:
        self.targets = list(targets)
        self.replace = replace  # the candidate is the whole truth; False merges it into the running config
        self.sessions = sessions
        self.concurrency = max(1, concurrency)
        self.progress = progress

    # --- building blocks, each run over many devices at once -------------------------------------------

    def _each(self, live: Iterable[_Live], step: Callable[[_Live], None]) -> None:
        items = list(live)
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(items)))) as pool:
            list(pool.map(lambda item: self._guard(item, step), items))

    def _guard(self, item: _Live, step: Callable[[_Live], None]) -> None:
        try:
            step(item)
        except Exception as exc:  # one device's surprise must not kill the fan-out
            message = exc.message if isinstance(exc, DeployError) else f"{type(exc).__name__}: {exc}"
            # The first failure is the reason; a cleanup step failing after it must not hide it.
            if item.result.status is not Status.FAILED:
                item.result.status, item.result.error = Status.FAILED, message
        finally:
            item.result.seconds = time.monotonic() - item.started

    def _stage(self, item: _Live) -> None:
        session = self.sessions(item.target.access)
        item.session = session
        session.open()
        session.load(item.target.candidate, replace=self.replace)
        item.result.diff = session.diff()
        item.result.status = Status.PENDING if item.result.diff else Status.UNCHANGED
        self.progress(item.target.name, "staged")

    def _close(self, items: Iterable[_Live]) -> None:
        for item in items:
            if item.session is not None:
                # Closing is best effort: the results are already known.
                with contextlib.suppress(Exception):
                    item.session.close()
                item.session = None

    def _live(self, targets: Iterable[Target]) -> list[_Live]:
        return [_Live(t, DeviceResult(t.name, t.access.kind)) for t in targets]

    # --- commands --------------------------------------------------------------------------------------

    def dry_run(self) -> list[DeviceResult]:
        """Stage, diff and discard on every device: nothing changes anywhere.

        Switches go first and hosts after them: a host's check runs its whole script and keeps a CPU busy,
        and a switch session waiting behind hundreds of those would only run into its own timeouts."""
        live = self._live(self.targets)
        try:
            for group in ([i for i in live if i.target.access.kind != "host"],
                          [i for i in live if i.target.access.kind == "host"]):
                self._each(group, self._stage)
                self._each([i for i in group if i.session is not None], _discard)
                self._close(group)
        finally:
            self._close(live)
        return [i.result for i in live]

    def backup(self, folder: Path) -> list[DeviceResult]:
        """Save every device's running config (without its device-local sections) before touching any."""
        live = self._live(self.targets)
        folder.mkdir(parents=True, exist_ok=True)

        def save(item: _Live) -> None:
            session = self.sessions(item.target.access)
            item.session = session
            session.open()
            (folder / f"{item.target.name}.cfg").write_text(session.backup(), encoding="utf-8")
            item.result.status = Status.UNCHANGED
            self.progress(item.target.name, "backed up")

        try:
            self._each(live, save)
        finally:
            self._close(live)
        (folder / "backup.json").write_text(json.dumps(
            {"devices": {i.target.name: i.target.access.kind for i in live if i.result.status is Status.UNCHANGED}},
            indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return [i.result for i in live]

    def apply(self, waves: Sequence[Sequence[str]], confirm_seconds: int | None) -> list[DeviceResult]:
        """Commit wave by wave; stop at the first wave with a failure, after rolling that wave back."""
        by_name = {t.name: t for t in self.targets}
        results: dict[str, DeviceResult] = {t.name: DeviceResult(t.name, t.access.kind) for t in self.targets}
        for wave in waves:
            live = self._live(by_name[name] for name in wave)
            try:
                ok = self._apply_wave(live, confirm_seconds)
            finally:
                self._close(live)
            for item in live:
                results[item.target.name] = item.result
            if not ok:
                break
        return [results[t.name] for t in self.targets]

    def _apply_wave(self, live: list[_Live], confirm_seconds: int | None) -> bool:
        self._each(live, self._stage)
        if any(i.result.status is Status.FAILED for i in live):
            self._each([i for i in live if i.session is not None], _discard)
            for item in live:
                if item.result.status is not Status.FAILED:
                    item.result.status = Status.NOT_STARTED
            return False

        changing = [i for i in live if i.result.status is Status.PENDING]

        def commit(item: _Live) -> None:
            assert item.session is not None
            window = confirm_seconds if item.session.commit_confirm else None
            # From here the device may have changed, even if the commit fails half-way (a lost connection,
            # a two-stage apply): a failure rolls it back to the restore point the commit itself set up.
            item.committed = True
            item.session.commit(confirm_seconds=window)
            # Health check: the device must now run exactly the candidate.
            leftover = item.session.verify(item.target.candidate)
            if leftover:
                raise DeployError(item.target.name, f"after commit the device still differs:\n{leftover}")
            item.result.status = Status.COMMITTED
            self.progress(item.target.name, "committed")

        self._each(changing, commit)
        if all(i.result.status is Status.COMMITTED for i in changing):
            self._each(changing, _confirm)
            if all(i.result.status is Status.COMMITTED for i in changing):
                return True

        def undo(item: _Live) -> None:
            assert item.session is not None
            try:
                item.session.rollback()
            except DeployError:
                # The session may have died with the failure (a dropped connection): the restore point
                # lives on the device, so a fresh session can still roll back to it.
                with contextlib.suppress(Exception):
                    item.session.close()
                item.session = self.sessions(item.target.access)
                item.session.open()
                item.session.rollback()
            if item.result.status is not Status.FAILED:
                item.result.status = Status.ROLLED_BACK
            self.progress(item.target.name, "rolled back")

        failed = {i.target.name: (i.result.status, i.result.error) for i in changing
                  if i.result.status is Status.FAILED}
        # Devices without rollback (hosts: an idempotent script) stay committed: they are fully new, and the
        # next run brings them wherever the fabric goes. Waves never mix them with switches.
        self._each([i for i in changing if i.committed and i.session and i.session.can_rollback], undo)
        for item in changing:
            if item.target.name in failed:
                # Keep the original failure as the reason, and say whether the device was put back.
                status, error = failed[item.target.name]
                undone = item.result.error != error and item.result.status is Status.FAILED
                note = f"; rollback failed too: {item.result.error}" if undone else \
                    "; rolled back" if item.committed and item.session and item.session.can_rollback else ""
                item.result.status, item.result.error = status, f"{error}{note}"
        return False


def _discard(item: _Live) -> None:
    if item.session is not None:
        item.session.discard()


def _confirm(item: _Live) -> None:
    if item.session is not None:
        item.session.confirm()
