"""Arista EOS over eAPI, through NAPALM's `eos` driver (configuration sessions, commit timer)."""

from __future__ import annotations

import contextlib
import itertools
import shlex
import ssl
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pyeapi.eapilib
from napalm import get_network_driver
from napalm.base.exceptions import (
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
    SessionLockedException,
)

from rocefab.deploy import unified
from rocefab.deploy.device_lock import PREFIX as MARK_PREFIX
from rocefab.deploy.preserve import ReplacePreview, carry_preserved, replace_preview, without_preserved
from rocefab.deploy.session import DeployError, DeviceSession, PendingCommit, describe
from rocefab.platforms.eos import PRESERVED

if TYPE_CHECKING:
    from rocefab.deploy.verify.observation import NextHop, Observation, PortCounters

# napalm 5.2.0 lets pyeapi's own ConnectionError (bad password, refused connection) escape `open()`.
_CONNECT_ERRORS: tuple[type[BaseException], ...] = (ConnectionException, pyeapi.eapilib.ConnectionError, OSError)
_DEVICE_ERRORS = (*_CONNECT_ERRORS, pyeapi.eapilib.CommandError)
SESSION_PREFIX = "rocefab_"
MARK_FOLDER = "/mnt/flash"
_SESSION_NUMBERS = itertools.count(1)
_LOAD_ERRORS = (MergeConfigException, ReplaceConfigException, SessionLockedException, pyeapi.eapilib.CommandError)


