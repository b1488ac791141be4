"""The CLI engine of the lab's NX-OS emulator (lab/nxos/device.py), shared by NX-API and SSH (lab/nxos/server.py):
one `CliSession` per NX-API request or SSH shell answers exec, config-mode, file, checkpoint, rollback and show
commands with NX-OS's exact output and error strings, because the SSH clients detect errors by matching them.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rocefab.lab.nxos import counters as nxos_counters
from rocefab.lab.nxos import state as nxos_state
from rocefab.lab.nxos.config import Cursor, InvalidCommandError, NxosConfig, rollback_patch
from rocefab.lab.nxos.grammar import INVALID

if TYPE_CHECKING:
    from rocefab.lab.nxos.device import NxosDevice

__all__ = ["BIOS", "CHASSIS", "MODEL", "NO_FILE", "VERSION", "CliSession", "DroppedError", "Reply", "SessionEndError",
           "fname"]

# What `show version`, `show inventory` and `dir` report, and the texts of a rollback and of a missing file.
VERSION, BIOS, MODEL = "10.5(1)", "05.51", "N9K-C9364D-GX2A"
CHASSIS = "Nexus9000 C9364D-GX2A Chassis"
BOOTFLASH_BYTES = 53_298_520_064
ROLLBACK_HEAD = "Note: Applying config parallelly may fail Rollback verification\nCollecting Running-Config\n"
NO_FILE = "No such file or directory"
# GIR's commands (configuration mode). Their output, and `show system mode`'s, follow the configuration guide's
# description; no verbatim capture was found, and rocefab reads only `show system mode` (its reader says which form)
_SYSTEM_MODE = re.compile(r"(no )?system mode maintenance")


@dataclass
class Reply:
    text: str = ""  # CLI text: cli_ascii `msg`, SSH output
    body: Any = None  # structured output: NX-API `cli` body, `| json`
    error: bool = False


class DroppedError(Exception):
    """The connection must close now, without an answer (Faults.drop_on)."""


class SessionEndError(Exception):
    """`exit` at the exec prompt: the SSH user logs out."""


def fname(path: str) -> str:
    """bootflash:/x, bootflash:x and x all name file x."""
    return path.removeprefix("bootflash:").lstrip("/")


class CliSession:
    """One CLI context. NX-API (implicit_config) takes config lines without `configure terminal` and keeps the
    mode across its batch; an SSH shell starts at the exec prompt."""

    def __init__(self, device: NxosDevice, implicit_config: bool) -> None:
        self.device, self.implicit = device, implicit_config
        self.dont_ask = False  # `terminal dont-ask`: questions take their default answer unasked
        self._question: Callable[[str], Reply] | None = None  # what the next line answers
        self.cursor: Cursor | None = device.running.cursor() if implicit_config else None
        self._exec: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Reply]]] = [
            (re.compile(p), h) for p, h in (
                (r"(no )?terminal dont-ask", self._dont_ask),
                (r"(no )?terminal (width \d+|length \d+)", lambda m: Reply()),
                (r"conf(igure)?( t(erminal)?)?", self._configure),
                (r"end", self._end),
                (r"exit", self._exit),
                (r"show running-config( all)?", lambda m: Reply(device.running_config(m.group(0)))),
                (r"show startup-config", lambda m: Reply(device.startup)),
                (r"show version", self._show_version),
                (r"show system mode", self._show_system_mode),
                (r"show hostname", lambda m: Reply(device.running.hostname, {"hostname": device.running.hostname})),
                (r"show hosts", lambda m: Reply("DNS lookup enabled\nName servers are 255.255.255.255\n")),
                (r"show interface status", self._show_interface_status),
                (r"show lldp neighbors detail", lambda m: Reply(*nxos_state.lldp_detail(device))),
                (r"show ip bgp summary(?: vrf default)?|show bgp all summary vrf all", self._show_bgp),
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
                (r"mkdir (\S+)", self._mkdir),
                (r"rmdir (\S+)", self._rmdir),
            )
        ]

    @property
    def prompt(self) -> str:
        if self._question is not None:  # the question ends the output; the answer comes on its line
            return ""
        host = self.device.running.hostname
        if self.device.system_mode == nxos_state.MAINTENANCE:
            host += "(maint-mode)"
        return f"{host}({self.cursor.prompt})# " if self.cursor and not self.implicit else f"{host}# "

    def run(self, raw: str) -> Reply:
        cmd = " ".join(raw.split())
        dev = self.device
        with dev.lock:
            if cmd:
                dev.commands.append(cmd)
            if (dev.faults.drop_on and re.search(dev.faults.drop_on, cmd)) or dev.reach.cut_before(cmd):
                raise DroppedError(cmd)
            if self._question is not None:
                answer, self._question = self._question, None
                return answer(cmd)
            as_json = cmd.endswith("| json")
            plain = cmd.removesuffix("| json").removesuffix("| no-more").strip()
            reply = self._dispatch(plain)
            if dev.reach.cut_after(cmd):
                raise DroppedError(cmd)
        if as_json and not reply.error:
            return Reply(json.dumps(reply.body), reply.body) if reply.body is not None else Reply(INVALID, error=True)
        return reply

    def _dispatch(self, cmd: str) -> Reply:
        if not cmd:  # an empty line (a client looking for the prompt) gets a new prompt, in any mode, as on NX-OS
            return Reply()
        for pattern, handler in self._exec:
            m = pattern.fullmatch(cmd)
            if m:
                return handler(m)
        if self.cursor is None:
            return Reply(INVALID, error=True)
        gir = _SYSTEM_MODE.fullmatch(cmd)
        if gir is not None:
            return self._system_mode(entering=gir.group(1) is None)
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

    def _dont_ask(self, m: re.Match[str]) -> Reply:
        self.dont_ask = m.group(1) is None
        return Reply()

    # -- graceful insertion and removal: the mode and the generated profile's isolation of BGP (lab/nxos/state.py)
    def _system_mode(self, entering: bool) -> Reply:
        dev = self.device
        target = nxos_state.MAINTENANCE if entering else nxos_state.NORMAL
        router = next((n.line for n in dev.running.root.children if n.line.startswith("router bgp ")), None)
        steps = [router, "  isolate" if entering else "  no isolate"] if router else []
        preview = "Following configuration will be applied:\n\n" + "".join(f"{s}\n" for s in steps)

        def apply() -> Reply:
            dev.system_mode = target
            applied = "".join(f"Applying : {s}\n" for s in steps)
            word = "Maintenance" if entering else "Normal"
            return Reply(f"{preview}\nStarting to apply commands...\n\n{applied}\n{word} mode operation successful.\n")

        if dev.system_mode == target:
            return Reply()
        if self.dont_ask:
            return apply()
        if self.implicit:  # NX-API cannot be asked: the default answer, no
            return Reply(preview + "\nDo you want to continue (yes/no)? [no] \n")

        def answered(line: str) -> Reply:
            return apply() if line.strip().lower() in ("y", "yes") else Reply()

        self._question = answered
        return Reply(preview + "\nDo you want to continue (yes/no)? [no] ")

    def _show_system_mode(self, m: re.Match[str]) -> Reply:
        return Reply(f"System Mode: {self.device.system_mode}\n")

    # -- files, checkpoints and rollback
    def _file(self, path: str, then: Callable[[str], Reply]) -> Reply:
        text = self.device.bootflash.get(fname(path))
        return Reply(NO_FILE, error=True) if text is None else then(text)

    def _md5(self, m: re.Match[str]) -> Reply:
        return self._file(m.group(1), lambda t: Reply(hashlib.md5(t.encode("utf-8", "surrogateescape")).hexdigest()))

    def _checkpoint(self, m: re.Match[str]) -> Reply:
        text = self.device.running_config("Checkpoint cmd vdc 1")
        if m.group(0).startswith("checkpoint file "):
            self.device.bootflash[fname(m.group(1))] = text
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
        texts = [self.device.bootflash.get(fname(p)) for p in m.groups()]
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
        text = store.get(fname(m.group(2)))
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
        want = fname((m.group(1) or "").strip())
        files = self.device.bootflash
        if want and want not in files:
            return Reply(NO_FILE, error=True)
        stamp = time.strftime("%b %d %H:%M:%S %Y")
        # a folder as NX-OS lists one: 4096 bytes, its name with a trailing slash (captured `dir bootflash:`
        # answers, tests/fixtures/devices/nxos/9.3/dir_bootflash.txt)
        sizes = {**{f"{d}/": 4096 for d in self.device.bootflash_dirs if not want},
                 **{n: len(t.encode("utf-8", "surrogateescape")) for n, t in files.items() if not want or n == want}}
        rows = [f"{size:>11}    {stamp}  {n}" for n, size in sorted(sizes.items())]
        used = sum(len(t) for t in files.values())
        return Reply("\n".join(rows) + f"\n\nUsage for bootflash://sup-local\n {used} bytes used\n"
                     f" {BOOTFLASH_BYTES - used} bytes free\n {BOOTFLASH_BYTES} bytes total\n")

    def _mkdir(self, m: re.Match[str]) -> Reply:
        name = fname(m.group(1)).rstrip("/")
        if not name or "/" in name or name in self.device.bootflash_dirs or name in self.device.bootflash:
            return Reply(f"mkdir: cannot create directory: {name}: File exists", error=True)
        self.device.bootflash_dirs.add(name)
        return Reply()

    def _rmdir(self, m: re.Match[str]) -> Reply:
        name = fname(m.group(1)).rstrip("/")
        if name not in self.device.bootflash_dirs:
            return Reply(NO_FILE, error=True)
        self.device.bootflash_dirs.discard(name)
        return Reply()

    def _delete(self, m: re.Match[str]) -> Reply:
        if self.device.bootflash.pop(fname(m.group(1)), None) is None:
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
        found = body.get("TABLE_vrf", {}).get("ROW_vrf", {}).get("TABLE_af", {}).get("ROW_af", {}).get(
            "TABLE_saf", {}).get("ROW_saf", {}).get("TABLE_neighbor", {}).get("ROW_neighbor", [])
        rows = [found] if isinstance(found, dict) else found
        return Reply("".join(f"{r['neighborid']} 4 {r['neighboras']} {r['state']}\n" for r in rows), body)

    def _show_vpc(self, m: re.Match[str]) -> Reply:
        wiring = self.device.wiring
        from rocefab.lab.nxos.device import NxosDevice  # not at the top: nxos_device imports this module

        peers = {n: d for n, d in wiring.devices.items() if isinstance(d, NxosDevice)} if wiring else {}
        body = nxos_state.vpc_brief(self.device, peers)
        return Reply("".join(f"{k}: {v}\n" for k, v in body.items() if isinstance(v, str)), body)

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
