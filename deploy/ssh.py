"""SSH connections for the NVUE and host drivers: exec with exit codes, SFTP uploads, host keys checked."""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass
from io import BytesIO

import paramiko

from rocefab.deploy.inventory import Access
from rocefab.deploy.session import DeployError, DeviceSession


@dataclass(frozen=True, slots=True)
class Result:
    status: int
    stdout: str
    stderr: str


class SshConnection:
    def __init__(self, access: Access) -> None:
        self.access = access
        self.client = paramiko.SSHClient()

    def open(self) -> None:
        a = self.access
        if a.verify_host_key:
            if a.known_hosts.is_file():
                self.client.load_host_keys(str(a.known_hosts))
            # An unknown or changed host key is refused, never silently trusted.
            self.client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            self.client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        try:
            self.client.connect(
                a.host, port=a.port, username=a.username, password=a.password.reveal(), timeout=a.timeout_s,
                banner_timeout=a.timeout_s, auth_timeout=a.timeout_s, look_for_keys=False, allow_agent=False,
            )
        except paramiko.AuthenticationException:
            raise DeployError(a.name, f"SSH authentication failed for {a.username}@{a.host}:{a.port}") from None
        except paramiko.SSHException as exc:
            raise DeployError(a.name, f"SSH to {a.host}:{a.port} failed: {exc}") from None
        except (TimeoutError, OSError) as exc:
            raise DeployError(a.name, f"cannot reach {a.host}:{a.port}: {exc}") from None

    def run(self, command: str, timeout_s: int | None = None) -> Result:
        try:
            _, stdout, stderr = self.client.exec_command(command, timeout=timeout_s or self.access.timeout_s)
            out = stdout.read().decode(errors="replace")
            err = stderr.read().decode(errors="replace")
            status = stdout.channel.recv_exit_status()
        except (TimeoutError, paramiko.SSHException, OSError) as exc:
            raise DeployError(self.access.name, f"'{command.split()[0]}' failed over SSH: {exc}") from None
        return Result(status, out, err)

    def upload(self, content: str, path: str, mode: int = 0o644) -> None:
        try:
            with self.client.open_sftp() as sftp:
                sftp.putfo(BytesIO(content.encode()), path)
                sftp.chmod(path, mode)
        except (paramiko.SSHException, OSError) as exc:
            raise DeployError(self.access.name, f"upload of {path} failed: {exc}") from None

    def close(self) -> None:
        self.client.close()


class SshDeviceSession(DeviceSession, ABC):
    """A session that speaks to its device over one SSH connection (NVUE switches, hosts)."""

    _ssh: SshConnection | None = None

    @property
    def ssh(self) -> SshConnection:
        if self._ssh is None:
            raise DeployError(self.name, "session is not open")
        return self._ssh

    def _connect(self) -> None:
        self._ssh = SshConnection(self.access)
        self._ssh.open()

    def close(self) -> None:
        if self._ssh is not None:
            self._ssh.close()
            self._ssh = None
