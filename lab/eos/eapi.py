"""eAPI's transport for the lab's EOS emulator (lab/eos/device.py): JSON-RPC `runCmds` over HTTP or HTTPS on
127.0.0.1 with basic authentication, JSON-RPC's own errors for a malformed request, and the faults that act on the
connection (an answer delayed or dropped, a device that does not answer at all).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any

from rocefab.lab.eos.device import Drop, EosDevice
from rocefab.lab.tls import LabCertificate, self_signed


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins the request threads: nothing outlives stop()

    def __init__(self, device: EosDevice, tls: ssl.SSLContext | None) -> None:
        self.device, self.tls, self.stopping = device, tls, threading.Event()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        TCPServer.server_bind(self)  # HTTPServer's version resolves the host name: no lookups here
        self.server_name, self.server_port = "localhost", self.server_address[1]

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.device.reach.down:
            return  # unreachable: the connection closes before a byte is exchanged
        request.settimeout(30)
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        try:
            wrapped = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            super().finish_request(wrapped, client_address)
        finally:
            wrapped.close()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _user(self) -> str | None:
        dev = self.server.device
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return None
        try:
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return user if (user, password) == (dev.username, dev.password) and not dev.faults.wrong_password else None

    def do_HEAD(self) -> None:
        """What clients probe before they send commands (ANTA's reachability check is `HEAD /command-api` and
        wants a 2xx): the endpoint answers as its POST would be authorised, with no body."""
        self.close_connection = True
        status = 404 if self.path != "/command-api" else 401 if self._user() is None else 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    def do_POST(self) -> None:
        self.close_connection = True
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/command-api":
            self._send(404, b"Not Found", "text/plain")
            return
        if (user := self._user()) is None:
            self._send(401, b"Unauthorized", "text/plain")
            return
        try:
            request = json.loads(body)
            rid, params = request.get("id"), request.get("params") or {}
            cmds, fmt = params["cmds"], params.get("format", "json")
            if request.get("method") != "runCmds" or fmt not in ("json", "text") or not isinstance(cmds, list):
                raise ValueError(request.get("method"))
        except (ValueError, KeyError, TypeError, AttributeError):
            self._reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "Invalid params"}})
            return
        if self.server.stopping.wait(self.server.device.faults.delay_seconds):
            return
        try:
            answer = self.server.device.run_cmds(cmds, fmt, user)
        except Drop:
            return  # no answer: the server closes the connection
        except Exception as exc:  # an emulator bug: say so rather than drop the connection
            self._reply({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"Internal error: {exc!r}"}})
            return
        self._reply({"jsonrpc": "2.0", "id": rid, **answer})

    def _reply(self, obj: dict[str, Any]) -> None:
        self._send(200, json.dumps(obj).encode())


@dataclass
class EosServer:
    device: EosDevice
    host: str
    port: int
    _server: _Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self.device.close()

    def __enter__(self) -> EosServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_eos(device: EosDevice, *, tls: bool | LabCertificate = False) -> EosServer:
    """Start the device's eAPI on 127.0.0.1 at an ephemeral port, in a background thread; HTTPS with `tls`
    (a throwaway certificate, or the one given so clients can pin it)."""
    certificate = tls if isinstance(tls, LabCertificate) else self_signed("eos-lab") if tls else None
    server = _Server(device, certificate.server_context() if certificate else None)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
                              name=f"eos-eapi-{device.hostname}")
    thread.start()
    host, port = server.server_address[:2]
    assert isinstance(host, str)
    return EosServer(device, host, port, server, thread)


__all__ = ["EosServer", "serve_eos"]
