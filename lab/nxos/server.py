"""The network front ends of the lab's NX-OS emulator (lab/nxos/device.py) on 127.0.0.1: NX-API (JSON-RPC
`POST /ins` over HTTP or HTTPS) and SSH (interactive CLI, one-shot commands, SCP and SFTP into bootflash), both
answered by the CLI engine (lab/nxos/cli.py); `NxosServer` runs the two listeners of one device.
"""

import asyncio
import base64
import json
import sys
import threading
import time
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import asyncssh

from rocefab.lab.nxos.cli import NO_FILE, CliSession, DroppedError, Reply, SessionEndError, fname
from rocefab.lab.nxos.device import NxosDevice
from rocefab.lab.nxos.grammar import INVALID
from rocefab.lab.tls import LabCertificate

__all__ = ["NxosServer", "serve_nxos"]


# -- NX-API over HTTP
def _nxapi_handler(device: NxosDevice) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            if device.reach.down:
                self.close_connection = True  # unreachable: no answer at all
                return
            try:
                user, _, pw = base64.b64decode(self.headers.get("Authorization", "")[6:]).decode().partition(":")
            except ValueError:  # not Basic auth at all
                user = pw = ""
            if not device.check_password(user, pw):
                self._send(401, b"Unauthorized", {"WWW-Authenticate": 'Basic realm="nxapi"'})
                return
            if self.path != "/ins":
                self._send(404, b"Not Found", {})
                return
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            if device.faults.delay_seconds:
                time.sleep(device.faults.delay_seconds)
            items = payload if isinstance(payload, list) else [payload]
            session, out = device.session(implicit_config=True), []
            for item in items:
                ident, method = item.get("id"), item.get("method")
                if method not in ("cli", "cli_ascii"):
                    err = {"code": -32601, "message": "Method not found"}
                    out.append({"jsonrpc": "2.0", "id": ident, "error": err})
                    break
                try:
                    reply = session.run(item["params"]["cmd"])
                except DroppedError:
                    self.close_connection = True  # no status line at all: the client sees the peer hang up
                    return
                except SessionEndError:
                    reply = Reply()
                if reply.error:  # NX-API stops the batch at the first failing command
                    err = {"code": -32602, "message": "Invalid params", "data": {"msg": reply.text.rstrip() + "\n"}}
                    out.append({"jsonrpc": "2.0", "id": ident, "error": err})
                    break
                result: Any = None  # a config line answers `null`
                if method == "cli_ascii":
                    result = {"msg": reply.text}
                elif reply.body is not None:
                    result = {"body": reply.body}
                elif reply.text:
                    result = {"msg": reply.text}
                out.append({"jsonrpc": "2.0", "id": ident, "result": result})
            answer = out if isinstance(payload, list) else out[0]
            self._send(200, json.dumps(answer).encode(), {"Content-Type": "application/json-rpc"})

    return Handler


# -- SSH: interactive CLI, and SCP/SFTP into bootflash
class _NxapiServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone before its answer was written (a closed connection, a timed-out test) is nothing to report:
        the switch just drops the answer. socketserver would print a traceback into whatever shares this process's
        stderr, such as another test's captured output."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Bootflash(asyncssh.SFTPServer):
    """SFTP/SCP server whose only directory is the device's bootflash dict (`bootflash:/x` -> file x)."""

    def __init__(self, chan: asyncssh.SSHServerChannel[bytes], device: NxosDevice) -> None:
        super().__init__(chan)
        self.device = device

    def _name(self, path: bytes) -> str:
        return fname(path.decode("utf-8", "surrogateescape"))

    def _attrs(self, name: str) -> asyncssh.SFTPAttrs:
        if not name or name == ".":
            return asyncssh.SFTPAttrs(type=asyncssh.FILEXFER_TYPE_DIRECTORY, permissions=0o40755)
        if name not in self.device.bootflash:
            raise asyncssh.SFTPNoSuchFile(NO_FILE)
        size = len(self.device.bootflash[name].encode("utf-8", "surrogateescape"))
        return asyncssh.SFTPAttrs(type=asyncssh.FILEXFER_TYPE_REGULAR, size=size, permissions=0o100644)

    def open(self, path: bytes, pflags: int, attrs: asyncssh.SFTPAttrs) -> object:
        name = self._name(path)
        old = self.device.bootflash.get(name)
        if old is None and not pflags & asyncssh.FXF_WRITE:
            raise asyncssh.SFTPNoSuchFile(NO_FILE)
        data = bytearray() if old is None or pflags & asyncssh.FXF_TRUNC else bytearray(old.encode())
        return [name, data, bool(pflags & asyncssh.FXF_WRITE)]

    def read(self, file_obj: object, offset: int, size: int) -> bytes:
        assert isinstance(file_obj, list)
        return bytes(file_obj[1][offset : offset + size])

    def write(self, file_obj: object, offset: int, data: bytes) -> int:
        assert isinstance(file_obj, list)
        file_obj[1][offset : offset + len(data)] = data
        return len(data)

    def close(self, file_obj: object) -> None:
        assert isinstance(file_obj, list)
        if file_obj[2]:  # a file appears on bootflash when its upload is closed
            with self.device.lock:
                self.device.bootflash[file_obj[0]] = bytes(file_obj[1]).decode("utf-8", "surrogateescape")

    def stat(self, path: bytes) -> asyncssh.SFTPAttrs:
        return self._attrs(self._name(path))

    def lstat(self, path: bytes) -> asyncssh.SFTPAttrs:
        return self._attrs(self._name(path))

    def fstat(self, file_obj: object) -> asyncssh.SFTPAttrs:
        assert isinstance(file_obj, list)
        return asyncssh.SFTPAttrs(type=asyncssh.FILEXFER_TYPE_REGULAR, size=len(file_obj[1]))

    def setstat(self, path: bytes, attrs: asyncssh.SFTPAttrs) -> None:
        pass  # bootflash keeps no modes or times

    def fsetstat(self, file_obj: object, attrs: asyncssh.SFTPAttrs) -> None:
        pass

    def remove(self, path: bytes) -> None:
        if self.device.bootflash.pop(self._name(path), None) is None:
            raise asyncssh.SFTPNoSuchFile(NO_FILE)

    def realpath(self, path: bytes) -> bytes:
        return b"/" + self._name(path).encode()

    async def scandir(self, path: bytes) -> AsyncIterator[asyncssh.SFTPName]:
        for name in sorted(self.device.bootflash):
            yield asyncssh.SFTPName(name.encode(), attrs=self._attrs(name))


