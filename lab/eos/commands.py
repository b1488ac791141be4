"""One eAPI `runCmds` request to the lab's EOS emulator: its CLI context (`Batch`: every request starts in exec mode;
`configure` or `configure session` enter config mode, where each line is placed by the EOS grammar), the exec
commands that enter config mode, commit or abort a session and copy, write or replace files, and `EXEC`, every exec
command the emulator knows with its handler (the show commands are in lab/eos/show.py).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rocefab.lab.configtree import ConfigError, ConfigTree, Cursor
from rocefab.lab.eos import show_detail as eos_show_detail
from rocefab.lab.eos import state as eos_state
from rocefab.lab.eos.grammar import EOS_GRAMMAR, error_text
from rocefab.lab.eos.sessions import MAX_OPEN_SESSIONS, CliError, Session, failed
from rocefab.lab.eos.show import (
    show_bgp_summary,
    show_config,
    show_hostname,
    show_interfaces,
    show_lldp,
    show_mlag,
    show_session_config,
    show_sessions,
    show_version,
)

if TYPE_CHECKING:
    from rocefab.lab.eos.device import EosDevice

COPY_OK = "Copy completed successfully.\n"


Handler = Callable[["Batch", re.Match[str], str | None], tuple[dict[str, Any] | None, str]]


class Batch:
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
            raise failed(f"% Session {name} does not exist")
        return session


# --- exec commands ------------------------------------------------------------------------------------------
def _enable(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    return {}, ""


def _configure_session(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    name, action, hh, mm, ss = m.groups()
    dev = b.dev
    if action is None:
        session = dev.sessions.get(name)
        if session is None:
            if sum(s.state == "pending" for s in dev.sessions.values()) >= MAX_OPEN_SESSIONS:
                raise failed("% Maximum number of pending sessions has been reached")
            session = dev.sessions[name] = Session(name, dev.running.copy(), b.user)
        elif session.state != "pending":
            raise failed(f"% Cannot enter session {name} (state {session.state})")
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


def _configure(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    b.session, b.cursor = None, b.dev.running.cursor()
    return {}, ""


def _read_file(dev: EosDevice, url: str) -> str:
    if url in ("startup-config", "flash:startup-config"):
        return dev.startup
    if url == "running-config":
        return dev.running_text()
    if url.startswith("flash:") and url[6:] in dev.flash:
        return dev.flash[url[6:]]
    raise failed(f"% Error opening {url} (No such file or directory)")


def _copy(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    source, target = m.groups()
    text = _read_file(b.dev, source)
    if target in ("startup-config", "flash:startup-config"):
        b.dev.startup = text
    elif target.startswith("flash:") and len(target) > 6:
        b.dev.flash[target[6:]] = text
    else:
        raise failed(f"% Cannot copy to {target}")
    return {"messages": [COPY_OK.strip()]}, COPY_OK


def _write(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    b.dev.startup = b.dev.running_text()
    return {"messages": [COPY_OK.strip()]}, COPY_OK


def _configure_replace(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    try:
        b.dev.running = ConfigTree.parse(EOS_GRAMMAR, _read_file(b.dev, m.group(1)))
    except ConfigError as exc:
        raise failed(f"% Configuration replace failed: {exc}") from exc
    return {}, ""


FLASH = "/mnt/flash"


def _bash(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    """eAPI's `bash timeout N COMMAND`: the few commands rocefab runs there, on the emulated flash, answering as
    GNU coreutils does (an error is text in the output, as eAPI returns it, not an eAPI error)."""
    argv = shlex.split(m.group(1))
    dev = b.dev
    entries = {"startup-config", *dev.flash, *dev.flash_dirs}
    if argv == ["ls", "-1", FLASH]:
        text = "".join(f"{n}\n" for n in sorted(entries))
    elif len(argv) == 2 and argv[0] in ("mkdir", "rmdir") and argv[1].startswith(f"{FLASH}/"):
        name = argv[1][len(FLASH) + 1:]
        if argv[0] == "mkdir":
            text = f"mkdir: cannot create directory '{argv[1]}': File exists\n" if name in entries or "/" in name \
                else ""
            if not text:
                dev.flash_dirs.add(name)
        else:
            text = "" if name in dev.flash_dirs else f"rmdir: failed to remove '{argv[1]}': No such file or directory\n"
            dev.flash_dirs.discard(name)
    else:  # the lab runs no real shell
        text = f"bash: {argv[0] if argv else ''}: not emulated by the lab (ls -1, mkdir and rmdir in {FLASH} are)\n"
    return {"messages": [text]}, text


EXEC: tuple[tuple[re.Pattern[str], Handler], ...] = tuple((re.compile(p), h) for p, h in (
    (r"enable", _enable),
    (r"show version", show_version),
    (r"show hostname", show_hostname),
    (r"show interfaces description", eos_show_detail.interfaces_description),
    (r"show interfaces(?: (\S+))?", show_interfaces),
    (r"show lldp neighbors detail", eos_show_detail.lldp_detail),
    (r"show lldp neighbors", show_lldp),
    (r"show (?:ip )?bgp neighbors vrf all|show ipv6 bgp (peers) vrf all", eos_show_detail.bgp_neighbors),
    (r"show ipv6 bgp summary vrf all", eos_show_detail.ipv6_bgp_summary),
    (r"show ip bgp summary(?: vrf (?:all|default))?", show_bgp_summary),
    (r"show mlag", show_mlag),
    (r"show ip route (\S+)", lambda b, m, d: (eos_state.ip_route(b.dev, m.group(1)), "")),
    (r"show priority-flow-control counters", lambda b, m, d: (eos_state.pfc_counters(b.dev), "")),
    (r"show interfaces counters queue detail", lambda b, m, d: (eos_state.queue_counters(b.dev), "")),
    (r"show qos interfaces ecn counters queue", lambda b, m, d: (eos_state.ecn_counters(b.dev), "")),
    (r"show configuration sessions(?: detail)?", show_sessions),
    (r"show session-config(?: named (\S+))?( diffs)?", show_session_config),
    (r"show (running|startup)-config((?: all| sanitized)*)( \| json)?", show_config),
    (r"configure session (\S+)(?: (abort|commit)(?: timer (\d\d):(\d\d):(\d\d))?)?", _configure_session),
    (r"configure(?: terminal)?", _configure),
    (r"configure replace (\S+)(?: force)?", _configure_replace),
    (r"copy (\S+) (\S+)", _copy),
    (r"write(?: memory)?", _write),
    (r"bash timeout \d+ (.+)", _bash),
))
