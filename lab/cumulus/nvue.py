"""An NVIDIA Cumulus Linux 5.14 switch for the lab: the `nv` CLI and NVUE's revision model, served over SSH by
`rocefab.lab.sshd.LabSSHServer` (exec, netmiko shell with prompt `cumulus@<hostname>:mgmt:~$`, SFTP/SCP into `root`).

Here: the switch (`CumulusDevice`) and its `nv`/`vtysh` front end. Its parts: the schema every path is checked
against (lab/cumulus/schema.py), operations on config trees (lab/cumulus/tree.py), the revision model behind
set/patch/replace/apply (lab/cumulus/revisions.py), what `nv show` reports (lab/cumulus/state.py,
lab/cumulus/counters.py).

State: the applied tree (running and, with 5.9+ auto-save, startup), at most one pending revision (`nv set`/`unset`
and `nv config patch`/`replace` start it from applied), detached and older revisions, the apply history and a
`--confirm` rollback timer. Config is a nested dict in NVUE's YAML shape. Every path is checked against `SCHEMA`,
which covers what rocefab renders for Cumulus (lab.yaml spine1, pod32.yaml rack3-a/b) plus `system aaa user`; an
unknown path or a bad value is refused and nothing changes. Files are YAML (read with YAML 1.2 booleans, so `on`
stays a string) or, when every line is a comment or `nv set`/`nv unset`, command text, as NVUE decides.

Modelled on purpose (sources: /tmp/research/nvue.md; Cumulus 5.14 NVUE-CLI and QoS pages):
- The login accounts are the applied `system aaa user` entries. A replace whose file lacks `system aaa user
  cumulus` deletes the account on apply and later logins as cumulus fail (open sessions stay). NVUE-CLI.md says
  replace deletes it; it also says a logged-in account cannot be deleted, which is NOT modelled, so a deploy layer
  must carry the account in every replace. Passwords: `password` is stored as `hashed-password` (`lab_hash`, a
  crypt-shaped stand-in, not crypt(3)).
- The 5.14 QoS caveat "Configure QoS and Breakout Ports Simultaneously" (apply the breakout before QoS on the
  breakout ports; both in one switchd reload "might" error): here an apply that changes any port's `link breakout`
  AND any QoS config (the top-level `qos` tree or an interface's `qos`) ALWAYS fails with `Invalid config` and the
  applied config stays as it was. Deploy in two applies: the breakouts with QoS left as applied, then the rest.
- `nv config apply` without -y asks `Are you sure? [y/N]` and waits for the answer (netmiko's save_config does not
  pass -y); anything but y/yes declines.
Texts: `applied [rev_id: N]` and `Invalid config [rev_id: N]` + indented reason are NVIDIA's; `Config invalid at
<dotted.path>: <jsonschema message>` follows NVUE's jsonschema errors; other messages (CLI errors, confirm replies,
history/revision tables) are approximations, so drive the emulator by exit status, not by text.
Not modelled: interface ranges (swp1-4), value lists (dscp 10,21), `nv show` beyond `nv show system`, per-user
pending revisions (one per switch), operational state, revision limits.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rocefab.lab.cumulus import counters as cumulus_counters
from rocefab.lab.cumulus import state as cumulus_state
from rocefab.lab.cumulus.revisions import Confirm, NvueRevisions, Revision, now
from rocefab.lab.cumulus.schema import Invalid, Tree
from rocefab.lab.cumulus.tree import commands, diff, dig, lab_hash
from rocefab.lab.faults import Knobs, Reachability
from rocefab.lab.sshd import Disconnect, Outcome, Result
from rocefab.lab.wiring import BgpSpeaker, Wiring

VERSION = "5.14.0"


# --- the switch ----------------------------------------------------------------------------------------------------


@dataclass
class Faults:
    """Runtime-changeable misbehaviour (assign fields on `CumulusDevice.faults` at any time)."""

    reject_path: str | None = None  # regex on a config path ("qos roce enable"): refused as invalid, like NVUE would
    delay_s: float = 0.0  # before every command
    drop_on: str | None = None  # regex on a command line: the SSH connection is dropped ...
    drop_after: bool = False  # ... after the command has run (its output is lost), else before it runs
    drop_once: bool = False  # ... only at the first matching command (a connection lost once, not a dead link)
    wrong_password: bool = False  # every login fails, as if the password had been changed


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n"
                   for line in lines)


class CumulusDevice(NvueRevisions):
    """The switch behind one `LabSSHServer`; thread-safe (commands run in the server's worker threads)."""

    KNOBS = Knobs(delay="delay_s", refuse_logins="wrong_password", reject="reject_path")
    # How a confirm window is closed by its owner: what the `lose-confirm` fault never answers.
    CONFIRM_COMMAND = r"\bnv config apply\b.*--confirm-yes"

    def __init__(self, root: Path, hostname: str, *, username: str = "cumulus", password: str = "cumulus",
                 model: str = "SN5600") -> None:
        self._root = root
        (root / "tmp").mkdir(parents=True, exist_ok=True)  # the SFTP/SCP chroot, with a /tmp to upload to
        self.name = hostname  # its name in the lab's wiring, whatever its config later calls it
        self.wiring: Wiring | None = None  # set when the device is part of a lab fabric
        self.model = model
        self.faults = Faults()
        self.reach = Reachability()
        self._lock = threading.RLock()
        self._booted = time.monotonic()
        factory = {"system": {"aaa": {"user": {username: {"hashed-password": lab_hash(username, password),
                                                          "role": "system-admin"}}}, "hostname": hostname}}
        self.applied: Tree = factory
        self.revisions: dict[int, Revision] = {1: Revision(1, copy.deepcopy(factory), "applied", username, now())}
        self.history: list[tuple[int, int, str, str, str, str]] = [(1, 1, now(), username, "CLI", "Initial")]
        self.pending: int | None = None
        self._confirm: Confirm | None = None

    # --- Device protocol for LabSSHServer ---------------------------------------------------------------------------

    def authenticate(self, username: str, password: str) -> bool:
        with self._lock:
            user = dig(self.applied, "system", "aaa", "user", username)
        return (not self.faults.wrong_password and isinstance(user, dict)
                and user.get("hashed-password") == lab_hash(username, password))

    def prompt(self, username: str) -> str:
        return f"{username}@{self.hostname}:mgmt:~$ "

    def handle(self, command: str, username: str) -> Outcome:
        faults = self.faults
        if faults.delay_s:
            time.sleep(faults.delay_s)
        drop = faults.drop_on is not None and re.search(faults.drop_on, command) is not None
        if drop and faults.drop_once:
            faults.drop_on = None
        if (drop and not faults.drop_after) or self.reach.cut_before(command):
            raise Disconnect
        try:
            words = shlex.split(command)
        except ValueError:
            return 2, "", "-bash: syntax error: unexpected end of file\n"
        if words[:1] == ["sudo"]:
            words = words[1:]
        with self._lock:
            if words[:1] == ["nv"]:
                outcome = self._nv(words[1:], username)
            elif words[:1] == ["vtysh"]:
                outcome = self._vtysh(words[1:])
            else:
                outcome = _shell_builtin(words, self.hostname)
        if drop or self.reach.cut_after(command):
            raise Disconnect
        return outcome

    def close(self) -> None:
        with self._lock:
            if self._confirm is not None:
                self._confirm.timer.cancel()

    # --- the lab fabric's questions and hand-made changes (lab/cumulus/state.py) --------------------------------------
    # Asked by the wiring on behalf of other devices, without this device's lock: two switches asking each other
    # at once must not wait on each other. The applied tree is only ever replaced whole, so a read sees one revision.
    def port_enabled(self, port: str) -> bool:
        return cumulus_state.port_enabled(self, port)

    def bgp_speaker(self) -> BgpSpeaker | None:
        return cumulus_state.bgp_speaker(self)

    def logical_peer(self, interface: str) -> tuple[str, str] | None:
        return cumulus_state.logical_peer(self, interface)

    def set_mtu(self, port: str, mtu: int) -> str:
        with self._lock:
            cumulus_state.set_mtu(self, port, mtu)
        return f"nv set interface {port} link mtu {mtu}; nv config apply"

    def pfc_off(self, port: str, priority: int) -> str:
        with self._lock:
            return cumulus_state.pfc_off(self, port, priority)

    def set_dscp(self, dscp: int, priority: int) -> str:
        with self._lock:
            return cumulus_state.set_dscp(self, dscp, priority)

    def strict_off(self, priority: int) -> str:
        with self._lock:
            return cumulus_state.strict_off(self, priority)

    def snapshot(self) -> object:
        with self._lock:
            return copy.deepcopy(self.applied)

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, dict)
        with self._lock:
            self.applied = copy.deepcopy(snapshot)
            self.reach.clear()

    # --- state helpers -----------------------------------------------------------------------------------------------

    @property
    def hostname(self) -> str:
        return str(dig(self.applied, "system", "hostname") or "cumulus")

    # --- nv ----------------------------------------------------------------------------------------------------------

    def _nv(self, words: list[str], user: str) -> Outcome:
        head = words[:2]
        try:
            if head and head[0] in ("set", "unset"):
                self._edit(self._cli_edit(head[0], words[1:]), user)
                return 0, "", ""
            if head == ["show", "system"]:
                return self._show_system(words[2:])
            if head == ["show", "interface"]:
                opts, rest = _options(words[2:])
                if not rest:
                    return 0, _dump(cumulus_state.show_interface(self), opts.get("-o", "json")), ""
                shown = {("link", "stats"): cumulus_counters.general, ("counters", "qos"): cumulus_counters.qos,
                         ("qos", "pfc-watchdog", "status"): cumulus_counters.watchdog}.get(tuple(rest[1:]))
                if shown is not None and cumulus_state.is_port(rest[0]):
                    return 0, _dump(shown(self, rest[0]), opts.get("-o", "json")), ""
            if head == ["show", "mlag"]:
                opts, rest = _options(words[2:])
                if not rest:
                    return 0, _dump(cumulus_state.show_mlag(self), opts.get("-o", "json")), ""
            if words[:6] == ["show", "vrf", "default", "router", "bgp", "neighbor"]:
                opts, rest = _options(words[6:])
                if not rest:
                    return 0, _dump(cumulus_state.bgp_neighbors(self), opts.get("-o", "json")), ""
            if head[:1] == ["config"] and len(words) > 1:
                return self._config(words[1], words[2:], user)
        except Invalid as exc:
            return 1, "", f"Error: {exc}\n"
        return 1, "", f"Error: Invalid Command: nv {' '.join(words)} (not modelled by the rocefab lab)\n"

    def _config(self, sub: str, args: list[str], user: str) -> Outcome:
        opts, rest = _options(args)
        if sub in ("patch", "replace"):
            if len(rest) != 1:
                raise Invalid(f"Incomplete Command: nv config {sub} <nvue-file>")
            change = self._file_edit(rest[0], replace=sub == "replace")
            self._edit(change, user)
            return 0, "", ""
        if sub == "diff":
            if len(rest) not in (0, 2):
                raise Invalid("Usage: nv config diff [<revision> <revision>]")
            old, new = (self._rev_tree(rest[0]), self._rev_tree(rest[1])) if rest else (self.applied,
                                                                                        self._rev_tree("pending"))
            if old is None or new is None:
                raise Invalid(f"Unknown revision: {' '.join(rest)}")
            unset, set_ = diff(old, new)
            if opts.get("-o") == "commands":
                return 0, "".join(f"{c}\n" for c in commands(unset, "unset") + commands(set_)), ""
            docs = [*([{"unset": unset}] if unset else []), *([{"set": set_}] if set_ else [])]
            return 0, _dump(docs, opts.get("-o")), ""
        if sub == "show":
            tree = self._rev_tree(opts.get("-r", "applied"))
            if tree is None:
                raise Invalid(f"Unknown revision: {opts.get('-r')}")
            if opts.get("-o") == "commands":
                return 0, "".join(f"{c}\n" for c in commands(tree)), ""
            header = {"header": {"model": self.model, "nvue-api-version": "nvue_v1", "rev-id": 1.0,
                                 "version": f"Cumulus Linux {VERSION}"}}
            return 0, _dump([header, {"set": tree}], opts.get("-o")), ""
        if sub == "detach":
            if self.pending is not None:
                self.revisions[self.pending].state = "detached"
                self.pending = None
            return 0, "", ""
        if sub == "apply":
            return self._apply(opts, rest, user)
        if sub == "save":
            return 0, "saved [rev_id: applied]\n", ""
        if sub == "history":
            rows = [[str(a), str(r), d, u, t, m] for a, r, d, u, t, m in reversed(self.history)]
            return 0, _table(["Apply ID", "Rev ID", "Date", "User", "Type", "Message"], rows), ""
        if sub == "revision":
            rows = [[str(r.rev_id), r.state, r.user, r.date] for r in self.revisions.values()]
            return 0, _table(["Rev ID", "State", "User", "Date"], rows), ""
        raise Invalid(f"Invalid Command: nv config {sub}")

    def _vtysh(self, args: list[str]) -> Result:
        """`vtysh -c 'show ip route PREFIX json'`, the one FRR command the lab answers (once per -c)."""
        out = []
        for flag, command in zip(args[::2], args[1::2], strict=False):
            found = re.fullmatch(r"show ip route (\S+) json", " ".join(command.split()))
            if flag != "-c" or found is None:
                return 1, "", f"% Unknown command: {command}\n"
            out.append(json.dumps(cumulus_state.ip_route(self, found.group(1)), indent=2) + "\n")
        return 0, "".join(out), ""

    def _show_system(self, args: list[str]) -> Result:
        opts, _ = _options(args)
        up = int(time.monotonic() - self._booted)
        info = {"hostname": self.hostname, "build": f"Cumulus Linux {VERSION}", "product-release": VERSION,
                "product-name": "Cumulus Linux", "uptime": up, "timezone": "Etc/UTC"}
        if opts.get("-o") in ("json", "yaml"):
            return 0, _dump(info, opts["-o"]), ""
        rows = [["hostname", self.hostname, self.hostname], ["build", f"Cumulus Linux {VERSION}", ""],
                ["uptime", f"{up // 3600}:{up // 60 % 60:02d}:{up % 60:02d}", ""], ["timezone", "Etc/UTC", ""]]
        return 0, _table(["", "operational", "applied"], rows), ""


