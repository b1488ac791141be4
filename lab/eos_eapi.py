"""An Arista EOS switch on 127.0.0.1 that speaks eAPI (JSON-RPC `runCmds` over HTTP or HTTPS), stateful enough for
NAPALM's `eos` driver to load, diff, commit (also with a commit timer), confirm, discard and roll back, unpatched.

It models exactly the requests NAPALM sends (see deploy-toolchain.md §1): config sessions and their states,
`flash:` files, startup-config, the error envelope, and faults a test can switch on while the device runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any

from rocefab.lab import eos_state
from rocefab.lab.configtree import ConfigError, ConfigTree, Cursor, unified_diff
from rocefab.lab.eos_grammar import EOS_GRAMMAR, error_text
from rocefab.lab.faults import Reachability
from rocefab.lab.tls import LabCertificate, self_signed
from rocefab.lab.wiring import BgpSpeaker, Wiring

# A placeholder in the shape of a sha512-crypt hash; it hashes no password.
PLACEHOLDER_SECRET = "$6$rocefablab$placeholder.not.a.real.hash"
FACTORY_CONFIG = """hostname {name}
username admin privilege 15 role network-admin secret sha512 {secret}
management api http-commands
   no shutdown
interface Management1
"""
MAX_OPEN_SESSIONS = 5
MAX_SAVED_SESSIONS = 1
COPY_OK = "Copy completed successfully.\n"


@dataclass
class Faults:
    """Misbehaviour a test switches on or off while the device runs."""

    reject_line: str | None = None  # regex: config lines matching it are rejected as invalid input
    delay_seconds: float = 0.0  # every answer comes this much later
    drop_on: str | None = None  # regex: the connection closes without an answer at the first matching command
    drop_after: bool = False  # with drop_on: run that command first (the change is made, the answer is lost)
    stale_session: bool = False  # a pending session `napalm_stale` exists, as left behind by a crashed run


@dataclass
class Session:
    name: str
    config: ConfigTree
    user: str
    state: str = "pending"  # pending | pendingCommitTimer | completed | aborted
    completed_at: float | None = None
    commit_by: float | None = None  # device uptime (s) at which a commit timer rolls back
    before: ConfigTree | None = None  # running-config before a timer commit, restored on abort or expiry
    timer: threading.Timer | None = None


class CliError(Exception):
    """A failed command: eAPI code, the kind in the message (`invalid command`...), the `errors` list."""

    def __init__(self, code: int, kind: str, *errors: str) -> None:
        super().__init__(errors[0] if errors else kind)
        self.code, self.kind, self.errors = code, kind, list(errors)


def _failed(*errors: str) -> CliError:
    return CliError(1000, "could not run command", *errors)


class _Drop(Exception):
    """Close the connection without an answer."""


class EosDevice:
    def __init__(self, name: str = "leaf1", *, model: str = "DCS-7060X6-64PE", version: str = "4.34.1F",
                 username: str = "admin", password: str = "admin") -> None:
        self.name = name
        self.model, self.version, self.username, self.password = model, version, username, password
        self.wiring: Wiring | None = None  # set when the device is part of a lab fabric
        self.faults = Faults()
        self.reach = Reachability()
        self.running = ConfigTree.parse(EOS_GRAMMAR, FACTORY_CONFIG.format(name=name, secret=PLACEHOLDER_SECRET))
        self.startup = self.running.text()
        self.flash: dict[str, str] = {}
        self.sessions: dict[str, Session] = {}
        self.lldp_neighbors: list[dict[str, Any]] = []
        self.log: deque[tuple[str, list[str]]] = deque(maxlen=1000)  # (format, commands) per request
        self.lock = threading.RLock()
        digest = hashlib.sha256(name.encode()).hexdigest()
        self.serial, self.mac = f"JPE{digest[:8].upper()}", "00:1c:73:" + ":".join(digest[i:i + 2] for i in (8, 10, 12))
        self._boot_mono, self._boot_epoch = time.monotonic(), time.time()
        self._stale_planted = False  # the stale-session fault has left its session behind

    # -- the lab fabric's questions and the faults a person makes at the CLI (lab/eos_state.py) -----------------------
    def port_enabled(self, port: str) -> bool:
        return eos_state.port_enabled(self, port)

    def bgp_speaker(self) -> BgpSpeaker | None:
        return eos_state.bgp_speaker(self)

    def set_mtu(self, port: str, mtu: int) -> str:
        eos_state.set_mtu(self, port, mtu)
        return f"interface {port} / mtu {mtu}"

    def pfc_off(self, port: str, priority: int) -> str:
        eos_state.pfc_off(self, port)
        return f"interface {port} / no service-profile (the port loses PFC and DSCP trust)"

    def strict_off(self, priority: int) -> str:
        return eos_state.strict_off(self, priority)

    def snapshot(self) -> object:
        with self.lock:
            return self.running.copy()

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, ConfigTree)
        with self.lock:
            self.running = snapshot.copy()
            self.reach.clear()

    @property
    def hostname(self) -> str:
        node = self.running.root.child("hostname", block=False)
        return node.line.split()[1] if node else "localhost"

    def uptime(self) -> float:
        return time.monotonic() - self._boot_mono

    def new_shape(self) -> bool:
        """EOS >= 4.32 reports a commit timer at the top of `show configuration sessions`."""
        major, minor = (int(x) for x in re.findall(r"\d+", self.version)[:2])
        return (major, minor) >= (4, 32)

    def running_text(self, *, header: bool = True) -> str:
        head = f"! Command: show running-config\n! device: {self.hostname} ({self.model}, EOS-{self.version})\n!\n"
        return (head if header else "") + self.running.text()

    # --- sessions -------------------------------------------------------------------------------------------
    def commit(self, session: Session, timer_s: int | None = None) -> None:
        if session.state == "pendingCommitTimer" and timer_s is None:  # the confirming commit
            self._cancel(session)
        elif session.state != "pending":
            raise _failed(f"% Cannot commit session {session.name} (state {session.state})")
        elif timer_s is None:
            self.running = session.config.copy()
        else:
            if any(s.state == "pendingCommitTimer" for s in self.sessions.values()):
                raise _failed("% Another session has a commit timer pending")
            session.before, self.running = self.running, session.config.copy()
            session.state, session.commit_by = "pendingCommitTimer", self.uptime() + timer_s
            session.timer = threading.Timer(timer_s, self._expire, (session.name,))
            session.timer.daemon = True
            session.timer.start()
            return
        self._finish(session, "completed")

    def abort(self, session: Session) -> None:
        if session.state == "completed":
            raise _failed(f"% Cannot abort session {session.name} (already completed)")
        if session.state == "pendingCommitTimer" and session.before is not None:
            self.running = session.before
        self._cancel(session)
        del self.sessions[session.name]

    def expire_commit_timer_now(self) -> None:
        with self.lock:
            for s in list(self.sessions.values()):
                if s.state == "pendingCommitTimer":
                    self._expire(s.name)

    def _expire(self, name: str) -> None:
        with self.lock:
            session = self.sessions.get(name)
            if session is None or session.state != "pendingCommitTimer":
                return
            self._cancel(session)
            if session.before is not None:
                self.running = session.before
            self._finish(session, "aborted")

    def _finish(self, session: Session, state: str) -> None:
        session.state, session.completed_at = state, time.time()
        done = [s for s in self.sessions.values() if s.completed_at is not None]
        for old in sorted(done, key=lambda s: s.completed_at or 0)[:-MAX_SAVED_SESSIONS]:
            del self.sessions[old.name]

    @staticmethod
    def _cancel(session: Session) -> None:
        if session.timer is not None:
            session.timer.cancel()
            session.timer = None

    def _housekeeping(self) -> None:
        """Lazy side of the commit timer (in case no Timer thread runs) and the stale-session fault."""
        for s in list(self.sessions.values()):
            if s.state == "pendingCommitTimer" and s.commit_by is not None and s.commit_by <= self.uptime():
                self._expire(s.name)
        # The fault leaves one pending session behind, once: a client that aborts it has really cleared it.
        stale = self.sessions.get("napalm_stale")
        if self.faults.stale_session and not self._stale_planted:
            self.sessions["napalm_stale"] = Session("napalm_stale", self.running.copy(), "admin")
            self._stale_planted = True
        elif not self.faults.stale_session:
            self._stale_planted = False
            if stale is not None and stale.state == "pending":
                del self.sessions["napalm_stale"]

    def close(self) -> None:
        with self.lock:
            for s in self.sessions.values():
                self._cancel(s)

    # --- requests -------------------------------------------------------------------------------------------
    def run_cmds(self, cmds: list[Any], fmt: str, user: str) -> dict[str, Any]:
        """Run one runCmds request; the JSON-RPC `result` list, or an `error` object."""
        names = [c["cmd"] if isinstance(c, dict) else str(c) for c in cmds]
        with self.lock:
            self.log.append((fmt, names))
            self._housekeeping()
            batch = _Batch(self, fmt, user)
            results: list[Any] = []
            for i, (cmd, name) in enumerate(zip(cmds, names, strict=True)):
                drop = bool(self.faults.drop_on and re.search(self.faults.drop_on, name))
                if (drop and not self.faults.drop_after) or self.reach.cut_before(name):
                    raise _Drop
                try:
                    results.append(batch.run(name, cmd.get("input") if isinstance(cmd, dict) else None))
                except CliError as exc:
                    return {"error": {"code": exc.code,
                                      "message": f"CLI command {i + 1} of {len(cmds)} '{name}' failed: {exc.kind}",
                                      "data": [*results, {"errors": exc.errors}]}}
                if drop or self.reach.cut_after(name):
                    raise _Drop
            return {"result": results}


Handler = Callable[["_Batch", re.Match[str], str | None], tuple[dict[str, Any] | None, str]]


class _Batch:
    """One request's CLI context: every eAPI request starts in exec mode."""

    def __init__(self, device: EosDevice, fmt: str, user: str) -> None:
        self.dev, self.fmt, self.user = device, fmt, user
        self.cursor: Cursor | None = None  # set while in config mode
        self.session: Session | None = None  # the session being edited, None for `configure terminal`

    def run(self, cmd: str, data: str | None) -> Any:
        cmd = " ".join(cmd.split())
        out = self._config_mode(cmd, data) if self.cursor is not None else None
        if out is None:
            out = self._exec(cmd, data)
        as_json, as_text = out
        if self.fmt == "text":
            return {"output": as_text}
        if as_json is None:
            raise CliError(1003, "unconverted command", "This is an unconverted command")
        return as_json

    def _config_mode(self, cmd: str, data: str | None) -> tuple[dict[str, Any] | None, str] | None:
        assert self.cursor is not None
        if cmd == "exit" and self.cursor.exit():
            pass  # back to the parent mode
        elif cmd in ("end", "exit"):  # `exit` at the global level leaves config mode like `end`
            self.cursor = self.session = None
        elif cmd in ("abort", "commit") and self.session is not None:
            (self.dev.abort if cmd == "abort" else self.dev.commit)(self.session)
            self.cursor = self.session = None
        elif cmd == "rollback clean-config" and self.session is not None:
            self.session.config = ConfigTree(EOS_GRAMMAR)
            self.cursor = self.session.config.cursor()
        elif cmd == "comment":
            self.cursor.comment(data or "")
        elif cmd.split(" ", 1)[0] in ("show", "configure", "copy", "write"):
            return None  # exec commands work in config mode too
        elif self.dev.faults.reject_line and re.search(self.dev.faults.reject_line, cmd):
            raise CliError(1002, "invalid command", f"Invalid input (at token 0: '{cmd.split()[0]}')")
        else:
            try:
                self.cursor.apply(cmd, data)
            except ConfigError as exc:
                raise CliError(1002, "invalid command", error_text(exc)) from exc
        return {}, ""

    def _exec(self, cmd: str, data: str | None) -> tuple[dict[str, Any] | None, str]:
        for pattern, handler in EXEC:
            if m := pattern.fullmatch(cmd):
                return handler(self, m, data)
        tokens = cmd.split() or [""]
        at = 1 if tokens[0] in ("show", "configure", "copy", "write", "enable") and len(tokens) > 1 else 0
        raise CliError(1002, "invalid command", f"Invalid input (at token {at}: '{tokens[at]}')")

    def named_session(self, name: str) -> Session:
        if (session := self.dev.sessions.get(name)) is None:
            raise _failed(f"% Session {name} does not exist")
        return session