class EosSession(DeviceSession):
    commit_confirm: ClassVar[bool] = True
    can_rollback: ClassVar[bool] = True
    # Abort configuration sessions a crashed run of ours (or any NAPALM client) left pending: while one is
    # pending, every new one is refused. Off by default: someone else may be mid-change.
    clear_stale_sessions: ClassVar[bool] = False
    _timer_pending = False  # this session's commit waits for its confirm
    _preview: ReplacePreview | None = None  # of the replace staged last

    def _tls_context(self) -> ssl.SSLContext:
        a = self.access
        if not a.verify_tls:
            return ssl._create_unverified_context()
        return ssl.create_default_context(cafile=str(a.ca_file) if a.ca_file else None)

    def _fail(self, what: str, exc: BaseException) -> DeployError:
        lost = isinstance(exc, pyeapi.eapilib.ConnectionError | OSError | ConnectionException)
        return DeployError(self.name, f"{what}: {describe(exc, self.access.timeout_s)}", connection_lost=lost)

    def open(self) -> None:
        a = self.access
        optional: dict[str, Any] = {"transport": a.scheme, "port": a.port}
        if a.scheme == "https":
            optional["context"] = self._tls_context()
        self._device = get_network_driver("eos")(
            a.host, a.username, a.password.reveal(), timeout=a.timeout_s, optional_args=optional
        )
        try:
            self._device.open()
        except _CONNECT_ERRORS as exc:
            raise self._fail(f"cannot open eAPI session at {a.host}:{a.port}", exc) from None
        if self.clear_stale_sessions:
            self._abort_sessions(lambda name, state: name.startswith("napalm_") and state == "pending")

    def _sessions(self) -> dict[str, Any]:
        node = self._device.device
        found: dict[str, Any] = node.run_commands(["show configuration sessions"], encoding="json")[0].get(
            "sessions", {})
        return found

    def _abort_sessions(self, which: Callable[[str, str], bool]) -> list[str]:
        aborted = []
        for name, info in sorted(self._sessions().items()):
            state = str(info.get("state"))
            if which(name, state):
                self._device.device.run_commands([f"configure session {name} abort"], encoding="text")
                timer = " (its commit timer was pending: the change it made is reverted)" \
                    if state == "pendingCommitTimer" else ""
                aborted.append(f"aborted configuration session {name}, left by an earlier run{timer}")
        return aborted

    def pending_commits(self) -> list[PendingCommit]:
        from rocefab.platforms.eos.pending import pending

        try:
            sessions, version = self._device.device.run_commands(
                ["show configuration sessions detail", "show version"], encoding="json")
        except _DEVICE_ERRORS as exc:
            raise self._fail("reading configuration sessions", exc) from None
        return pending(sessions, version, SESSION_PREFIX)

    def settle_pending(self, pending: PendingCommit, keep: bool) -> None:
        # From exec mode, as NAPALM's confirm_commit does: `configure session NAME commit` confirms a pending timer
        # (then saved, as every confirmed commit of ours is), `... abort` reverts it now.
        commands = [f"configure session {pending.name} commit", "write memory"] if keep else \
            [f"configure session {pending.name} abort"]
        try:
            self._device.device.run_commands(commands, encoding="text")
        except _DEVICE_ERRORS as exc:
            raise self._fail(f"{'confirming' if keep else 'reverting'} the pending commit {pending.name}",
                             exc) from None

    def _holders(self) -> str:
        """Who holds the lock: the sessions staged and never committed, a leftover of ours said as such."""
        from rocefab.platforms.eos.pending import run_of

        with contextlib.suppress(*_DEVICE_ERRORS):
            staged = sorted(n for n, i in self._sessions().items() if i.get("state") == "pending")
            named = [f"{n} (left by rocefab run {run}: `rocefab apply` removes it)"
                     if (run := run_of(n, SESSION_PREFIX)) else n for n in staged]
            return f" ({', '.join(named)})" if named else ""
        return ""

    # Lock marks in flash (/mnt/flash), through eAPI's `bash timeout N` as Arista's own tools reach the shell: a
    # configuration session cannot be the mark, as NAPALM refuses to stage while another session is pending.
    def _flash(self, what: str, *argv: str) -> str:
        command = "bash timeout 10 " + " ".join(shlex.quote(a) for a in argv)
        try:
            answer = self._device.device.run_commands([command], encoding="text")[0]
        except _DEVICE_ERRORS as exc:
            raise self._fail(what, exc) from None
        return str(answer.get("output", ""))

    def lock_marks(self) -> list[str]:
        listing = self._flash("reading the lock marks in flash", "ls", "-1", MARK_FOLDER)
        return [line.strip() for line in listing.splitlines() if line.strip().startswith(MARK_PREFIX)]

    def place_mark(self, name: str) -> None:
        self._flash(f"placing the lock mark {name}", "mkdir", f"{MARK_FOLDER}/{name}")

    def remove_mark(self, name: str) -> None:
        self._flash(f"removing the lock mark {name}", "rmdir", f"{MARK_FOLDER}/{name}")

    def cleanup_leftovers(self) -> list[str]:
        mine = f"{SESSION_PREFIX}{self.run_id}_"
        try:
            return self._abort_sessions(lambda name, state: name.startswith(SESSION_PREFIX)
                                        and not name.startswith(mine) and state in ("pending", "pendingCommitTimer"))
        except _DEVICE_ERRORS as exc:
            raise self._fail("cleaning up earlier runs' sessions", exc) from None

    def _adopt_pending_commit(self) -> None:
        """A fresh session of this run, rolling back what an earlier session of it committed with a timer:
        NAPALM aborts a pending commit only by its session's name, which carries this run's id."""
        mine = f"{SESSION_PREFIX}{self.run_id}_"
        pending = [name for name, info in self._sessions().items()
                   if name.startswith(mine) and info.get("state") == "pendingCommitTimer"]
        if pending:
            self._device.config_session = pending[0]

    def _name_session(self) -> None:
        # NAPALM names its session napalm_<microseconds> unless one is set; ours carry the run.
        if self._device.config_session is None:
            self._device.config_session = f"{SESSION_PREFIX}{self.run_id}_{next(_SESSION_NUMBERS)}"

    def backup(self) -> str:
        return without_preserved(PRESERVED, self.running_config())

    def load(self, candidate: str, replace: bool = True) -> None:
        try:
            self._name_session()
            if replace:
                running = self.running_config()
                self._preview = replace_preview(PRESERVED, running, candidate)
                self._device.load_replace_candidate(config=carry_preserved(PRESERVED, running, candidate))
            else:
                self._device.load_merge_candidate(config=candidate)
        except SessionLockedException as exc:
            # napalm names its session before checking the lock; forget it, or close() aborts a session
            # that never existed.
            self._device.config_session = None
            raise DeployError(self.name, f"configuration locked by another session: {exc}{self._holders()}") from None
        except _LOAD_ERRORS as exc:
            raise DeployError(self.name, f"candidate refused: {describe(exc)}") from None
        except _CONNECT_ERRORS as exc:
            raise self._fail("staging the candidate", exc) from None

    def replace_preview(self) -> ReplacePreview | None:
        return self._preview

    def running_config(self) -> str:
        try:
            return str(self._device.get_config(retrieve="running")["running"])
        except _DEVICE_ERRORS as exc:
            raise self._fail("reading the running config", exc) from None

    def diff(self) -> str:
        """The session's diff from the device, under rocefab's headers. EOS before 4.3x prints a unified diff
        (`@@` hunks); later ones a hierarchical diff without line positions, in which case the session's
        config and the running config are read and compared here."""
        try:
            shown = str(self._device.compare_config()).strip("\n")
            if not shown.strip():
                return ""
            if unified.has_hunks(shown):
                return unified.with_headers(self.name, shown)
            session = self._device.config_session
            staged = self._device.device.run_commands([f"show session-config named {session}"], encoding="text")
            running = self.running_config()
        except _DEVICE_ERRORS as exc:
            raise self._fail("diff", exc) from None
        return unified.from_lines(self.name, running.splitlines(), str(staged[0].get("output", "")).splitlines(),
                                  indented=True)

    def commit(self, confirm_seconds: int | None = None) -> None:
        try:
            self._device.commit_config(revert_in=confirm_seconds)
            self._timer_pending = confirm_seconds is not None
        except (*_DEVICE_ERRORS, CommitError) as exc:
            raise self._fail("commit failed", exc) from None

    def verify(self, candidate: str) -> str:
        # This session still holds the commit timer (napalm keeps its name for confirm), so the check
        # stages the candidate in a configuration session of its own.
        with EosSession(self.access, self.run_id) as probe:
            probe.load(candidate)
            leftover = probe.diff()
            probe.discard()
        return leftover

    def confirm(self) -> None:
        if not self._timer_pending:
            return  # committed without a timer: it already stands
        try:
            self._device.confirm_commit()
            self._timer_pending = False
        except (*_DEVICE_ERRORS, CommitError) as exc:
            raise self._fail("confirm failed", exc) from None

    def discard(self) -> None:
        try:
            self._device.discard_config()
        except _DEVICE_ERRORS as exc:
            raise self._fail("discard failed", exc) from None

    def rollback(self) -> None:
        try:
            if self._device.config_session is None:
                self._adopt_pending_commit()
            self._device.rollback()
        except _DEVICE_ERRORS as exc:
            raise self._fail("rollback failed", exc) from None

    def observe(self, device: Any) -> Observation:
        from rocefab.platforms.eos import SPEC, observe

        try:
            return observe.observe(self._device, self.name, SPEC.default_dscp_classes, [p.name for p in device.ports])
        except _DEVICE_ERRORS as exc:
            raise self._fail("reading state for verify", exc) from None

    def counters(self, device: Any) -> dict[str, PortCounters]:
        from rocefab.platforms.eos import counters

        try:
            return counters.read(self._device, [p.name for p in device.ports])
        except _DEVICE_ERRORS as exc:
            raise self._fail("reading counters for verify", exc) from None

    def routes(self, device: Any, prefixes: Sequence[str]) -> dict[str, tuple[NextHop, ...]]:
        from rocefab.platforms.eos import observe

        try:
            return observe.routes(self._device, prefixes)
        except _DEVICE_ERRORS as exc:
            raise self._fail("reading routes for verify", exc) from None

    def close(self) -> None:
        device = getattr(self, "_device", None)
        if device is None:
            return
        # After a commit timer expired, napalm still aborts the finished session on close; nothing is lost.
        with contextlib.suppress(pyeapi.eapilib.CommandError, pyeapi.eapilib.ConnectionError, OSError):
            device.close()
        # NAPALM's destructor closes again (aborting the session once more) whenever the object is collected,
        # perhaps at interpreter exit, where a dead device's error would print unasked: nothing is left to close.
        device.config_session = None
        self._device = None
