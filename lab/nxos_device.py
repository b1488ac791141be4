"""Cisco NX-OS (Nexus 9000) emulator on 127.0.0.1: NX-API (JSON-RPC `POST /ins`) plus SSH (CLI, SCP, SFTP).

NAPALM's `nxos` and `nxos_ssh` drivers and netmiko `cisco_nxos` run against it unpatched: one CLI engine
(`CliSession`) answers both transports, with the vendor's exact output and error strings, because the SSH path
detects errors by string matching. See /work/shared/reference/deploy-toolchain.md §2 for what the clients send.
"""

import asyncio
import base64
import hashlib
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import asyncssh

from rocefab.lab import nxos_counters, nxos_state
from rocefab.lab.faults import Reachability
from rocefab.lab.nxos_config import Cursor, InvalidCommandError, NxosConfig, rollback_patch
from rocefab.lab.nxos_grammar import INVALID
from rocefab.lab.tls import LabCertificate
from rocefab.lab.wiring import BgpSpeaker, Wiring

__all__ = ["CliSession", "Faults", "NxosDevice", "NxosServer", "Reply", "serve_nxos"]

VERSION, BIOS, MODEL = "10.5(1)", "05.51", "N9K-C9364D-GX2A"
CHASSIS = "Nexus9000 C9364D-GX2A Chassis"
BOOTFLASH_BYTES = 53_298_520_064
# A placeholder hash, never a real secret: the emulator checks credentials held outside the config.
FACTORY = """hostname {hostname}
feature nxapi
feature scp-server
username admin password 5 $5$LAB$placeholder.not.a.real.hash role network-admin
interface mgmt0
  vrf member management
"""
ROLLBACK_HEAD = "Note: Applying config parallelly may fail Rollback verification\nCollecting Running-Config\n"
NO_FILE = "No such file or directory"


@dataclass
class Faults:
    """Failures a test switches on at runtime."""

    reject_line: str | None = None  # config lines matching this regex are invalid (also inside rollback files)
    delay_seconds: float = 0.0  # before answering each NX-API request / SSH command
    drop_on: str | None = None  # at a command matching this regex the server closes the connection, unanswered
    password: str | None = None  # when set, the only password the device accepts (a rotated credential)


@dataclass
class Reply:
    text: str = ""  # CLI text: cli_ascii `msg`, SSH output
    body: Any = None  # structured output: NX-API `cli` body, `| json`
    error: bool = False


class DroppedError(Exception):
    """The connection must close now, without an answer (Faults.drop_on)."""


class SessionEndError(Exception):
    """`exit` at the exec prompt: the SSH user logs out."""


def _fname(path: str) -> str:
    """bootflash:/x, bootflash:x and x all name file x."""
    return path.removeprefix("bootflash:").lstrip("/")


class NxosDevice:
    def __init__(self, hostname: str = "switch", username: str = "admin", password: str = "admin",
                 ports: int = 64) -> None:
        self.name = hostname  # its name in the lab's wiring
        self.wiring: Wiring | None = None  # set when the device is part of a lab fabric
        self.running = NxosConfig.parse(FACTORY.format(hostname=hostname))
        self.username, self.password, self.ports = username, password, ports
        self.serial = "FDO" + hashlib.md5(hostname.encode()).hexdigest()[:8].upper()
        self.bootflash: dict[str, str] = {}
        self.checkpoints: dict[str, str] = {}
        self.faults = Faults()
        self.reach = Reachability()
        self.commands: list[str] = []  # every command received, in order: the wire log tests assert on
        self.lock = threading.RLock()
        self.booted = time.monotonic()
        self.startup = self.running_config("show startup-config")

    def check_password(self, username: str, password: str) -> bool:
        expected = self.faults.password if self.faults.password is not None else self.password
        return username == self.username and password == expected

    def running_config(self, command: str = "show running-config") -> str:
        stamp = time.strftime("%a %b %d %H:%M:%S %Y")
        head = f"\n!Command: {command}\n!Time: {stamp}\n\nversion {VERSION} Bios:version {BIOS}\n"
        return head + self.running.render()

    def session(self, implicit_config: bool) -> "CliSession":
        return CliSession(self, implicit_config)

    # -- the lab fabric's questions and the faults a person makes at the CLI (lab/nxos_state.py) -------------------
    def port_enabled(self, port: str) -> bool:
        return nxos_state.port_enabled(self, port)

    def bgp_speaker(self) -> BgpSpeaker | None:
        return nxos_state.bgp_speaker(self)

    def _port(self, port: str) -> str:
        found = re.fullmatch(r"Ethernet1/(\d+)", port)
        if (found is None or not 1 <= int(found.group(1)) <= self.ports) and self.running.section(
                f"interface {port}") is None:
            raise ValueError(f"{self.name} has no interface {port}")
        return port

    def set_mtu(self, port: str, mtu: int) -> str:
        nxos_state.configure(self, f"interface {self._port(port)}", f"mtu {mtu}")
        return f"interface {port} / mtu {mtu}"

    def pfc_off(self, port: str, priority: int) -> str:
        nxos_state.configure(self, f"interface {self._port(port)}", "priority-flow-control mode off")
        return f"interface {port} / priority-flow-control mode off"

    def strict_off(self, priority: int) -> str:
        """The strict queue of the queuing policy leaves priority (NX-OS keeps the CNP class on the top qos-group,
        whatever the fabric's CNP priority is called)."""
        for policy in self.running.root.children:
            if not policy.line.startswith("policy-map type queuing"):
                continue
            for klass in policy.children:
                if any(c.line.startswith("priority level") for c in klass.children):
                    nxos_state.configure(self, policy.line, klass.line, "no priority level 1",
                                         "bandwidth remaining percent 0")
                    return f"{policy.line} / {klass.line} / no priority level 1"
        raise ValueError(f"{self.name} has no strict queue")

    def snapshot(self) -> object:
        with self.lock:
            return self.running.copy()

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, NxosConfig)
        with self.lock:
            self.running = snapshot.copy()
            self.reach.clear()