# --- exec commands ------------------------------------------------------------------------------------------
def _enable(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    return {}, ""


def _show_version(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    dev, uptime = b.dev, b.dev.uptime()
    build = dev.version.replace(".", "")
    out = {"mfgName": "Arista", "modelName": dev.model, "hardwareRevision": "11.00", "serialNumber": dev.serial,
           "systemMacAddress": dev.mac, "hwMacAddress": dev.mac, "configMacAddress": "00:00:00:00:00:00",
           "version": dev.version, "architecture": "x86_64", "internalVersion": f"{dev.version}-40000000.{build}",
           "internalBuildId": "00000000-0000-0000-0000-000000000000", "imageFormatVersion": "3.0",
           "imageOptimization": "Default", "bootupTimestamp": dev._boot_epoch, "uptime": uptime,
           "memTotal": 32_000_000, "memFree": 24_000_000, "isIntlVersion": False}
    return out, (f"Arista {dev.model}\nSerial number: {dev.serial}\nSystem MAC address: {dev.mac}\n\n"
                 f"Software image version: {dev.version}\nUptime: {int(uptime)} seconds\n")


def _show_hostname(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    name = b.dev.hostname
    return {"hostname": name, "fqdn": name}, f"Hostname: {name}\nFQDN:     {name}\n"


def _show_interfaces(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    interfaces = eos_state.interfaces(b.dev)
    if m.group(1):
        if m.group(1) not in interfaces:
            raise _failed(f"Interface does not exist: {m.group(1)}")
        interfaces = {m.group(1): interfaces[m.group(1)]}
    text = "".join(f"{n} is {i['lineProtocolStatus']}\n  Description: {i['description']}\n  MTU {i['mtu']} bytes\n"
                   for n, i in interfaces.items())
    return {"interfaces": interfaces}, text


def _show_lldp(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    rows = eos_state.lldp_neighbors(b.dev)
    return {"lldpNeighbors": rows}, "".join(f"{r['port']} {r['neighborDevice']} {r['neighborPort']}\n" for r in rows)


def _show_bgp_summary(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    summary = eos_state.bgp_summary(b.dev)
    rows = [f"{key} {p['asn']} {p['peerState']}\n"
            for vrf in summary["vrfs"].values() for key, p in vrf["peers"].items()]
    return summary, "".join(rows)


def _show_mlag(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    peers = {n: d for n, d in b.dev.wiring.devices.items() if isinstance(d, EosDevice)} if b.dev.wiring else {}
    state = eos_state.mlag(b.dev, peers)
    return state, "".join(f"{k}: {v}\n" for k, v in state.items())


def _show_sessions(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    dev = b.dev
    out: dict[str, Any] = {"sessions": {}, "maxSavedSessions": MAX_SAVED_SESSIONS, "maxOpenSessions": MAX_OPEN_SESSIONS}
    for s in dev.sessions.values():
        info: dict[str, Any] = {"state": s.state, "commitUser": s.user, "description": "", "instances": {}}
        if s.completed_at is not None:
            info["completedTime"] = s.completed_at
        if s.state == "pendingCommitTimer":
            if dev.new_shape():
                out["commitTimerSessionName"], out["commitTimerExpireTime"] = s.name, s.commit_by
            else:
                info["commitBy"] = s.commit_by
        out["sessions"][s.name] = info
    text = "".join(f"{n:<24}{i['state']}\n" for n, i in out["sessions"].items())
    return out, text


def _show_session_config(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    if m.group(1):
        session = b.named_session(m.group(1))
    elif b.session is not None:
        session = b.session
    else:
        raise _failed("% Not in a configuration session")
    if m.group(2):
        return None, unified_diff(b.dev.running, session.config, "system:/running-config",
                                  f"session:/{session.name}-session-config")
    return None, session.config.text()


def _sanitize(text: str) -> str:
    return re.sub(r"(secret (?:sha512 |5 |0 )?)\S+", r"\1<removed>", text)


def _show_config(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    startup, options, pipe_json = m.group(1) == "startup", m.group(2).split(), bool(m.group(3))
    text = b.dev.startup if startup else b.dev.running_text()
    if "sanitized" in options:
        text = _sanitize(text)
    if not pipe_json and b.fmt == "text":
        return None, text
    as_json = {"header": [f"! device: {b.dev.hostname} ({b.dev.model}, EOS-{b.dev.version})"],
               **ConfigTree.parse(EOS_GRAMMAR, text).to_json()}
    return as_json, json.dumps(as_json, indent=2)


def _configure_session(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    name, action, hh, mm, ss = m.groups()
    dev = b.dev
    if action is None:
        session = dev.sessions.get(name)
        if session is None:
            if sum(s.state == "pending" for s in dev.sessions.values()) >= MAX_OPEN_SESSIONS:
                raise _failed("% Maximum number of pending sessions has been reached")
            session = dev.sessions[name] = Session(name, dev.running.copy(), b.user)
        elif session.state != "pending":
            raise _failed(f"% Cannot enter session {name} (state {session.state})")
        b.session, b.cursor = session, session.config.cursor()
        return {}, ""
    session = b.named_session(name)
    if action == "abort" and hh is not None:
        raise CliError(1002, "invalid command", "Invalid input (at token 4: 'timer')")
    if action == "abort":
        dev.abort(session)
    elif hh is None:
        dev.commit(session)
    else:
        seconds = int(hh) * 3600 + int(mm) * 60 + int(ss)
        if seconds == 0 or int(mm) > 59 or int(ss) > 59 or int(hh) > 23:
            raise CliError(1002, "invalid command", f"Invalid input (at token 5: '{hh}:{mm}:{ss}')")
        dev.commit(session, seconds)
    if b.session is session:
        b.session = b.cursor = None
    return {}, ""


def _configure(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    b.session, b.cursor = None, b.dev.running.cursor()
    return {}, ""


def _read_file(dev: EosDevice, url: str) -> str:
    if url in ("startup-config", "flash:startup-config"):
        return dev.startup
    if url == "running-config":
        return dev.running_text()
    if url.startswith("flash:") and url[6:] in dev.flash:
        return dev.flash[url[6:]]
    raise _failed(f"% Error opening {url} (No such file or directory)")


def _copy(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    source, target = m.groups()
    text = _read_file(b.dev, source)
    if target in ("startup-config", "flash:startup-config"):
        b.dev.startup = text
    elif target.startswith("flash:") and len(target) > 6:
        b.dev.flash[target[6:]] = text
    else:
        raise _failed(f"% Cannot copy to {target}")
    return {"messages": [COPY_OK.strip()]}, COPY_OK


def _write(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    b.dev.startup = b.dev.running_text()
    return {"messages": [COPY_OK.strip()]}, COPY_OK


def _configure_replace(b: _Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    try:
        b.dev.running = ConfigTree.parse(EOS_GRAMMAR, _read_file(b.dev, m.group(1)))
    except ConfigError as exc:
        raise _failed(f"% Configuration replace failed: {exc}") from exc
    return {}, ""


EXEC: tuple[tuple[re.Pattern[str], Handler], ...] = tuple((re.compile(p), h) for p, h in (
    (r"enable", _enable),
    (r"show version", _show_version),
    (r"show hostname", _show_hostname),
    (r"show interfaces(?: (\S+))?", _show_interfaces),
    (r"show lldp neighbors", _show_lldp),
    (r"show ip bgp summary(?: vrf (?:all|default))?", _show_bgp_summary),
    (r"show mlag", _show_mlag),
    (r"show ip route (\S+)", lambda b, m, d: (eos_state.ip_route(b.dev, m.group(1)), "")),
    (r"show priority-flow-control counters detail", lambda b, m, d: (eos_state.pfc_detail(b.dev), "")),
    (r"show priority-flow-control counters watchdog", lambda b, m, d: (eos_state.pfc_watchdog(b.dev), "")),
    (r"show priority-flow-control counters", lambda b, m, d: (eos_state.pfc_counters(b.dev), "")),
    (r"show interfaces counters queue detail", lambda b, m, d: (eos_state.queue_counters(b.dev), "")),
    (r"show configuration sessions(?: detail)?", _show_sessions),
    (r"show session-config(?: named (\S+))?( diffs)?", _show_session_config),
    (r"show (running|startup)-config((?: all| sanitized)*)( \| json)?", _show_config),
    (r"configure session (\S+)(?: (abort|commit)(?: timer (\d\d):(\d\d):(\d\d))?)?", _configure_session),
    (r"configure(?: terminal)?", _configure),
    (r"configure replace (\S+)(?: force)?", _configure_replace),
    (r"copy (\S+) (\S+)", _copy),
    (r"write(?: memory)?", _write),
))


# --- HTTP(S) server -----------------------------------------------------------------------------------------
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
        return user if (user, password) == (dev.username, dev.password) else None

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
        except _Drop:
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


__all__ = ["EosDevice", "EosServer", "Faults", "Session", "serve_eos"]
