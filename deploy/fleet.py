"""Fan a rendered fabric out to its devices: dry run, staged apply with canary and rollback, restore.

One code path serves the dry run and the real run: every device is opened, its candidate staged and
diffed; a dry run then discards, an apply commits in waves. Within a wave every device is staged before
any is committed, so a candidate a device refuses stops the rollout before anything changed; a commit,
health check or confirm that fails rolls back every device the wave committed, and later waves are never
touched.

What a result says is what was checked. A device is "rolled back" only when its rollback ran and its
running config, read back afterwards, equals the one it had before the commit. A device whose state could
not be established that way (unreachable mid-commit or mid-rollback, a confirm that never arrived, a
read-back that differs) is reported as `UNKNOWN`, with what is known and what to run to find out.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from rocefab.deploy import device_lock
from rocefab.deploy.device_lock import Mark
from rocefab.deploy.disruption import DeviceDisruption, classify
from rocefab.deploy.durable import write_whole
from rocefab.deploy.inventory import Access
from rocefab.deploy.library_logs import CURRENT, library_logs_to_devices
from rocefab.deploy.preload import preload
from rocefab.deploy.reload_gate import reload_changes
from rocefab.deploy.session import DeployError, DeviceSession, PendingCommit, describe, new_run_id
from rocefab.deploy.stop import StopRequest
from rocefab.platforms import unit

if TYPE_CHECKING:
    from rocefab.deploy.verify.gate import Gate


SETTLE_POLL_S = 2.0  # between two reads of a device the verify gate waits for


class Status(StrEnum):
    UNCHANGED = "unchanged"  # nothing to do
    PENDING = "would change"  # dry run: the diff is what apply would do
    COMMITTED = "committed"
    ROLLED_BACK = "rolled back"  # rollback ran and the read-back equals the config from before the commit
    NOT_STARTED = "not started"  # a failure elsewhere stopped the rollout first
    FAILED = "failed"  # this device failed; its state is known (unchanged, or rolled back and read back)
    UNKNOWN = "FAILED - state unknown"  # this device may be old, new or in between: check it
    # it runs a commit that reverts by itself unless confirmed (read-only commands report it; apply settles it)
    AWAITING_REVERT = "pending revert"
    # reached (backed up, or its pending commits read) but never compared with its candidate: what it would
    # change is not known
    NOT_CHECKED = "not checked"


@dataclass
class DeviceResult:
    name: str
    kind: str
    status: Status = Status.NOT_STARTED
    diff: str = ""
    error: str | None = None
    seconds: float = 0.0
    cleaned: list[str] = field(default_factory=list)  # leftovers of earlier runs removed from the device
    library_said: list[str] = field(default_factory=list)  # what the device libraries logged meanwhile
    # A staged replace: the running config's blocks outside the candidate it keeps (device-local) and removes
    kept: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    # The staged change touches sections the device takes only after a reload (deploy/reload_gate.py)
    reload: tuple[str, ...] = ()
    # How much the staged change disturbs the device: its lines classed by the platform's rules (None: no diff)
    disruption: DeviceDisruption | None = None


@dataclass(frozen=True)
class Target:
    access: Access
    candidate: str  # the rendered config (or host script) to stage

    @property
    def name(self) -> str:
        return self.access.name


SessionFactory = Callable[[Access, str], DeviceSession]  # (access, run id)
Progress = Callable[[str, str], None]  # (device, what just happened)


@dataclass
class _Live:
    target: Target
    result: DeviceResult
    session: DeviceSession | None = None
    committed: bool = False  # the device may have changed from here on
    settled: bool = False  # a commit of it was confirmed or undone (read back): its state is known again
    lost: bool = False  # a step failed because the connection did: what the device did is not known
    before: str | None = None  # normalized backup() text read before the commit, to check a rollback against
    started: float = field(default_factory=time.monotonic)


def _noop(device: str, event: str) -> None:
    pass


@dataclass(frozen=True)
class WaveHooks:
    """What apply does around a wave: `before(wave)` returns why the wave may not be committed (None: go on);
    `after(wave, passed)` returns what went wrong after it (None: go on)."""

    before: Callable[[Sequence[str]], str | None]
    after: Callable[[Sequence[str], bool], str | None]


class Fleet:
    def __init__(self, targets: Sequence[Target], sessions: SessionFactory, concurrency: int = 16,
                 progress: Progress = _noop, replace: bool = True, run_id: str | None = None,
                 clean_leftovers: bool = False, gate: Gate | None = None, settle_s: float = 60.0,
                 reviewed: Mapping[str, str] | None = None, stop: StopRequest | None = None,
                 mark: Mark | None = None, force_unlock: bool = False,
                 accept_reload: bool | frozenset[str] = False, hooks: WaveHooks | None = None) -> None:
        self.targets = list(targets)
        # Around a wave's commit (apply --drain): before it (a refusal stops the run with the wave unstaged) and
        # after it committed and passed (a complaint stops the run after it).
        self.hooks = hooks
        preload(t.access.kind for t in self.targets)  # before any worker thread imports a driver (deploy/preload.py)
        # The run's lock mark (deploy/device_lock.py): `preflight` places it on every device, `release_marks`
        # removes it; a dry run compares no device another run holds; each commit first checks it is still there.
        self.mark = mark
        self.force_unlock = force_unlock
        self.claimed: set[str] = set()  # the devices that carry this run's mark
        # A signal asked the run to stop (deploy/stop.py): no new step starts, the wave in progress is rolled back.
        self.stop = stop
        self._wave: list[_Live] = []  # the wave being applied, for `unsettled`
        # The diffs a person approved (apply's question): a device whose staged diff is no longer the one
        # approved (someone changed it meanwhile) is not committed, and its wave stops.
        self.reviewed = reviewed
        # After a commit, inside its revert window: the device read and checked against the plan
        # (deploy/verify/gate.py); what fails rolls the wave back. It is asked again for up to `settle_s` while
        # BGP sessions and links come up after the commit.
        self.gate = gate
        self.settle_s = settle_s
        self.replace = replace  # the candidate is the whole truth; False merges it into the running config
        self.sessions = sessions
        self.concurrency = max(1, concurrency)
        self.progress = progress
        self.run_id = run_id or new_run_id()
        # Remove what earlier runs left on each device; only safe while this run holds the devices' lock.
        self.clean_leftovers = clean_leftovers
        # A change the device takes only after a reload is committed only where the operator accepted that (True:
        # on any device, as a rollback to a backup does; a set: on those devices); elsewhere the device fails before
        # its commit and its wave stops (apply refuses such a run before its first wave: `reload_changes`).
        self.accept_reload = accept_reload

    # --- building blocks, each run over many devices at once -------------------------------------------

    def _each(self, live: Iterable[_Live], step: Callable[[_Live], None]) -> None:
        items = list(live)
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(items)))) as pool:
            list(pool.map(lambda item: self._guard(item, step), items))

    def _guard(self, item: _Live, step: Callable[[_Live], None]) -> None:
        CURRENT.result = item.result
        try:
            step(item)
        except Exception as exc:  # one device's surprise must not kill the fan-out
            message = exc.message if isinstance(exc, DeployError) else \
                f"{type(exc).__name__}: {describe(exc, item.target.access.timeout_s)}"
            item.lost |= isinstance(exc, DeployError) and exc.connection_lost
            # The first failure is the reason; a cleanup step failing after it must not hide it.
            if item.result.status not in (Status.FAILED, Status.UNKNOWN):
                item.result.status, item.result.error = Status.FAILED, message
        finally:
            CURRENT.result = None
            item.result.seconds = time.monotonic() - item.started

    def _open(self, item: _Live, clean: bool = True) -> DeviceSession:
        session = self.sessions(item.target.access, self.run_id)
        item.session = session
        session.open()
        if self.clean_leftovers and clean:
            item.result.cleaned.extend(session.cleanup_leftovers())
        return session

    def _stage(self, item: _Live, for_commit: bool = False) -> None:
        """Open, stage and diff; before a commit, first note the running config a rollback must return to. A dry
        run first reads the commits awaiting their confirm: such a device is reported, never `unchanged`."""
        session = self._open(item)
        if for_commit and self.mark is not None:
            device_lock.still_held(item.target.name, session, self.mark)
        elif not for_commit and not self.force_unlock:
            # Another run's staged candidate may be on this device: staging ours could overwrite it (an NVUE
            # login has one pending revision), so a device another run holds is not compared.
            marks = device_lock.found(session.lock_marks(), self.mark)
            if marks.held or marks.unreadable:
                raise DeployError(item.target.name, device_lock.locked_message(item.target.name, marks) +
                                  "; not compared")
        waiting = [] if for_commit else session.pending_commits()
        if for_commit and session.can_rollback:
            item.before = session.normalized(session.backup())
        session.load(item.target.candidate, replace=self.replace)
        item.result.diff = session.diff()
        sections = _reload_sections(item.target.access.kind)
        if item.result.diff and sections:
            item.result.reload = reload_changes(session.running_config(), item.target.candidate, sections,
                                                self.replace)
            if item.result.reload:  # said in the diff itself, which is what a reviewer reads and approves
                item.result.diff = f"# {reload_note(item.result.reload)}\n{item.result.diff}"
        item.result.disruption = classify(item.result.diff, unit(item.target.access.kind).disruption) \
            if item.result.diff else None
        preview = session.replace_preview() if self.replace else None
        if preview is not None:
            item.result.kept, item.result.dropped = preview.carried, preview.removed
        item.result.status = Status.PENDING if item.result.diff else Status.UNCHANGED
        if waiting:
            item.result.status = Status.AWAITING_REVERT
            item.result.error = "; ".join(p.describe() for p in waiting) + \
                ("; the diff is against the commit it runs until then" if item.result.diff else "") + \
                "; `rocefab apply` settles it (confirms it if it is what the intent renders and verify passes, " \
                "else reverts it now)"
        self.progress(item.target.name, "staged")

    def _close(self, items: Iterable[_Live]) -> None:
        for item in items:
            if item.session is not None:
                # Closing is best effort: the results are already known.
                CURRENT.result = item.result
                with contextlib.suppress(Exception):
                    item.session.close()
                CURRENT.result = None
                item.session = None

    def _live(self, targets: Iterable[Target]) -> list[_Live]:
        return [_Live(t, DeviceResult(t.name, t.access.kind)) for t in targets]

    # --- commands --------------------------------------------------------------------------------------

    def dry_run(self) -> list[DeviceResult]:
        """Stage, diff and discard on every device: nothing changes anywhere.

        Each device goes through on its own (staged, discarded and closed by one worker), so nothing waits for
        the slowest device of a group and no session stays open longer than its own diff. Switches and hosts
        take turns in the queue: a switch's diff mostly waits on the device, a host's runs its whole script and
        keeps a CPU busy, so the two overlap (with the switches queued first the CPUs idled while they waited:
        the 202-device lab dry run's median was 13.0 s instead of 12.5, 5 runs each, 2026-12-02), and no switch
        waits behind more hosts than there are switches before it, far from its own timeout."""
        with library_logs_to_devices():
            return self._dry_run()

    def _dry_run(self, targets: Sequence[Target] | None = None) -> list[DeviceResult]:
        live = self._live(self.targets if targets is None else targets)
        heavy = {i.target.name for i in live if unit(i.target.access.kind).session().heavy_diff}
        queued = interleaved([i for i in live if i.target.name not in heavy],
                             [i for i in live if i.target.name in heavy])

        def stage_and_discard(item: _Live) -> None:
            # Two guarded steps, as two passes would be: a failed stage is the device's reason, and the discard
            # still runs on whatever session it opened.
            self._guard(item, self._stage)
            if item.session is not None:
                self._guard(item, _discard)
            self._close([item])

        try:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(queued)))) as pool:
                list(pool.map(stage_and_discard, queued))  # map submits in order
        finally:
            self._close(live)
        return [i.result for i in live]

    def backup(self, folder: Path, without_backup: Sequence[Target] = ()) -> list[DeviceResult]:
        """Save every device's running config (without its device-local sections) before touching any.

        `without_backup`: the run's devices that have no running config to save (hosts); the index names
        them, so a rollback can say which devices of the run it leaves as they are."""
        with library_logs_to_devices():
            return self._backup(folder, without_backup)

    def _backup(self, folder: Path, without_backup: Sequence[Target] = ()) -> list[DeviceResult]:
        live = self._live(self.targets)
        folder.mkdir(parents=True, exist_ok=True)

        def save(item: _Live) -> None:
            session = self._open(item)
            try:
                write_whole(folder / f"{item.target.name}.cfg", session.backup())
            except OSError as exc:
                raise DeployError(item.target.name, f"backup not saved: {folder}: {exc.strerror or exc}") from None
            item.result.status = Status.NOT_CHECKED
            self.progress(item.target.name, "backed up")

        try:
            self._each(live, save)
        finally:
            self._close(live)
        # Written last, and whole: a folder with this index holds every backup it lists (rollback --latest).
        index = json.dumps({"devices": {i.target.name: i.target.access.kind for i in live
                                        if i.result.status is Status.NOT_CHECKED},
                            "without_backup": {t.name: t.access.kind for t in without_backup}},
                           indent=2, sort_keys=True) + "\n"
        try:
            write_whole(folder / "backup.json", index)
        except OSError as exc:
            for item in live:
                if item.result.status is Status.NOT_CHECKED:
                    item.result.status = Status.FAILED
                    item.result.error = f"backup index not saved: {folder}: {exc.strerror or exc}"
        return [i.result for i in live]

    def preflight(self, keep_planned: bool = True) -> list[DeviceResult]:
        """Before anything changes (apply, rollback): reach and log in to every device of the run and place the run's
        lock mark on each; then, only if every device is held, finish every commit awaiting its confirm — confirm
        one that runs exactly what this run would push and whose device passes the gate (`keep_planned`), revert
        any other now. A device reached and held is NOT_CHECKED (its `cleaned` says what was settled or removed),
        one that could not be reached or is held by another run FAILED, one left in doubt UNKNOWN. When some device
        is not held, the marks this pass placed are removed again before it returns."""
        with library_logs_to_devices():
            live = self._live(self.targets)
            try:
                self._each(live, self._reach_and_claim)
                if all(i.result.status is Status.NOT_CHECKED for i in live) and not self._stopped():
                    self._each(live, lambda item: self._settle(item, keep_planned))
                else:
                    self._each([i for i in live if i.target.name in self.claimed], self._release)
            finally:
                self._close(live)
            return [i.result for i in live]

    def _reach_and_claim(self, item: _Live) -> None:
        # Before any cleanup: a leftover restore point names the run a pending commit belongs to.
        session = self._open(item, clean=False)
        if self.mark is not None:
            item.result.cleaned.extend(device_lock.claim(item.target.name, session, self.mark, self.force_unlock))
            self.claimed.add(item.target.name)
        item.result.status = Status.NOT_CHECKED
        self.progress(item.target.name, "reached")

    def _release(self, item: _Live) -> None:
        assert item.session is not None and self.mark is not None
        device_lock.release(item.session, self.mark)
        self.claimed.discard(item.target.name)

    def release_marks(self) -> dict[str, str]:
        """Remove this run's mark from every device that carries it; the devices where that failed, with why."""
        if self.mark is None or not self.claimed:
            return {}
        with library_logs_to_devices():
            live = self._live([t for t in self.targets if t.name in self.claimed])
            try:
                self._each(live, self._reopen_and_release)
            finally:
                self._close(live)
            return {i.target.name: i.result.error or "" for i in live if i.target.name in self.claimed}

    def _reopen_and_release(self, item: _Live) -> None:
        self._open(item, clean=False)
        self._release(item)

    def switch_changes(self) -> list[DeviceResult]:
        """Before any change: every switch staged, diffed and discarded, as a dry run does (each with its disruption
        class); hosts are not reached."""
        with library_logs_to_devices():
            return self._dry_run([t for t in self.targets if unit(t.access.kind).is_switch])

    def reload_changes(self) -> list[DeviceResult]:
        """Before any change: each device whose platform has reload-class sections staged, diffed and discarded, as
        a dry run does; its `reload` names the sections its diff would change (empty where the device says nothing
        changes). Devices of other platforms are not reached."""
        with library_logs_to_devices():
            return self._dry_run([t for t in self.targets if _reload_sections(t.access.kind)])

    def _settle(self, item: _Live, keep_planned: bool) -> None:
        session = item.session
        assert session is not None
        for waiting in session.pending_commits():
            keep, why = self._worth_keeping(item, session, waiting) if keep_planned else \
                (False, "this run restores a backup")
            try:
                session.settle_pending(waiting, keep)
            except DeployError as exc:
                item.result.status = Status.UNKNOWN
                item.result.error = f"{waiting.describe()}; settling it failed: {exc.message}"
                return
            if any(p.name == waiting.name for p in session.pending_commits()):
                item.result.status = Status.UNKNOWN
                item.result.error = f"{waiting.describe()}; still pending after it was " \
                                    f"{'confirmed' if keep else 'reverted'}"
                return
            done = "confirmed" if keep else "reverted now"
            item.result.cleaned.append(f"{waiting.describe()}: {done} ({why})")
            self.progress(item.target.name, f"pending commit {done}")

    def _worth_keeping(self, item: _Live, session: DeviceSession, waiting: PendingCommit) -> tuple[bool, str]:
        """Whether the pending commit runs exactly what this run would push and the device passes the gate."""
        session.load(item.target.candidate, replace=self.replace)
        try:
            differs = bool(session.diff())
        finally:
            session.discard()
        if differs:
            return False, "it is not what this run would push"
        if self.gate is not None:
            failed = self.gate(item.target.name, session, frozenset())
            if failed:
                return False, f"it is what this run would push, but verify fails: {'; '.join(failed[:2])}"
        return True, "it is what this run would push" + (" and verify passes" if self.gate is not None else "")

    def apply(self, waves: Sequence[Sequence[str]], confirm_seconds: int | None) -> list[DeviceResult]:
        """Commit wave by wave; stop at the first wave with a failure, after rolling that wave back."""
        with library_logs_to_devices():
            return self._apply(waves, confirm_seconds)

    def _apply(self, waves: Sequence[Sequence[str]], confirm_seconds: int | None) -> list[DeviceResult]:
        by_name = {t.name: t for t in self.targets}
        results: dict[str, DeviceResult] = {t.name: DeviceResult(t.name, t.access.kind) for t in self.targets}
        for index, wave in enumerate(waves):
            if self._stopped():
                break
            refused = self.hooks.before(wave) if self.hooks is not None else None
            if refused is not None:
                for name in wave:
                    results[name].status, results[name].error = Status.FAILED, f"{refused}; nothing was committed"
                break
            live = self._live(by_name[name] for name in wave)
            self._wave = live
            settled = frozenset(name for w in waves[:index + 1] for name in w)
            try:
                ok = self._apply_wave(live, confirm_seconds, settled)
            finally:
                self._close(live)
            for item in live:
                results[item.target.name] = item.result
            complaint = self.hooks.after(wave, ok) if self.hooks is not None else None
            if complaint is not None:
                for item in live:
                    item.result.error = "; ".join(filter(None, [item.result.error, complaint]))
            if not ok or complaint is not None:
                break
        if self.stop is not None and self._stopped():
            for result in results.values():
                if result.status is Status.NOT_STARTED and not result.error:
                    result.error = self.stop.reason()
        return [results[t.name] for t in self.targets]

    def _stopped(self) -> bool:
        return self.stop is not None and self.stop.requested

    def unsettled(self) -> list[str]:
        """Devices of the wave in progress that committed and were neither confirmed nor undone yet."""
        return [i.target.name for i in self._wave if i.committed and not i.settled]

    def _apply_wave(self, live: list[_Live], confirm_seconds: int | None,
                    settled: frozenset[str] = frozenset()) -> bool:
        self._each(live, lambda item: self._stage(item, for_commit=True))
        if self.reviewed is not None:
            for item in live:
                staged = item.result.status in (Status.PENDING, Status.UNCHANGED)
                if staged and item.result.diff != self.reviewed.get(item.target.name, ""):
                    item.result.status = Status.FAILED
                    item.result.error = ("changed since it was reviewed: what it would change now is not what was "
                                         "approved; nothing was committed (review again)")
        for item in live:
            accepted = self.accept_reload is True or (
                isinstance(self.accept_reload, frozenset) and item.target.name in self.accept_reload)
            if item.result.status is Status.PENDING and item.result.reload and not accepted:
                item.result.status = Status.FAILED
                item.result.error = reload_refusal(item.target.name, item.result.reload) + "; nothing was committed"
        if self._stopped() or any(i.result.status in (Status.FAILED, Status.UNKNOWN) for i in live):
            self._each([i for i in live if i.session is not None], _discard)
            for item in live:
                if item.result.status not in (Status.FAILED, Status.UNKNOWN):
                    item.result.status = Status.NOT_STARTED
                    if self.stop is not None and self._stopped():
                        item.result.error = f"{self.stop.reason()} before its commit; staged and discarded"
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
            # without a revert window (a host's script, NX-OS) a finished commit is a known state: the new one
            item.settled = not item.session.commit_confirm
            self.progress(item.target.name, "committed")

        def confirm(item: _Live) -> None:
            assert item.session is not None
            try:
                item.session.confirm()
            except DeployError as exc:
                timer = item.session.commit_confirm and confirm_seconds
                note = f"; unless the confirm reached it, its commit timer reverts it {confirm_seconds} s after " \
                       "the commit" if timer else ""
                raise DeployError(item.target.name, f"{exc.message}{note}",
                                  connection_lost=exc.connection_lost) from None

        def gate(item: _Live) -> None:
            """Verify's checks, once the whole wave has committed (a pair's MLAG needs both ends), retried while
            sessions and links settle, within the revert window."""
            assert item.session is not None and self.gate is not None
            deadline = time.monotonic() + self.settle_s
            while True:
                failed_checks = self.gate(item.target.name, item.session, settled)
                if not failed_checks or self._stopped():
                    return
                if time.monotonic() >= deadline:
                    break
                time.sleep(SETTLE_POLL_S)
            shown = "; ".join(failed_checks[:4]) + (f"; and {len(failed_checks) - 4} more"
                                                    if len(failed_checks) > 4 else "")
            raise DeployError(item.target.name, f"verify after commit failed: {shown}")

        self._each(changing, commit)
        if self.gate is not None and not self._stopped() and all(i.result.status is Status.COMMITTED
                                                                 for i in changing):
            self._each(changing, gate)
        if not self._stopped() and all(i.result.status is Status.COMMITTED for i in changing):
            self._each(changing, confirm)
            if all(i.result.status is Status.COMMITTED for i in changing):
                for item in changing:
                    item.settled = True
                return True
        # A stop undoes the wave's commits as a failure does; the devices that did nothing wrong are not culprits.
        failed = {i.target.name for i in changing if i.result.status is not Status.COMMITTED}
        # Devices without rollback (hosts: an idempotent script) stay as they are: a host that committed is
        # fully new; one that failed says so. Waves never mix them with switches.
        self._each([i for i in changing if i.committed and i.session and i.session.can_rollback],
                   lambda item: self._undo(item, item.target.name in failed))
        for item in changing:
            # A host whose connection failed during its run may have stopped part-way through its script.
            if item.target.name in failed and item.committed and item.lost and not (
                    item.session and item.session.can_rollback):
                item.result.status = Status.UNKNOWN
                item.result.error = f"{item.result.error}; the script may have stopped part-way"
        return False

    def _undo(self, item: _Live, culprit: bool) -> None:
        """Roll one device back, then read its config back and compare; say exactly what was established."""
        stopped = self.stop.reason() if self.stop is not None and self._stopped() else None
        reason = item.result.error if culprit else stopped
        prefix = f"{reason}; " if reason else ""
        assert item.session is not None
        try:
            try:
                item.session.rollback()
            except DeployError:
                # The session may have died with the failure (a dropped connection): the restore point
                # lives on the device, so a fresh session of this run can still roll back to it.
                with contextlib.suppress(Exception):
                    item.session.close()
                item.session = None
                item.session = self.sessions(item.target.access, self.run_id)
                item.session.open()
                item.session.rollback()
            after = item.session.normalized(item.session.backup())
        except DeployError as exc:
            item.result.status = Status.UNKNOWN
            item.result.error = f"{prefix}rollback did not complete: {exc.message}"
            return
        if after != item.before:
            changed = _changed_lines(item.before or "", after)
            item.result.status = Status.UNKNOWN
            item.result.error = f"{prefix}rolled back, but the running config read back differs from the one " \
                                f"before the commit in {changed} line(s)"
            return
        item.result.status = Status.FAILED if culprit else Status.ROLLED_BACK
        item.result.error = f"{prefix}rolled back: the running config read back equals the one before the commit"
        item.settled = True
        self.progress(item.target.name, "rolled back")


def _reload_sections(kind: str) -> tuple[str, ...]:
    spec = unit(kind).spec
    return spec.reload_sections if spec is not None else ()


def reload_note(sections: Sequence[str]) -> str:
    return (f"needs a reload: the switch applies {', '.join(sections)} only after a reload (apply pushes it only "
            "with --accept-reload, in a step of its own)")


def reload_refusal(device: str, sections: Sequence[str]) -> str:
    """Why a device's change is not pushed in an ordinary wave, and what to do instead."""
    return (f"changes {', '.join(sections)}, which the switch applies only after a reload: push it in a step of its "
            f"own with `rocefab apply ... --only {device} --accept-reload`, then drain and reload {device}")


def _changed_lines(before: str, after: str) -> int:
    a, b = before.splitlines(), after.splitlines()
    return len(set(a) ^ set(b)) or abs(len(a) - len(b))


T = TypeVar("T")


def interleaved(first: list[T], second: list[T]) -> list[T]:
    """first[0], second[0], first[1], second[1], ...; the longer list's rest at the end.

    >>> interleaved(["s1", "s2"], ["h1", "h2", "h3", "h4"])
    ['s1', 'h1', 's2', 'h2', 'h3', 'h4']
    >>> interleaved(["s1", "s2", "s3"], ["h1"])
    ['s1', 'h1', 's2', 's3']
    """
    mixed = [item for pair in zip(first, second, strict=False) for item in pair]
    return mixed + first[len(second):] + second[len(first):]


def _discard(item: _Live) -> None:
    if item.session is not None:
        item.session.discard()
