"""Cisco NX-OS through NAPALM's `nxos` (NX-API) or `nxos_ssh` driver.

NX-OS has no commit-confirm: a commit is guarded by the checkpoint NAPALM takes before it, which
`rollback` restores. A full replace always travels over SSH+SCP (NAPALM uploads the candidate to
bootflash: and lets the switch compute the rollback patch), so even an NX-API device needs SSH.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

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

from rocefab.deploy import unified
from rocefab.deploy.device_lock import PREFIX as MARK_PREFIX
from rocefab.deploy.indented_diff import aligned_lines
from rocefab.deploy.inventory import Transport
from rocefab.deploy.preserve import ReplacePreview, carry_preserved, replace_preview, without_preserved
from rocefab.deploy.session import DeployError, DeviceSession, describe
from rocefab.deploy.ssh import host_key_name, known_hosts
from rocefab.platforms.nxos import PRESERVED, bootflash

if TYPE_CHECKING:
    from rocefab.deploy.verify.observation import NextHop, Observation, PortCounters

# NAPALM's NX-OS drivers let NX-API, netmiko and paramiko errors through alongside their own.
_ERRORS = (
    ConnectionException, MergeConfigException, ReplaceConfigException, CommitError, CommandErrorException, OSError,
    ValueError, NXAPIError, NetmikoBaseException, SSHException,
)


FILE_PREFIX = "rocefab_"
# Top-level lines NX-OS keeps through a replace that leaves them out: its rollback patch never removes them.
KEPT_THROUGH_REPLACE = ("version ",)


class NxosSession(DeviceSession):
    _preview: ReplacePreview | None = None  # of the replace staged last
    _settled = True  # no commit of this session awaits confirm or rollback
    _checkpointed = False  # this session committed or rolled back, so this run's checkpoint file exists
    _staged: tuple[str, str, bool] | None = None  # (running config, candidate as sent, replace) of the last load
    commit_confirm: ClassVar[bool] = False
    can_rollback: ClassVar[bool] = True

    def open(self) -> None:
        a = self.access
        # NAPALM's NX-API driver pins the SCP leg to port 22; an ssh_config entry is how another port is
        # reached (netmiko reads it), e.g. the local lab's emulators.
        self._tmp = tempfile.TemporaryDirectory(prefix="rocefab-nxos-")
        ssh_config = Path(self._tmp.name) / "ssh_config"
        ssh_config.write_text(f"Host {a.host}\n  Port {a.ssh_port}\n", encoding="utf-8")
        # netmiko waits up to 10 s for each command's output unless told otherwise: the inventory's timeout
        # bounds every request, on the SSH leg as on NX-API.
        optional: dict[str, Any] = {"ssh_config_file": str(ssh_config), "read_timeout_override": a.timeout_s,
                                    "conn_timeout": a.timeout_s, "auth_timeout": a.timeout_s,
                                    "banner_timeout": a.timeout_s}
        if a.transport is Transport.NXOS_SSH:
            driver, optional["port"] = "nxos_ssh", a.port
        else:
            driver = "nxos"
            optional.update(transport=a.scheme, port=a.port)
            if a.scheme == "https":
                optional["ssl_verify"] = str(a.ca_file) if (a.verify_tls and a.ca_file) else a.verify_tls
        if a.verify_host_key:
            # netmiko refuses an SSH host key that is not in this known_hosts file: the inventory's, cut to this
            # device's entries (under each name its legs may check), since netmiko loads the whole file per leg
            # and paramiko's load compares each line with all before it.
            known = a.known_hosts
            if known.is_file():
                known = Path(self._tmp.name) / "known_hosts"
                known.write_text(known_hosts(a.known_hosts).file_for(
                    host_key_name(a.host, a.ssh_port), host_key_name(a.host, a.port), a.host), encoding="utf-8")
            optional.update(ssh_strict=True, system_host_keys=False, alt_host_keys=True, alt_key_file=str(known))
        else:
            optional["ssh_strict"] = False
        self._device = get_network_driver(driver)(
            a.host, a.username, a.password.reveal(), timeout=a.timeout_s, optional_args=optional
        )
        # NAPALM's fixed bootflash: names, made this run's own (two runs never share a candidate or checkpoint).
        self._device.candidate_cfg = f"{FILE_PREFIX}{self.run_id}_candidate.txt"
        self._device.rollback_cfg = f"{FILE_PREFIX}{self.run_id}_rollback.txt"
        try:
            self._device.open()
        except _ERRORS as exc:
            raise self._fail(f"cannot open {driver} session at {a.host}:{a.port}", exc) from None

    def _fail(self, what: str, exc: BaseException) -> DeployError:
        lost = isinstance(exc, ConnectionException | OSError | NetmikoBaseException | SSHException)
        return DeployError(self.name, f"{what}: {describe(exc, self.access.timeout_s)}", connection_lost=lost)

    @staticmethod
    def normalized(config: str) -> str:
        # `show running-config` stamps the time it was read and when the config last changed.
        return "\n".join(line for line in config.splitlines()
                         if not line.startswith(("!Time:", "!Running configuration last done at:")))

    def _listing(self) -> list[tuple[str, bool]]:
        return bootflash.entries(str(self._device.cli(["dir bootflash:"]).get("dir bootflash:", "")))

    def _bootflash(self) -> list[str]:
        return sorted({name for name, folder in self._listing() if name.startswith(FILE_PREFIX) and not folder})

    def _delete(self, name: str) -> None:
        self._device.cli([f"delete bootflash:{name} no-prompt"])

    # Lock marks as bootflash: directories (`dir` prints them with a trailing slash).
    def lock_marks(self) -> list[str]:
        try:
            listing = self._listing()
        except _ERRORS as exc:
            raise self._fail("reading the lock marks in bootflash:", exc) from None
        return sorted({name for name, folder in listing if name.startswith(MARK_PREFIX) and folder})

    def place_mark(self, name: str) -> None:
        try:
            self._device.cli([f"mkdir bootflash:{name}"])
        except _ERRORS as exc:
            raise self._fail(f"placing the lock mark {name}", exc) from None

    def remove_mark(self, name: str) -> None:
        try:
            self._device.cli([f"rmdir bootflash:{name}"])
        except _ERRORS as exc:
            raise self._fail(f"removing the lock mark {name}", exc) from None

    def cleanup_leftovers(self) -> list[str]:
        ours = {self._device.candidate_cfg, self._device.rollback_cfg}
        try:
            stale = [name for name in self._bootflash() if name not in ours]
            for name in stale:
                self._delete(name)
        except _ERRORS as exc:
            raise self._fail("cleaning up earlier runs' files", exc) from None
        return [f"removed bootflash:{name}, left by an earlier run" for name in stale]

    def replace_preview(self) -> ReplacePreview | None:
        return self._preview

    def running_config(self) -> str:
        return str(self._device.get_config(retrieve="running")["running"])

    def backup(self) -> str:
        return without_preserved(PRESERVED, self.running_config())

    def load(self, candidate: str, replace: bool = True) -> None:
        try:
            running = self.running_config()
            config = carry_preserved(PRESERVED, running, candidate) if replace else candidate
            self._preview = replace_preview(PRESERVED, running, candidate) if replace else None
            if replace:
                self._device.load_replace_candidate(config=config)
            else:
                self._device.load_merge_candidate(config=candidate)
        except _ERRORS as exc:
            raise DeployError(self.name, f"candidate refused: {describe(exc)}") from None
        self._staged = (running, config, replace)

    def diff(self) -> str:
        """The device decides whether anything changes (its rollback patch, or NAPALM's merge diff); what is
        shown is the running config against the staged candidate, section by section, as a unified diff.
        NX-OS's patch is a list of commands with no line positions to build hunks from."""
        try:
            patch = str(self._device.compare_config()).strip()
        except _ERRORS as exc:
            raise self._fail("diff failed", exc) from None
        if not patch or self._staged is None:
            return ""
        running, config, replace = self._staged
        before, after = aligned_lines(self.normalized(running), config, replace, KEPT_THROUGH_REPLACE)
        shown = unified.from_lines(self.name, before, after, indented=True)
        if not shown:
            note = "the device's patch changes what a line comparison does not show:"
            return unified.from_lines(self.name, [], [], notes=[note, *patch.splitlines()])
        return shown

    def commit(self, confirm_seconds: int | None = None) -> None:
        # No revert timer on NX-OS: the fleet runner health-checks and rolls back to the checkpoint instead.
        self._settled = False  # the checkpoint must stay until the commit is confirmed or rolled back
        self._checkpointed = True
        try:
            self._device.commit_config()
        except _ERRORS as exc:
            raise self._fail("commit failed", exc) from None

    def verify(self, candidate: str) -> str:
        self.load(candidate)
        leftover = self.diff()
        self.discard()
        return leftover

    def confirm(self) -> None:
        """Nothing to confirm on the device: the commit stands; its checkpoint is no longer needed."""
        self._settled = True

    def discard(self) -> None:
        try:
            self._device.discard_config()
        except _ERRORS as exc:
            raise self._fail("discard failed", exc) from None

    def rollback(self) -> None:
        try:
            self._device.rollback()
            self._settled = self._checkpointed = True
        except _ERRORS as exc:
            raise self._fail("rollback failed", exc) from None

    def in_maintenance(self, drained: str) -> bool:
        """GIR's mode is no configuration: `show system mode` says it (rocefab/platforms/nxos/maintenance.py)."""
        from rocefab.platforms.nxos import maintenance

        try:
            text = str(self._device.cli([maintenance.SHOW_SYSTEM_MODE]).get(maintenance.SHOW_SYSTEM_MODE, ""))
        except _ERRORS as exc:
            raise self._fail("reading the system mode", exc) from None
        found = maintenance.in_maintenance(text)
        if found is None:
            shown = " ".join(text.split())[:120] or "nothing"
            raise DeployError(self.name, f"`{maintenance.SHOW_SYSTEM_MODE}` answered {shown!r}, which names neither "
                                         "normal nor maintenance mode")
        return found

    def observe(self, device: Any) -> Observation:
        from rocefab.platforms.nxos import observe

        try:
            return observe.observe(self._device, self.name, [p.name for p in device.ports])
        except _ERRORS as exc:
            raise self._fail("reading state for verify", exc) from None
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise DeployError(self.name, f"unreadable show output: {describe(exc)}") from None

    def routes(self, device: Any, prefixes: Sequence[str]) -> dict[str, tuple[NextHop, ...]]:
        from rocefab.platforms.nxos import observe

        try:
            return observe.routes(self._device, prefixes)
        except _ERRORS as exc:
            raise self._fail("reading routes for verify", exc) from None
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise DeployError(self.name, f"unreadable show output: {describe(exc)}") from None

    def counters(self, device: Any) -> dict[str, PortCounters]:
        from rocefab.platforms.nxos import counters as reader

        try:
            return reader.read(self._device, [p.name for p in device.ports])
        except _ERRORS as exc:
            raise self._fail("reading counters for verify", exc) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise DeployError(self.name, f"unreadable counters: {describe(exc)}") from None

    def close(self) -> None:
        device = getattr(self, "_device", None)
        if device is not None:
            with contextlib.suppress(*_ERRORS):
                if self._settled and self._checkpointed and device.rollback_cfg in self._bootflash():
                    self._delete(device.rollback_cfg)
            with contextlib.suppress(*_ERRORS):
                device.close()
            self._device = None
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()
