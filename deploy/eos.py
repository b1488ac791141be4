"""Arista EOS over eAPI, through NAPALM's `eos` driver (configuration sessions, commit timer)."""

from __future__ import annotations

import contextlib
import ssl
from typing import Any, ClassVar

import pyeapi.eapilib
from napalm import get_network_driver
from napalm.base.exceptions import (
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
    SessionLockedException,
)

from rocefab.deploy.preserve import carry_preserved, without_preserved
from rocefab.deploy.session import DeployError, DeviceSession

# napalm 5.2.0 lets pyeapi's own ConnectionError (bad password, refused connection) escape `open()`.
_CONNECT_ERRORS = (ConnectionException, pyeapi.eapilib.ConnectionError, OSError)
_LOAD_ERRORS = (MergeConfigException, ReplaceConfigException, SessionLockedException, pyeapi.eapilib.CommandError)


class EosSession(DeviceSession):
    commit_confirm: ClassVar[bool] = True
    native_diff: ClassVar[bool] = True
    can_rollback: ClassVar[bool] = True
    # Abort configuration sessions a crashed run of ours (or any NAPALM client) left pending: while one is
    # pending, every new one is refused. Off by default: someone else may be mid-change.
    clear_stale_sessions: ClassVar[bool] = False

    def _tls_context(self) -> ssl.SSLContext:
        a = self.access
        if not a.verify_tls:
            return ssl._create_unverified_context()
        return ssl.create_default_context(cafile=str(a.ca_file) if a.ca_file else None)

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
            raise DeployError(self.name, f"cannot open eAPI session at {a.host}:{a.port}: {exc}") from None
        if self.clear_stale_sessions:
            self._abort_stale_sessions()

    def _abort_stale_sessions(self) -> None:
        node = self._device.device
        sessions = node.run_commands(["show configuration sessions"], encoding="json")[0].get("sessions", {})
        for name, info in sorted(sessions.items()):
            if name.startswith("napalm_") and info.get("state") == "pending":
                node.run_commands([f"configure session {name} abort"], encoding="text")

    def running_config(self) -> str:
        return str(self._device.get_config(retrieve="running")["running"])

    def backup(self) -> str:
        return without_preserved("eos", self.running_config())

    def load(self, candidate: str, replace: bool = True) -> None:
        try:
            if replace:
                config = carry_preserved("eos", self.running_config(), candidate)
                self._device.load_replace_candidate(config=config)
            else:
                self._device.load_merge_candidate(config=candidate)
        except SessionLockedException as exc:
            # napalm names its session before checking the lock; forget it, or close() aborts a session
            # that never existed.
            self._device.config_session = None
            raise DeployError(self.name, f"configuration locked by another session: {exc}") from None
        except _LOAD_ERRORS as exc:
            raise DeployError(self.name, f"candidate refused: {exc}") from None

    def diff(self) -> str:
        return str(self._device.compare_config())

    def commit(self, confirm_seconds: int | None = None) -> None:
        try:
            self._device.commit_config(revert_in=confirm_seconds)
        except (CommitError, pyeapi.eapilib.CommandError, OSError) as exc:
            raise DeployError(self.name, f"commit failed: {exc}") from None

    def verify(self, candidate: str) -> str:
        # This session still holds the commit timer (napalm keeps its name for confirm), so the check
        # stages the candidate in a configuration session of its own.
        with EosSession(self.access) as probe:
            probe.load(candidate)
            leftover = probe.diff()
            probe.discard()
        return leftover

    def confirm(self) -> None:
        try:
            self._device.confirm_commit()
        except (CommitError, pyeapi.eapilib.CommandError, OSError) as exc:
            raise DeployError(self.name, f"confirm failed: {exc}") from None

    def discard(self) -> None:
        self._device.discard_config()

    def rollback(self) -> None:
        try:
            self._device.rollback()
        except (pyeapi.eapilib.CommandError, OSError) as exc:
            raise DeployError(self.name, f"rollback failed: {exc}") from None

    def close(self) -> None:
        device = getattr(self, "_device", None)
        if device is None:
            return
        # After a commit timer expired, napalm still aborts the finished session on close; nothing is lost.
        with contextlib.suppress(pyeapi.eapilib.CommandError, pyeapi.eapilib.ConnectionError, OSError):
            device.close()
        self._device = None
