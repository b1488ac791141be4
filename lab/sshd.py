"""One SSH server for every lab device that is driven over SSH (Cumulus NVUE switch, Linux GPU host).

`LabSSHServer(device)` listens on 127.0.0.1 (ephemeral port) with its own asyncio loop in a background thread, so
synchronous tests and the synchronous deploy code can use it. It offers what the real boxes offer a deploy tool:

- password authentication, decided by the device (`Device.authenticate`, which also lets a device refuse);
- a fresh ed25519 host key per server; `known_hosts_line()` gives the line a client pins it with, because the
  deploy layer verifies host keys by default;
- exec requests (`asyncssh.SSHClientConnection.run`, paramiko `exec_command`): the command goes to
  `Device.handle`, its exit status, stdout and stderr go back as they are;
- an interactive shell for netmiko: the device's prompt, and asyncssh's line editor, whose echo of each typed line
  is what netmiko's `cmd_verify` waits for (deploy-toolchain.md §5);
- SFTP and SCP, chrooted to `Device.root`.

`Device.handle` runs in a worker thread (a host device runs real bash, which blocks), so a device must be
thread-safe. It may answer with `Ask` instead of a result: the server prints the question and hands the next input
line to the device, which is how NVUE's `Are you sure? [y/N]` waits for an answer on exec and shell alike. Raising
`Disconnect` drops the whole connection (fault injection).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

import asyncssh

from rocefab.lab.faults import Reachability

Result = tuple[int, str, str]  # exit status, stdout, stderr
T = TypeVar("T")


@dataclass(frozen=True)
class Ask:
    """A command waiting for one line of input: `question` is printed, the answer (stripped) goes to `then`."""

    question: str
    then: Callable[[str], Result | Ask]


Outcome = Result | Ask


class Disconnect(Exception):
    """Raised by `Device.handle` to drop the SSH connection at once (nothing more is sent)."""


class Device(Protocol):
    reach: Reachability

    @property
    def root(self) -> Path:
        """The folder SFTP/SCP are chrooted to."""
        ...

    def authenticate(self, username: str, password: str) -> bool: ...

    def prompt(self, username: str) -> str: ...

    def handle(self, command: str, username: str) -> Outcome: ...

    def close(self) -> None: ...


class LabSSHServer:
    """An SSH server for one device on 127.0.0.1:<ephemeral>; `stop()` (or leaving the `with` block) ends it all."""

    def __init__(self, device: Device, *, name: str = "device", workers: int = 16) -> None:
        self.device = device
        self.host = "127.0.0.1"
        self._key = asyncssh.generate_private_key("ssh-ed25519")
        # "ssh-ed25519 AAAA..." without a comment: the form of a known_hosts entry
        self.host_public_key = " ".join(self._key.export_public_key().decode().split()[:2])
        self._connections: set[asyncssh.SSHServerConnection] = set()
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix=f"lab-{name}")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"lab-sshd-{name}", daemon=True)
        self._thread.start()
        try:
            self._acceptor = self._call(self._listen())
        except BaseException:
            self._halt()
            raise
        self.port: int = self._acceptor.get_port()

    def known_hosts_line(self) -> str:
        """`[127.0.0.1]:<port> ssh-ed25519 AAAA...`, the line that makes a client trust exactly this server."""
        return f"[{self.host}]:{self.port} {self.host_public_key}"

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._call(self._shutdown())
        finally:
            self._halt()
            self.device.close()

    def __enter__(self) -> LabSSHServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # --- loop plumbing ----------------------------------------------------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    def _halt(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
        # waits for device calls still running (a bash script): no thread or child process outlives the server
        self._executor.shutdown(wait=True, cancel_futures=True)

    async def _listen(self) -> asyncssh.SSHAcceptor:
        root = os.fsencode(self.device.root.resolve())
        return await asyncssh.create_server(
            lambda: _Auth(self), self.host, 0, server_host_keys=[self._key], process_factory=self._session,
            sftp_factory=lambda chan: asyncssh.SFTPServer(chan, chroot=root), allow_scp=True, line_editor=True,
            encoding="utf-8")

    async def _shutdown(self) -> None:
        self._acceptor.close()
        for conn in list(self._connections):
            conn.close()
        await asyncio.gather(*(c.wait_closed() for c in list(self._connections)), return_exceptions=True)
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _in_worker(self, call: Callable[[], Outcome]) -> Outcome:
        return await self._loop.run_in_executor(self._executor, call)

    # --- sessions ---------------------------------------------------------------------------------------------------

    async def _session(self, process: asyncssh.SSHServerProcess[str]) -> None:
        username = str(process.get_extra_info("username"))
        try:
            if process.command is None:
                await self._shell(process, username)
            else:
                status, out, err = await self._run(process, process.command, username)
                process.stdout.write(out)
                process.stderr.write(err)
                process.exit(status)
        except Disconnect:
            process.channel.get_connection().abort()
        except (asyncssh.BreakReceived, asyncssh.SignalReceived, asyncssh.TerminalSizeChanged):
            process.exit(130)
        except (asyncssh.DisconnectError, BrokenPipeError, ConnectionError):
            pass  # the client went away; nothing to answer

    async def _run(self, process: asyncssh.SSHServerProcess[str], command: str, username: str) -> Result:
        """The device's answer to one command, asking the client for input lines as long as the device wants."""
        outcome = await self._in_worker(partial(self._guarded, partial(self.device.handle, command, username)))
        while isinstance(outcome, Ask):
            process.stdout.write(outcome.question)
            answer = await _read_line(process)
            outcome = await self._in_worker(partial(self._guarded, partial(outcome.then, (answer or "").strip())))
        return outcome

    @staticmethod
    def _guarded(call: Callable[[], Outcome]) -> Outcome:
        """A device bug becomes exit 255 with the error on stderr, not a silently closed channel."""
        try:
            return call()
        except Disconnect:
            raise
        except Exception as exc:
            return 255, "", f"lab emulator error: {exc!r}\n"

    async def _shell(self, process: asyncssh.SSHServerProcess[str], username: str) -> None:
        while True:
            process.stdout.write(self.device.prompt(username))
            line = await _read_line(process)
            if line is None or line.strip() in ("exit", "logout"):
                break
            if not line.strip():
                continue
            _, out, err = await self._run(process, line.strip(), username)
            text = out + err  # one terminal shows both streams: stdout, then stderr (not interleaved as on a tty)
            process.stdout.write(text if not text or text.endswith("\n") else text + "\n")
        process.exit(0)


async def _read_line(process: asyncssh.SSHServerProcess[str]) -> str | None:
    """The next input line, or None at end of input; a terminal resize is not input."""
    while True:
        try:
            line = await process.stdin.readline()
        except asyncssh.TerminalSizeChanged:
            continue
        return line or None


class _Auth(asyncssh.SSHServer):
    """Password logins only, decided by the device."""

    def __init__(self, owner: LabSSHServer) -> None:
        self._owner = owner
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._owner._connections.add(conn)
        if self._owner.device.reach.down:
            conn.abort()  # unreachable: the connection closes before the SSH handshake

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._owner._connections.discard(self._conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return self._owner.device.authenticate(username, password)