class _SshAuth(asyncssh.SSHServer):
    def __init__(self, server: "NxosServer") -> None:
        self.server = server

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        self.server.ssh_connections.add(conn)
        if self.server.device.reach.down:
            conn.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.ssh_connections.discard(self.conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return self.server.device.check_password(username, password)


def _ssh_output(session: CliSession, line: str, reply: Reply) -> str:
    if not line.strip():  # Enter alone: its echo moved to a new line, where the next prompt goes
        return ""
    text = reply.text
    if reply.error and text == INVALID:  # NX-OS marks the bad word under the echoed line
        text = " " * (len(session.prompt) + len(line) - len(line.lstrip())) + "^\n" + text
    return text + "\n" if text else ""


async def _shell(device: NxosDevice, process: asyncssh.SSHServerProcess[str]) -> None:
    session = device.session(implicit_config=False)
    try:
        if process.command:  # `ssh switch "show version"`: one command, no prompt
            process.stdout.write(_ssh_output(session, process.command, session.run(process.command)))
            return
        process.stdout.write(session.prompt)
        while True:
            try:
                line = await process.stdin.readline()
            except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived):
                continue
            if not line:
                return
            # The CLI echoes a line when it reads it, after it has answered the line before (not as the bytes
            # arrive): a client that typed ahead (netmiko's find_prompt sends a second Enter when the first prompt
            # is slow) sees the stale prompt before the next command's echo, never between the echo and its answer.
            process.stdout.write(line.rstrip("\r\n") + "\n")
            if device.faults.delay_seconds:
                await asyncio.sleep(device.faults.delay_seconds)
            reply = session.run(line)
            process.stdout.write(_ssh_output(session, line, reply) + session.prompt)
    except DroppedError:
        process.channel.get_connection().abort()
    except (SessionEndError, asyncssh.Error, ConnectionError):
        pass
    finally:
        process.exit(0)


class NxosServer:
    """NX-API HTTP and SSH listeners for one NxosDevice, on ephemeral 127.0.0.1 ports."""

    host = "127.0.0.1"

    def __init__(self, device: NxosDevice, tls: LabCertificate | None = None) -> None:
        self.device = device
        self.ssh_connections: set[asyncssh.SSHServerConnection] = set()
        self._http = _NxapiServer((self.host, 0), _nxapi_handler(device))
        if tls is not None:
            # NX-API over HTTPS, with a certificate the client can be told to trust.
            self._http.socket = tls.server_context().wrap_socket(self._http.socket, server_side=True)
        self.http_port: int = self._http.server_address[1]
        # a short poll interval keeps stop() fast; serving happens in handler threads anyway
        self._http_thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), name="nxapi", daemon=True)
        self._http_thread.start()
        self._host_key = asyncssh.generate_private_key("ssh-ed25519")
        # What a client pins in its known_hosts: "ssh-ed25519 AAAA...".
        self.host_key_public: str = self._host_key.export_public_key("openssh").decode().strip()
        self._loop = asyncio.new_event_loop()
        self._ssh_thread = threading.Thread(target=self._loop.run_forever, name="nxos-ssh", daemon=True)
        self._ssh_thread.start()
        self._acceptor = asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)
        self.ssh_port: int = self._acceptor.get_port()

    async def _listen(self) -> asyncssh.SSHAcceptor:
        device = self.device
        return await asyncssh.create_server(
            lambda: _SshAuth(self), self.host, 0, server_host_keys=[self._host_key],
            process_factory=lambda p: _shell(device, p), sftp_factory=lambda chan: _Bootflash(chan, device),
            allow_scp=True, encoding="utf-8", line_editor=False)  # the shell echoes each line itself

    async def _close(self) -> None:
        self._acceptor.close()
        for conn in list(self.ssh_connections):
            conn.abort()
        await self._acceptor.wait_closed()
        await self._loop.shutdown_default_executor()  # asyncssh resolved the bind address in a worker thread

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._http_thread.join(5)
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._ssh_thread.join(5)
        self._loop.close()

    def __enter__(self) -> "NxosServer":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def serve_nxos(device: NxosDevice, tls: LabCertificate | None = None) -> NxosServer:
    """Start NX-API (HTTPS with `tls`) and SSH for `device`; stop with `.stop()` or a `with` block."""
    return NxosServer(device, tls)