def _options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """NVUE-style options (`-o json`, `--output=json`, `-y`, `--confirm 2s`, ...) and the positional words."""
    aliases = {"--output": "-o", "--rev": "-r", "--y": "-y", "--assume-yes": "-y", "--message": "-m"}
    takes_value = {"-o", "-r", "-m"}
    opts: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        word, _, inline = args[i].partition("=")
        word = aliases.get(word, word)
        if word in takes_value or word == "--confirm":
            nxt = args[i + 1] if i + 1 < len(args) else ""
            if inline:
                opts[word] = inline
            elif word == "--confirm" and not re.fullmatch(r"\d+[smh]?", nxt):
                opts[word] = "10m"  # NVUE's default rollback window
            else:
                opts[word] = nxt
                i += 1
        elif word.startswith("-"):
            opts[word] = ""
        else:
            rest.append(args[i])
        i += 1
    if opts.get("-o", "yaml") not in ("yaml", "json", "commands", "auto"):
        raise Invalid(f"Invalid output format: {opts['-o']}")
    return opts, rest


def _dump(data: Any, fmt: str | None) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=False) if data else ""


def _shell_builtin(words: list[str], hostname: str) -> Result:
    """The few non-nv commands a session may send; the switch is not a general shell here."""
    if not words:
        return 0, "", ""
    if words == ["hostname"]:
        return 0, f"{hostname}\n", ""
    if words[0] in ("true", ":"):
        return 0, "", ""
    return 127, "", f"-bash: {words[0]}: command not found\n"
