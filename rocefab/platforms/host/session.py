"""Linux GPU hosts: upload the rendered NIC/bond script over SFTP and run it over SSH exec.

The script is its own diff: `--check` reports drift and changes nothing (exit 0 in sync, 1 drift, 3 a
missing prerequisite); its DRIFT lines are shown as a unified diff of settings (drift_diff.py). Committing
runs it; it is idempotent, so there is nothing to confirm, and host runtime settings have no earlier
revision to roll back to.
"""

from __future__ import annotations

import contextlib
import shlex
from typing import TYPE_CHECKING, Any, ClassVar

from rocefab.deploy.session import DeployError
from rocefab.deploy.ssh import Result, SshDeviceSession
from rocefab.platforms.host.drift_diff import drift_diff

if TYPE_CHECKING:
    from rocefab.deploy.verify.observation import HostCounters, Observation

REMOTE_DIR = "rocefab"
IN_SYNC, DRIFT, PREREQUISITE_MISSING = 0, 1, 3


class HostSession(SshDeviceSession):
    commit_confirm: ClassVar[bool] = False
    can_rollback: ClassVar[bool] = False
    has_backup: ClassVar[bool] = False
    heavy_diff: ClassVar[bool] = True
    _staged: str | None = None

    def open(self) -> None:
        # Only the connection: verify reads without writing anything, and staging makes the scripts' folder
        # itself, in the SFTP session of its upload (one exec round trip, and one process on the host, fewer).
        self._connect()
        self._staged = None

    @property
    def _script(self) -> str:
        return f"{REMOTE_DIR}/{self.name}.roce.sh"

    @property
    def _candidate(self) -> str:
        return f"{self._script}.{self.run_id}.candidate"

    def _run(self, command: str, expect: tuple[int, ...]) -> Result:
        prefix = "sudo -n " if self.access.sudo else ""
        result = self.ssh.run(prefix + command)
        if result.status not in expect:
            detail = (result.stderr or result.stdout).strip().splitlines()
            said = " | ".join(detail[-3:]) or "(no output)"
            raise DeployError(self.name, f"'{command}' exited {result.status}: {said}")
        return result

    def cleanup_leftovers(self) -> list[str]:
        listing = self.ssh.listdir(REMOTE_DIR, missing_ok=True)  # no folder yet: nothing left by an earlier run
        stale = [f for f in listing if f.endswith(".candidate") and f"{REMOTE_DIR}/{f}" != self._candidate]
        for name in stale:
            self.ssh.remove(f"{REMOTE_DIR}/{name}")
        return [f"removed {REMOTE_DIR}/{name}, left by an earlier run" for name in stale]

    def close(self) -> None:
        if self._ssh is not None and self._staged is not None:
            with contextlib.suppress(DeployError):
                self.ssh.remove(self._candidate)
        super().close()

    def running_config(self) -> str:
        """The drift report of the script last committed, the nearest thing a host has to a running config."""
        result = self._run(f"test ! -e {self._script} || bash {self._script} --check",
                           expect=(IN_SYNC, DRIFT))
        return result.stdout

    def backup(self) -> str:
        raise DeployError(self.name, "hosts have no configuration to back up; their script is the source")

    def load(self, candidate: str, replace: bool = True) -> None:
        self.ssh.upload(candidate, self._candidate, mode=0o755, make_folder=REMOTE_DIR)
        self._staged = candidate

    def diff(self) -> str:
        if self._staged is None:
            return ""
        result = self._run(f"bash {shlex.quote(self._candidate)} --check",
                           expect=(IN_SYNC, DRIFT, PREREQUISITE_MISSING))
        if result.status == PREREQUISITE_MISSING:
            raise DeployError(self.name, result.stderr.strip() or "a prerequisite is missing")
        return drift_diff(self.name, result.stdout, self._staged)

    def commit(self, confirm_seconds: int | None = None) -> None:
        result = self.ssh.run(("sudo -n " if self.access.sudo else "") + f"bash {shlex.quote(self._candidate)}")
        if result.status != IN_SYNC:
            failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
            detail = " | ".join(failed or result.stderr.strip().splitlines()[-3:])
            raise DeployError(self.name, f"host script exited {result.status}: {detail}")
        self._run(f"mv {shlex.quote(self._candidate)} {shlex.quote(self._script)}", expect=(0,))
        self._staged = None

    def verify(self, candidate: str) -> str:
        result = self._run(f"bash {self._script} --check", expect=(IN_SYNC, DRIFT, PREREQUISITE_MISSING))
        return "" if result.status == IN_SYNC else result.stdout.strip()

    def observe(self, device: Any) -> Observation:
        from rocefab.platforms.host import observe

        netdevs = [*(b.name for b in device.bonds), *(m.netdev for b in device.bonds for m in b.members),
                   *(n.netdev for n in device.nics)]
        result = self._run(f"bash -c {shlex.quote(observe.script(netdevs, device.rdma_devices))}", expect=(0,))
        return observe.parse(result.stdout, self.name)

    def host_counters(self, device: Any) -> HostCounters:
        from rocefab.platforms.host import counters

        ports = [*(m.netdev for b in device.bonds for m in b.members), *(n.netdev for n in device.nics)]
        result = self._run(f"bash -c {shlex.quote(counters.script(ports, device.rdma_devices))}", expect=(0,))
        return counters.parse(result.stdout)

    def confirm(self) -> None:
        """Nothing to confirm."""

    def discard(self) -> None:
        if self._staged is not None:
            self.ssh.remove(self._candidate)
            self._staged = None

    def rollback(self) -> None:
        raise DeployError(self.name, "host runtime settings cannot be rolled back; rerun the previous script")
