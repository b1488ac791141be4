"""A Linux GPU host for the lab: exec requests run real bash against a fake host (lab/fakehost.py).

The host lives in one sandbox folder: the fake sysfs in `sys/`, the fake `/etc` in `etc/`, and whatever a client
uploads by SFTP/SCP (which is chrooted to the sandbox). Every command runs as `bash -c <command>` with the sandbox
as working directory and a clean environment: PATH is the host stubs then /usr/bin:/bin, and ROCEFAB_SYSFS_ROOT /
ROCEFAB_ETC_ROOT point at the fake host, so a rendered host script uploaded next to it runs as it would on a real
node (`bash gpu001.roce.sh --check`) while the stubs refuse to touch the real machine. Use paths relative to the
sandbox: an absolute path in a command is the test machine's. Each command (also each line typed in the netmiko
shell) is a fresh bash, so `cd` or variables do not carry over to the next line.
"""

from __future__ import annotations

import hmac
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from rocefab.lab import fakehost
from rocefab.lab.faults import Reachability
from rocefab.lab.sshd import Disconnect, Outcome

EXEC_TIMEOUT_S = 120


class LinuxHost:
    """`LinuxHost(sandbox, "gpu001", netdevs, roce_lag)` builds a pristine fake host in `sandbox` (which must not
    exist yet) and serves it to `rocefab.lab.sshd.LabSSHServer`."""

    def __init__(self, sandbox: Path, hostname: str, netdevs: Sequence[str],
                 roce_lag: Mapping[str, tuple[str, str]], *, rdma: Mapping[str, str] | None = None,
                 speeds: Mapping[str, int] | None = None, username: str = "root", password: str = "lab",
                 refuse_logins: bool = False) -> None:
        self.sandbox = sandbox.resolve()
        self.sandbox.mkdir(parents=True)
        fakehost.make_host(self.sandbox, netdevs, roce_lag, rdma=rdma, speeds=speeds)
        self.hostname = hostname
        self.username = username
        self.password = password
        self.refuse_logins = refuse_logins  # fault: every login fails, as after a password change
        self.reach = Reachability()
        self.delay_s = 0.0  # fault: every command answers this much later

    @property
    def root(self) -> Path:
        return self.sandbox

    def authenticate(self, username: str, password: str) -> bool:
        return (not self.refuse_logins and username == self.username
                and hmac.compare_digest(password.encode(), self.password.encode()))

    def prompt(self, username: str) -> str:
        return f"{username}@{self.hostname}:~{'#' if username == 'root' else '$'} "

    def handle(self, command: str, username: str) -> Outcome:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.reach.cut_before(command):
            raise Disconnect
        done = subprocess.run(["/bin/bash", "-c", command], cwd=self.sandbox, env=self.env(), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=EXEC_TIMEOUT_S, check=False)
        if self.reach.cut_after(command):
            raise Disconnect
        return done.returncode, done.stdout, done.stderr

    def env(self) -> dict[str, str]:
        return fakehost.host_env(self.sandbox, env={"HOME": str(self.sandbox), "HOSTNAME": self.hostname,
                                                    "USER": self.username})

    def close(self) -> None:
        """Nothing runs between commands; the sandbox stays for inspection (the caller owns the folder)."""
