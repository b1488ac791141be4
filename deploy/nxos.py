"""Cisco NX-OS through NAPALM's `nxos` (NX-API) or `nxos_ssh` driver.

NX-OS has no commit-confirm: a commit is guarded by the checkpoint NAPALM takes before it, which
`rollback` restores. A full replace always travels over SSH+SCP (NAPALM uploads the candidate to
bootflash: and lets the switch compute the rollback patch), so even an NX-API device needs SSH.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from napalm import get_network_driver
from napalm.base.exceptions import (
    CommandErrorException,
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
)
from napalm.nxapi_plumbing.errors import NXAPIError
from netmiko.exceptions import NetmikoBaseException
from paramiko.ssh_exception import SSHException

from rocefab.deploy.inventory import Transport
from rocefab.deploy.preserve import carry_preserved, without_preserved
from rocefab.deploy.session import DeployError, DeviceSession

# NAPALM's NX-OS drivers let NX-API, netmiko and paramiko errors through alongside their own.
_ERRORS = (
    ConnectionException, MergeConfigException, ReplaceConfigException, CommitError, CommandErrorException, OSError,
    ValueError, NXAPIError, NetmikoBaseException, SSHException,
)


class NxosSession(DeviceSession):
    commit_confirm: ClassVar[bool] = False
    native_diff: ClassVar[bool] = True  # for replaces: the switch computes the rollback patch
    can_rollback: ClassVar[bool] = True

    def open(self) -> None:
        a = self.access
        # NAPALM's NX-API driver pins the SCP leg to port 22; an ssh_config entry is how another port is
        # reached (netmiko reads it), e.g. the local lab's emulators.
        self._tmp = tempfile.TemporaryDirectory(prefix="rocefab-nxos-")
        ssh_config = Path(self._tmp.name) / "ssh_config"
        ssh_config.write_text(f"Host {a.host}\n  Port {a.ssh_port}\n", encoding="utf-8")
        optional: dict[str, Any] = {"ssh_config_file": str(ssh_config)}
        if a.transport is Transport.NXOS_SSH:
            driver, optional["port"] = "nxos_ssh", a.port
        else:
            driver = "nxos"
            optional.update(transport=a.scheme, port=a.port)
            if a.scheme == "https":
                optional["ssl_verify"] = str(a.ca_file) if (a.verify_tls and a.ca_file) else a.verify_tls
        if a.verify_host_key:
            # netmiko refuses an SSH host key that is not in this known_hosts file.
            optional.update(ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                            alt_key_file=str(a.known_hosts))
        else:
            optional["ssh_strict"] = False
        self._device = get_network_driver(driver)(
            a.host, a.username, a.password.reveal(), timeout=a.timeout_s, optional_args=optional
        )
        try:
            self._device.open()
        except _ERRORS as exc:
            raise DeployError(self.name, f"cannot open {driver} session at {a.host}:{a.port}: {exc}") from None

    def running_config(self) -> str:
        return str(self._device.get_config(retrieve="running")["running"])

    def backup(self) -> str:
        return without_preserved("nxos", self.running_config())

    def load(self, candidate: str, replace: bool = True) -> None:
        try:
            if replace:
                config = carry_preserved("nxos", self.running_config(), candidate)
                self._device.load_replace_candidate(config=config)
            else:
                self._device.load_merge_candidate(config=candidate)
        except _ERRORS as exc:
            raise DeployError(self.name, f"candidate refused: {exc}") from None

    def diff(self) -> str:
        try:
            return str(self._device.compare_config())
        except _ERRORS as exc:
            raise DeployError(self.name, f"diff failed: {exc}") from None

    def commit(self, confirm_seconds: int | None = None) -> None:
        # No revert timer on NX-OS: the fleet runner health-checks and rolls back to the checkpoint instead.
        try:
            self._device.commit_config()
        except _ERRORS as exc:
            raise DeployError(self.name, f"commit failed: {exc}") from None

    def verify(self, candidate: str) -> str:
        self.load(candidate)
        leftover = self.diff()
        self.discard()
        return leftover

    def confirm(self) -> None:
        """Nothing to confirm: the commit stands until rolled back."""

    def discard(self) -> None:
        try:
            self._device.discard_config()
        except _ERRORS as exc:
            raise DeployError(self.name, f"discard failed: {exc}") from None

    def rollback(self) -> None:
        try:
            self._device.rollback()
        except _ERRORS as exc:
            raise DeployError(self.name, f"rollback failed: {exc}") from None

    def close(self) -> None:
        device = getattr(self, "_device", None)
        if device is not None:
            with contextlib.suppress(*_ERRORS):
                device.close()
            self._device = None
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()