class CliSession:
    """One CLI context. NX-API (implicit_config) takes config lines without `configure terminal` and keeps the
    mode across its batch; an SSH shell starts at the exec prompt."""

    def __init__(self, device: NxosDevice, implicit_config: bool) -> None:
        self.device, self.implicit = device, implicit_config
        self.cursor: Cursor | None = device.running.cursor() if implicit_config else None
        self._exec: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Reply]]] = [
            (re.compile(p), h) for p, h in (
                (r"(no )?terminal (dont-ask|width \d+|length \d+)", lambda m: Reply()),
                (r"conf(igure)?( t(erminal)?)?", self._configure),
                (r"end", self._end),
                (r"exit", self._exit),
                (r"show running-config( all)?", lambda m: Reply(device.running_config(m.group(0)))),
                (r"show startup-config", lambda m: Reply(device.startup)),
                (r"show version", self._show_version),
                (r"show hostname", lambda m: Reply(device.running.hostname, {"hostname": device.running.hostname})),
                (r"show hosts", lambda m: Reply("DNS lookup enabled\nName servers are 255.255.255.255\n")),
                (r"show interface status", self._show_interface_status),
                (r"show lldp neighbors detail", lambda m: Reply(nxos_state.lldp_detail(device))),
                (r"show ip bgp summary(?: vrf default)?", self._show_bgp),
                (r"show vpc brief", self._show_vpc),
                (r"show interface counters", lambda m: Reply("", nxos_counters.interface_counters(device))),
                (r"show interface counters errors", lambda m: Reply("", nxos_counters.error_counters(device))),
                (r"show interface priority-flow-control", lambda m: Reply("", nxos_counters.pfc(device))),
                (r"show queuing interface", lambda m: Reply("", nxos_counters.queuing(device))),
                (r"show queuing pfc-queue detail", lambda m: Reply("", nxos_counters.pfc_queue(device))),
                (r"show ip route (\S+)", lambda m: Reply(f"{m.group(1)}\n", nxos_state.ip_route(device, m.group(1)))),
                (r"show interface", self._show_interface),
                (r"show inventory", self._show_inventory),
                (r"show file (\S+) md5sum", self._md5),
                (r"show file (\S+)", lambda m: self._file(m.group(1), lambda text: Reply(text))),
                (r"show diff rollback-patch file (\S+) file (\S+)", self._diff),
                (r"checkpoint file (\S+)", self._checkpoint),
                (r"checkpoint (\S+)", self._checkpoint),
                (r"rollback running-config (file|checkpoint) (\S+)( atomic)?", self._rollback),
                (r"copy run(ning-config)? start(up-config)?", self._copy_run_start),
                (r"dir( \S+)?", self._dir),
                (r"delete (\S+)( no-prompt)?", self._delete),
            )
        ]

    @property
    def prompt(self) -> str:
        host = self.device.running.hostname
        return f"{host}({self.cursor.prompt})# " if self.cursor and not self.implicit else f"{host}# "

    def run(self, raw: str) -> Reply:
        cmd = " ".join(raw.split())
        dev = self.device
        with dev.lock:
            if cmd:
                dev.commands.append(cmd)
            if (dev.faults.drop_on and re.search(dev.faults.drop_on, cmd)) or dev.reach.cut_before(cmd):
                raise DroppedError(cmd)
            as_json = cmd.endswith("| json")
            plain = cmd.removesuffix("| json").removesuffix("| no-more").strip()
            reply = self._dispatch(plain)
            if dev.reach.cut_after(cmd):
                raise DroppedError(cmd)
        if as_json and not reply.error:
            return Reply(json.dumps(reply.body), reply.body) if reply.body is not None else Reply(INVALID, error=True)
        return reply

    def _dispatch(self, cmd: str) -> Reply:
        for pattern, handler in self._exec:
            m = pattern.fullmatch(cmd)
            if m:
                return handler(m)
        if self.cursor is None:
            return Reply(INVALID, error=True)
        self.cursor.reject = self.device.faults.reject_line
        try:
            self.cursor.apply(cmd)
        except InvalidCommandError:
            return Reply(INVALID, error=True)
        return Reply()

    # -- modes
    def _configure(self, m: re.Match[str]) -> Reply:
        self.cursor = self.device.running.cursor()
        return Reply()

    def _end(self, m: re.Match[str]) -> Reply:
        if self.cursor:
            self.cursor.reset()
        if not self.implicit:
            self.cursor = None
        return Reply()

    def _exit(self, m: re.Match[str]) -> Reply:
        if self.cursor and (self.cursor.exit() or self.implicit):
            return Reply()
        if self.cursor:
            self.cursor = None
            return Reply()
        raise SessionEndError

    # -- files, checkpoints and rollback
    def _file(self, path: str, then: Callable[[str], Reply]) -> Reply:
        text = self.device.bootflash.get(_fname(path))
        return Reply(NO_FILE, error=True) if text is None else then(text)

    def _md5(self, m: re.Match[str]) -> Reply:
        return self._file(m.group(1), lambda t: Reply(hashlib.md5(t.encode("utf-8", "surrogateescape")).hexdigest()))

    def _checkpoint(self, m: re.Match[str]) -> Reply:
        text = self.device.running_config("Checkpoint cmd vdc 1")
        if m.group(0).startswith("checkpoint file "):
            self.device.bootflash[_fname(m.group(1))] = text
        else:
            self.device.checkpoints[m.group(1)] = text
        return Reply("Done")

    def _load(self, text: str) -> NxosConfig | str:
        """A saved config, or NX-OS's complaint about its first bad line."""
        try:
            return NxosConfig.parse(text, self.device.faults.reject_line)
        except InvalidCommandError as exc:
            return f"Syntax error while parsing '{exc.line}'\n\nCannot create rollback patch\n"

    def _diff(self, m: re.Match[str]) -> Reply:
        texts = [self.device.bootflash.get(_fname(p)) for p in m.groups()]
        if texts[0] is None or texts[1] is None:
            return Reply(NO_FILE, error=True)
        old, new = self._load(texts[0]), self._load(texts[1])
        head = "Collecting Running-Config\n#Generating Rollback Patch\n"
        for loaded in (old, new):
            if isinstance(loaded, str):
                return Reply(head + loaded)
        assert isinstance(old, NxosConfig) and isinstance(new, NxosConfig)
        patch = rollback_patch(old, new)
        return Reply(head + ("!!\n" + "\n".join(patch) + "\n" if patch else "Rollback Patch is Empty\n"))

    def _rollback(self, m: re.Match[str]) -> Reply:
        store = self.device.bootflash if m.group(1) == "file" else self.device.checkpoints
        text = store.get(_fname(m.group(2)))
        if text is None:
            return Reply(NO_FILE, error=True)
        target = self._load(text)
        if isinstance(target, str):  # atomic: nothing applied
            return Reply(ROLLBACK_HEAD + "#Generating Rollback Patch\n" + target + "Rollback failed.\n", error=True)
        self.device.running.root = target.root  # sessions' cursors notice the new root
        return Reply(ROLLBACK_HEAD + "#Generating Rollback Patch\nExecuting Rollback Patch\n"
                     "Generating Running-config for verification\n#Generating Patch for verification\n"
                     "Rollback completed successfully.\n")

    def _copy_run_start(self, m: re.Match[str]) -> Reply:
        self.device.startup = self.device.running_config("show startup-config")
        return Reply("[########################################] 100%\n"
                     "Copy complete, now saving to disk (please wait)...\nCopy complete.\n")

    def _dir(self, m: re.Match[str]) -> Reply:
        want = _fname((m.group(1) or "").strip())
        files = self.device.bootflash
        if want and want not in files:
            return Reply(NO_FILE, error=True)
        stamp = time.strftime("%b %d %H:%M:%S %Y")
        rows = [f"{len(files[n].encode('utf-8', 'surrogateescape')):>11}    {stamp}  {n}"
                for n in sorted(files) if not want or n == want]
        used = sum(len(t) for t in files.values())
        return Reply("\n".join(rows) + f"\n\nUsage for bootflash://sup-local\n {used} bytes used\n"
                     f" {BOOTFLASH_BYTES - used} bytes free\n {BOOTFLASH_BYTES} bytes total\n")

    def _delete(self, m: re.Match[str]) -> Reply:
        if self.device.bootflash.pop(_fname(m.group(1)), None) is None:
            return Reply(NO_FILE, error=True)
        return Reply()

    # -- show commands: the TABLE_/ROW_ bodies napalm reads, and the text nxos_ssh parses
    def _show_version(self, m: re.Match[str]) -> Reply:
        up = int(time.monotonic() - self.device.booted)
        d, h, mi, s = up // 86400, up // 3600 % 24, up // 60 % 60, up % 60
        host = self.device.running.hostname
        body = {"host_name": host, "chassis_id": CHASSIS, "nxos_ver_str": VERSION, "kickstart_ver_str": VERSION,
                "bios_ver_str": BIOS, "proc_board_id": self.device.serial, "manufacturer": "Cisco Systems, Inc.",
                "kern_uptm_days": d, "kern_uptm_hrs": h, "kern_uptm_mins": mi, "kern_uptm_secs": s}
        text = (f"Cisco Nexus Operating System (NX-OS) Software\nSoftware\n  BIOS: version {BIOS}\n"
                f"  NXOS: version {VERSION}\n\nHardware\n  cisco {CHASSIS}\n  Processor Board ID {self.device.serial}"
                f"\n\n  Device name: {host}\n\n"
                f"Kernel uptime is {d} day(s), {h} hour(s), {mi} minute(s), {s} second(s)\n")
        return Reply(text, body)

    def _show_inventory(self, m: re.Match[str]) -> Reply:
        row = {"name": "Chassis", "desc": CHASSIS, "productid": MODEL, "vendorid": "V01",
               "serialnum": self.device.serial}
        text = f'NAME: "Chassis",  DESCR: "{CHASSIS}"\nPID: {MODEL}  ,  VID: V01  ,  SN: {self.device.serial}\n'
        return Reply(text, {"TABLE_inv": {"ROW_inv": [row]}})

    def _interfaces(self) -> list[dict[str, Any]]:
        """Physical ports and mgmt0 always exist; logical interfaces exist while configured."""
        return nxos_state.interface_rows(self.device)

    def _show_bgp(self, m: re.Match[str]) -> Reply:
        body = nxos_state.bgp_summary(self.device)
        rows = body.get("TABLE_vrf", {}).get("ROW_vrf", {}).get("TABLE_af", {}).get("ROW_af", {}).get(
            "TABLE_saf", {}).get("ROW_saf", {}).get("TABLE_neighbor", {}).get("ROW_neighbor", [])
        return Reply("".join(f"{r['neighborid']} 4 {r['neighboras']} {r['state']}\n" for r in rows), body)

    def _show_vpc(self, m: re.Match[str]) -> Reply:
        wiring = self.device.wiring
        peers = {n: d for n, d in wiring.devices.items() if isinstance(d, NxosDevice)} if wiring else {}
        body = nxos_state.vpc_brief(self.device, peers)
        return Reply("".join(f"{k}: {v}\n" for k, v in body.items()), body)

    def _show_interface(self, m: re.Match[str]) -> Reply:
        rows = self._interfaces()
        text = "".join(f"{r['interface']} is {r['state']}\n"
                       f"  admin state is {r.get('admin_state', r.get('svi_admin_state'))}\n"
                       f"  Description: {r['desc']}\n  MTU {r.get('eth_mtu', r.get('svi_mtu'))} bytes\n"
                       for r in rows)
        return Reply(text, {"TABLE_interface": {"ROW_interface": rows}})

    def _show_interface_status(self, m: re.Match[str]) -> Reply:
        short = (("Ethernet", "Eth"), ("port-channel", "Po"), ("loopback", "Lo"))
        lines = ["-" * 80, "Port          Name               Status    Vlan      Duplex  Speed   Type", "-" * 80]
        for r in self._interfaces():
            name = r["interface"]
            for long, abbr in short:
                name = name.replace(long, abbr)
            state = "connected" if r["state"] == "up" else "disabled"
            lines.append(f"{name:<13} {r['desc'][:18] or '--':<18} {state:<9} routed    full    auto    --")
        return Reply("\n".join(lines) + "\n")


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
class _Bootflash(asyncssh.SFTPServer):
    """SFTP/SCP server whose only directory is the device's bootflash dict (`bootflash:/x` -> file x)."""

    def __init__(self, chan: asyncssh.SSHServerChannel[bytes], device: NxosDevice) -> None:
        super().__init__(chan)
        self.device = device

    def _name(self, path: bytes) -> str:
        return _fname(path.decode("utf-8", "surrogateescape"))

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
        self._http = ThreadingHTTPServer((self.host, 0), _nxapi_handler(device))
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
            allow_scp=True, encoding="utf-8")

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
