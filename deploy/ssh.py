"""SSH connections for the NVUE and host drivers: exec with exit codes, SFTP uploads, host keys checked."""

from __future__ import annotations

import contextlib
import hmac
import socket
import threading
from abc import ABC
from collections.abc import Callable
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import TypeVar

import paramiko
from paramiko.hostkeys import HostKeyEntry

from rocefab.deploy.device_lock import PREFIX as MARK_PREFIX
from rocefab.deploy.inventory import Access
from rocefab.deploy.session import DeployError, DeviceSession, describe

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Result:
    status: int
    stdout: str
    stderr: str


class KnownHosts:
    """A known_hosts file read once, its entries found by host name without a walk of the file: paramiko's own
    HostKeys checks every line against all the lines before it while loading, and every entry on each lookup, so a
    fleet's connections decoded its whole file each (202 lab devices: 40,000 keys) and compared quadratically."""

    def __init__(self, path: Path) -> None:
        self.plain: dict[str, list[HostKeyEntry]] = {}
        self.hashed: list[HostKeyEntry] = []  # `|1|salt|hash` names: an HMAC per entry to look one up
        with path.open(encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    entry = HostKeyEntry.from_line(line, number)
                except paramiko.SSHException:  # a line paramiko cannot read is skipped, as its own load does
                    continue
                if entry is None:
                    continue
                if any(h.startswith("|1|") for h in entry.hostnames):
                    self.hashed.append(entry)
                for name in entry.hostnames:
                    if not name.startswith("|1|"):
                        self.plain.setdefault(name, []).append(entry)

    def entries(self, name: str) -> list[HostKeyEntry]:
        """The entries naming `name` (`host`, or `[host]:port` off port 22), in the file's order."""
        found = list(self.plain.get(name, ()))
        found += (e for e in self.hashed if any(
            h.startswith("|1|") and hmac.compare_digest(paramiko.HostKeys.hash_host(name, h), h) for h in e.hostnames))
        return found

    def keys(self, name: str) -> dict[str, paramiko.PKey]:
        """Each key type's first key for `name`, as paramiko's lookup answers."""
        keys: dict[str, paramiko.PKey] = {}
        for entry in self.entries(name):
            keys.setdefault(entry.key.get_name(), entry.key)
        return keys

    def file_for(self, *names: str) -> str:
        """A known_hosts text of the entries naming any of `names` only: for a library that loads a whole file per
        connection."""
        found = {id(e): e for name in names for e in self.entries(name)}
        return "".join(line for entry in found.values() if (line := entry.to_line()))


_known_hosts_files: dict[Path, tuple[tuple[int, int], KnownHosts]] = {}
_known_hosts_lock = threading.Lock()


def known_hosts(path: Path) -> KnownHosts:
    """The known_hosts file, read once per process (and again when it changes)."""
    stat = path.stat()
    version = (stat.st_mtime_ns, stat.st_size)
    with _known_hosts_lock:
        cached = _known_hosts_files.get(path)
        if cached is None or cached[0] != version:
            cached = version, KnownHosts(path)
            _known_hosts_files[path] = cached
        return cached[1]


def host_key_name(host: str, port: int) -> str:
    """The name a known_hosts line gives a server: `host` on port 22, `[host]:port` elsewhere."""
    return host if port == 22 else f"[{host}]:{port}"


def _connected(host: str, port: int, timeout_s: float) -> socket.socket:
    """A TCP connection with Nagle's algorithm off, as OpenSSH's client sets it: paramiko leaves it on, so each
    time it sends two messages back to back (key exchange, then authentication) the second waits for the
    receiver's delayed ACK of the first: ~45 ms twice per connection, 90 of a lab host's 100 ms to log in."""
    sock = socket.create_connection((host, port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class SshConnection:
    def __init__(self, access: Access) -> None:
        self.access = access
        self.client = paramiko.SSHClient()
        # One SFTP channel for the connection's uploads, listings and removals (each new one costs its own round
        # trips: channel open, subsystem request, version exchange).
        self._sftp_client: paramiko.SFTPClient | None = None

    def open(self) -> None:
        a = self.access
        if a.verify_host_key:
            if a.known_hosts.is_file():
                # This host's keys only, under the name paramiko checks the server's key against
                name = host_key_name(a.host, a.port)
                ours = self.client.get_host_keys()
                for keytype, key in known_hosts(a.known_hosts).keys(name).items():
                    ours.add(name, keytype, key)
            # An unknown or changed host key is refused, never silently trusted.
            self.client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            self.client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        try:
            sock = _connected(a.host, a.port, a.timeout_s)
            try:
                self.client.connect(
                    a.host, port=a.port, username=a.username, password=a.password.reveal(), timeout=a.timeout_s,
                    banner_timeout=a.timeout_s, auth_timeout=a.timeout_s, look_for_keys=False, allow_agent=False,
                    sock=sock,
                )
            except BaseException:
                sock.close()  # paramiko closes only the transports it got going
                raise
        except paramiko.AuthenticationException:
            raise DeployError(a.name, f"SSH authentication failed for {a.username}@{a.host}:{a.port}") from None
        except paramiko.BadHostKeyException as exc:
            raise DeployError(a.name, f"SSH host key of {a.host}:{a.port} does not match {a.known_hosts}: "
                                      f"{describe(exc)}") from None
        except paramiko.SSHException as exc:
            if "known_hosts" in str(exc) or "not found in" in str(exc):
                raise DeployError(a.name, f"SSH host key of {a.host}:{a.port} is not in {a.known_hosts}: "
                                          f"{describe(exc)}") from None
            raise DeployError(a.name, f"cannot reach {a.host}:{a.port} over SSH: {describe(exc, a.timeout_s)}",
                              connection_lost=True) from None
        except (TimeoutError, OSError, EOFError) as exc:
            raise DeployError(a.name, f"cannot reach {a.host}:{a.port} over SSH: {describe(exc, a.timeout_s)}",
                              connection_lost=True) from None

    def run(self, command: str, timeout_s: int | None = None) -> Result:
        timeout = timeout_s or self.access.timeout_s
        try:
            _, stdout, stderr = self.client.exec_command(command, timeout=timeout)
            out = stdout.read().decode(errors="replace")
            err = stderr.read().decode(errors="replace")
            status = stdout.channel.recv_exit_status()
        except (TimeoutError, paramiko.SSHException, OSError, EOFError) as exc:
            raise DeployError(self.access.name, f"'{command.split()[0]}' over SSH: {describe(exc, timeout)}",
                              connection_lost=True) from None
        if status == -1:  # paramiko's value when the channel closed without an exit status
            raise DeployError(self.access.name, f"'{command.split()[0]}': the connection closed before the "
                                                "command finished (no exit status)", connection_lost=True)
        return Result(status, out, err)

    def _sftp(self, what: str, action: Callable[[paramiko.SFTPClient], T]) -> T:
        try:
            if self._sftp_client is None:
                self._sftp_client = self.client.open_sftp()
            return action(self._sftp_client)
        except (TimeoutError, paramiko.SSHException, OSError, EOFError) as exc:
            if not isinstance(exc, FileNotFoundError | PermissionError):  # the channel may be broken: a new one next
                self._close_sftp()
            raise DeployError(self.access.name, f"{what} over SFTP: {describe(exc, self.access.timeout_s)}",
                              connection_lost=not isinstance(exc, FileNotFoundError | PermissionError)) from None

    def upload(self, content: str, path: str, mode: int = 0o644, make_folder: str | None = None) -> None:
        """Write `path` with `mode`; `make_folder` (its folder, relative to the login's home) is made first when
        missing, in the same SFTP session."""
        def put(sftp: paramiko.SFTPClient) -> None:
            if make_folder is not None:
                try:
                    sftp.stat(make_folder)
                except FileNotFoundError:
                    sftp.mkdir(make_folder)
            sftp.putfo(BytesIO(content.encode()), path)
            sftp.chmod(path, mode)
        self._sftp(f"upload of {path}", put)

    def download(self, path: str) -> str:
        def get(sftp: paramiko.SFTPClient) -> str:
            buffer = BytesIO()
            sftp.getfo(path, buffer)
            return buffer.getvalue().decode()
        return self._sftp(f"download of {path}", get)

    def listdir(self, path: str = ".", missing_ok: bool = False) -> list[str]:
        """The folder's entries, sorted; a folder that does not exist has none when `missing_ok`."""
        def listing(sftp: paramiko.SFTPClient) -> list[str]:
            try:
                return sorted(sftp.listdir(path))
            except FileNotFoundError:
                if missing_ok:
                    return []
                raise
        return self._sftp(f"listing {path}", listing)

    def remove(self, path: str) -> None:
        """Remove a file; one that is already gone is fine."""
        def rm(sftp: paramiko.SFTPClient) -> None:
            with contextlib.suppress(FileNotFoundError):
                sftp.remove(path)
        self._sftp(f"removing {path}", rm)

    def make_folder(self, path: str) -> None:
        self._sftp(f"making {path}", lambda sftp: sftp.mkdir(path, 0o755))

    def remove_folder(self, path: str) -> None:
        """Remove an empty folder; one that is already gone is fine."""
        def rmdir(sftp: paramiko.SFTPClient) -> None:
            with contextlib.suppress(FileNotFoundError):
                sftp.rmdir(path)
        self._sftp(f"removing {path}", rmdir)

    def _close_sftp(self) -> None:
        if self._sftp_client is not None:
            with contextlib.suppress(Exception):
                self._sftp_client.close()
            self._sftp_client = None

    def close(self) -> None:
        self._close_sftp()
        self.client.close()


MARK_FOLDER = "/tmp"


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

    # Lock marks in /tmp: every login of a Linux box can write there, and (sticky bit) none can remove another
    # login's mark, which a --force-unlock from another login then reports as the device's error.
    def lock_marks(self) -> list[str]:
        return [n for n in self.ssh.listdir(MARK_FOLDER) if n.startswith(MARK_PREFIX)]

    def place_mark(self, name: str) -> None:
        self.ssh.make_folder(f"{MARK_FOLDER}/{name}")

    def remove_mark(self, name: str) -> None:
        self.ssh.remove_folder(f"{MARK_FOLDER}/{name}")

    def close(self) -> None:
        if self._ssh is not None:
            self._ssh.close()
            self._ssh = None
