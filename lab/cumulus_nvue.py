"""An NVIDIA Cumulus Linux 5.14 switch for the lab: the `nv` CLI and NVUE's revision model, served over SSH by
`rocefab.lab.sshd.LabSSHServer` (exec, netmiko shell with prompt `cumulus@<hostname>:mgmt:~$`, SFTP/SCP into `root`).

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
import hashlib
import ipaddress
import json
import re
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from rocefab.lab import cumulus_counters, cumulus_state
from rocefab.lab.faults import Reachability
from rocefab.lab.sshd import Ask, Disconnect, Outcome, Result
from rocefab.lab.wiring import BgpSpeaker, Wiring
from rocefab.models.loader import load_yaml12

VERSION = "5.14.0"
Tree = dict[str, Any]
Check = Callable[[object], str | int]


# --- value types (messages in jsonschema's words, as NVUE prints them) ---------------------------------------------


def _text(raw: object) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ValueError(f"{raw!r} is not of type 'string'")
    return str(raw)


def _enum(*values: str) -> Check:
    def check(raw: object) -> str:
        if _text(raw) not in values:
            raise ValueError(f"{raw!r} is not one of {list(values)}")
        return str(raw)
    return check


def _int(lo: int, hi: int) -> Check:
    def check(raw: object) -> int:
        if isinstance(raw, bool) or not (isinstance(raw, int) or (isinstance(raw, str) and raw.isdigit())):
            raise ValueError(f"{raw!r} is not of type 'integer'")
        if not lo <= int(raw) <= hi:
            raise ValueError(f"{raw} is {'less than the minimum' if int(raw) < lo else 'greater than the maximum'} "
                             f"of {lo if int(raw) < lo else hi}")
        return int(raw)
    return check


def _format(name: str, valid: Callable[[str], object]) -> Check:
    def check(raw: object) -> str:
        text = _text(raw)
        try:
            ok = valid(text)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"'{text}' is not a '{name}'")
        return text
    return check


def _either(*checks: Check) -> Check:
    def check(raw: object) -> str | int:
        errors = []
        for one in checks:
            try:
                return one(raw)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    return check


def _vlans(text: str) -> bool:
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if not (lo.isdigit() and 1 <= int(lo) <= 4094 and (not hi or (hi.isdigit() and int(lo) < int(hi) <= 4094))):
            return False
    return True


_NAME = re.compile(r"[A-Za-z][\w.-]*").fullmatch
_IFNAME = re.compile(r"(?!.*\d-\d)[A-Za-z][\w.-]{0,14}").fullmatch  # a range like swp1-4 is not modelled
TYPES: dict[str, Check] = {
    "text": _text, "name": _format("name", _NAME), "ifname": _format("interface-name", _IFNAME),
    "hostname": _format("hostname", re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,62})").fullmatch),
    "user": _format("user-name", re.compile(r"[a-z_][a-z0-9_-]{0,31}").fullmatch),
    "prefix": _format("ip-prefix", lambda s: "/" in s and ipaddress.ip_interface(s)),
    "ip": _format("ip-address", ipaddress.ip_address), "ipv4": _format("ipv4-address", ipaddress.IPv4Address),
    "mac": _format("mac-address", re.compile(r"([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}").fullmatch),
    "vlanlist": _format("vlan-list", _vlans), "vlan": _int(1, 4094), "mtu": _int(552, 9216),
    "speed": _enum("auto", "10M", "100M", "1G", "10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G"),
    "updown": _enum("up", "down"), "breakout": _enum("1x", "2x", "4x", "8x", "disabled", "loopback"),
    "lanes": _int(1, 8), "onoff": _enum("on", "off"), "enadis": _enum("enable", "disable"),
    "iftype": _enum("swp", "eth", "loopback", "bond", "peerlink", "sub", "svi", "bridge"),
    "u16": _int(0, 65535), "mlagid": _int(1, 65535), "initdelay": _int(0, 900),
    "peerip": _either(_enum("linklocal"), _format("ip-address", ipaddress.ip_address)),
    "rocemode": _enum("lossless", "lossy", "lossless-single-ipool", "lossy-multi-tc"), "cable": _int(1, 100000),
    "trust": _enum("l2", "l3", "port", "both"), "dscp": _int(0, 63), "prio": _int(0, 7), "tc": _int(0, 7),
    "bytes": _int(1, 2**32 - 1), "pct": _int(1, 100), "schedmode": _enum("dwrr", "strict"),
    "pollms": _int(100, 5000), "robust": _int(1, 1000), "asn": _either(_int(1, 2**32 - 1), _enum("leaf", "spine")),
    "remoteas": _either(_int(1, 2**32 - 1), _enum("internal", "external")), "multipaths": _int(1, 128),
    "neighbor": _either(_format("ip-address", ipaddress.ip_address), _format("interface-name", _IFNAME)),
    "neightype": _enum("numbered", "unnumbered"), "role": _enum("system-admin", "nvue-admin", "nvue-monitor"),
    "bfdmult": _int(2, 255), "bfdms": _int(50, 60000), "u32": _int(0, 2**32 - 1),
    "state": _enum("enabled", "disabled"), "port": _int(1, 65535),
    "listen": _either(_enum("localhost"), _format("ip-address", ipaddress.ip_address)),
    # A server named by address or DNS name (NTP, syslog) and a search domain.
    "host": _either(_format("ip-address", ipaddress.ip_address), _format("domain-name", re.compile(
        r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*").fullmatch)),
}
EXCLUSIVE = {"updown", "breakout"}  # collections holding one choice: setting `link state down` replaces `up`

# `{type}` = an identifier (a map key, `x: {}` when bare), `<type>` = a value, a line ending in a keyword = a node
# that may be set bare (`nv set qos roce`).
SCHEMA_LINES = """
system hostname <hostname>
system aaa user {user} hashed-password <text>
system aaa user {user} password <text>
system aaa user {user} role <role>
system aaa user {user} full-name <text>
interface {ifname} type <iftype>
interface {ifname} description <text>
interface {ifname} base-interface <ifname>
interface {ifname} vlan <vlan>
interface {ifname} link mtu <mtu>
interface {ifname} link speed <speed>
interface {ifname} link auto-negotiate <onoff>
interface {ifname} link state {updown}
interface {ifname} link breakout {breakout} lanes-per-port <lanes>
interface {ifname} ip address {prefix}
interface {ifname} ip gateway {ip}
interface {ifname} ip vrf <name>
interface {ifname} ip vrr address {prefix}
interface {ifname} ip vrr enable <onoff>
interface {ifname} ip vrr mac-address <mac>
interface {ifname} ip vrr state {updown}
interface {ifname} bond member {ifname}
interface {ifname} bond mlag enable <onoff>
interface {ifname} bond mlag id <mlagid>
interface {ifname} bond lacp-bypass <onoff>
interface {ifname} bridge domain {name} access <vlan>
interface {ifname} bridge domain {name} stp admin-edge <onoff>
interface {ifname} bridge domain {name} stp auto-edge <onoff>
interface {ifname} bridge domain {name} stp bpdu-guard <onoff>
interface {ifname} bridge domain {name} stp bpdu-filter <onoff>
interface {ifname} router adaptive-routing enable <onoff>
interface {ifname} router adaptive-routing link-utilization-threshold <pct>
interface {ifname} qos pfc-watchdog
interface {ifname} qos pfc-watchdog state <enadis>
bridge domain {name} vlan {vlanlist}
bridge domain {name} untagged <vlan>
mlag backup {ip} vrf <name>
mlag enable <onoff>
mlag mac-address <mac>
mlag peer-ip <peerip>
mlag priority <u16>
mlag init-delay <initdelay>
qos roce
qos roce enable <onoff>
qos roce mode <rocemode>
qos mapping {name} trust <trust>
qos mapping {name} dscp {dscp} switch-priority <prio>
qos pfc {name} switch-priority {prio}
qos pfc {name} tx <enadis>
qos pfc {name} rx <enadis>
qos pfc {name} cable-length <cable>
qos congestion-control {name} traffic-class {tc} min-threshold <bytes>
qos congestion-control {name} traffic-class {tc} max-threshold <bytes>
qos congestion-control {name} traffic-class {tc} probability <pct>
qos congestion-control {name} traffic-class {tc} ecn <enadis>
qos congestion-control {name} traffic-class {tc} red <enadis>
qos egress-scheduler {name} traffic-class {tc} mode <schedmode>
qos egress-scheduler {name} traffic-class {tc} bw-percent <pct>
qos egress-queue-mapping {name} switch-priority {prio} traffic-class <tc>
qos pfc-watchdog polling-interval <pollms>
qos pfc-watchdog robustness <robust>
qos traffic-pool {name} memory-percent <pct>
router bgp autonomous-system <asn>
router bgp enable <onoff>
router bgp router-id <ipv4>
router vrr enable <onoff>
router adaptive-routing enable <onoff>
router adaptive-routing link-utilization-threshold <onoff>
service ntp {name} server {host} iburst <onoff>
service dns {name} server {ip}
service dns {name} search {host}
system syslog server {host} vrf <name>
system syslog server {host} port <port>
system message pre-login <text>
system message post-login <text>
system gnmi-server state <state>
system gnmi-server port <port>
system gnmi-server listening-address {listen}
system gnmi-server certificate <name>
system gnmi-server mtls ca-certificate <name>
system forwarding hash-seed <u32>
system forwarding ecmp-hash ip-protocol <onoff>
system forwarding ecmp-hash source-ip <onoff>
system forwarding ecmp-hash destination-ip <onoff>
system forwarding ecmp-hash source-port <onoff>
system forwarding ecmp-hash destination-port <onoff>
system forwarding ecmp-hash ipv6-label <onoff>
system forwarding ecmp-hash ingress-interface <onoff>
system forwarding lag-hash ip-protocol <onoff>
system forwarding lag-hash source-ip <onoff>
system forwarding lag-hash destination-ip <onoff>
system forwarding lag-hash source-port <onoff>
system forwarding lag-hash destination-port <onoff>
system forwarding lag-hash source-mac <onoff>
system forwarding lag-hash destination-mac <onoff>
vrf {name} router bgp enable <onoff>
vrf {name} router bgp autonomous-system <asn>
vrf {name} router bgp router-id <ipv4>
vrf {name} router bgp address-family ipv4-unicast enable <onoff>
vrf {name} router bgp address-family ipv4-unicast multipaths ebgp <multipaths>
vrf {name} router bgp address-family ipv4-unicast network {prefix}
vrf {name} router bgp address-family ipv4-unicast aggregate-route {prefix} summary-only <onoff>
vrf {name} router bgp address-family ipv4-unicast redistribute connected enable <onoff>
vrf {name} router bgp neighbor {neighbor} remote-as <remoteas>
vrf {name} router bgp neighbor {neighbor} type <neightype>
vrf {name} router bgp neighbor {neighbor} description <text>
vrf {name} router bgp neighbor {neighbor} bfd enable <onoff>
vrf {name} router bgp neighbor {neighbor} bfd detect-multiplier <bfdmult>
vrf {name} router bgp neighbor {neighbor} bfd min-rx-interval <bfdms>
vrf {name} router bgp neighbor {neighbor} bfd min-tx-interval <bfdms>
vrf {name} router bgp path-selection multipath aspath-ignore <onoff>
"""


@dataclass
class Node:
    children: dict[str, Node] = field(default_factory=dict)
    key: str | None = None  # type name of the identifiers below this node
    entry: Node | None = None
    value: str | None = None  # type name of this leaf's value
    bare: bool = False


def _build_schema(lines: str) -> Node:
    root = Node()
    for line in lines.strip().splitlines():
        node = root
        for word in line.split():
            if word.startswith("{"):
                node.key = word[1:-1]
                node.entry = node.entry or Node(bare=True)
                node = node.entry
            elif word.startswith("<"):
                node.value = word[1:-1]
            else:
                node = node.children.setdefault(word, Node())
        node.bare = node.bare or not line.split()[-1].startswith("<")
    return root


SCHEMA = _build_schema(SCHEMA_LINES)


class Invalid(Exception):
    """A path or value NVUE refuses; the message is what it prints."""


def _step(node: Node, word: object) -> tuple[str, Node]:
    """The child of `node` named by `word` (a keyword or an identifier)."""
    name = str(word)
    if name in node.children:
        return name, node.children[name]
    if node.key is not None and node.entry is not None:
        try:
            TYPES[node.key](name)
        except ValueError as exc:
            raise Invalid(str(exc)) from None
        return name, node.entry
    raise Invalid(f"Additional properties are not allowed ('{name}' was unexpected)")


def _dotted(path: list[str]) -> str:
    return ".".join(path) or "<root>"


def _normalise(data: object, node: Node, path: list[str], unset: bool) -> Any:
    """A `- set:` (or `- unset:`) document checked against the schema, keys as strings, values converted."""
    if unset and (data is None or data == {}):
        return None
    if node.value is not None:  # a leaf (no schema node is both a leaf and a map)
        try:
            return TYPES[node.value](data)
        except ValueError as exc:
            raise Invalid(f"Config invalid at {_dotted(path)}: {exc}") from None
    if data is None and node.bare:
        return {}
    if not isinstance(data, dict):
        raise Invalid(f"Config invalid at {_dotted(path)}: {data!r} is not of type 'object'")
    out: Tree = {}
    for word, value in data.items():
        try:
            name, child = _step(node, word)
        except Invalid as exc:
            raise Invalid(f"Config invalid at {_dotted(path)}: {exc}") from None
        out[name] = _normalise(value, child, [*path, name], unset)
    return out


# --- trees ---------------------------------------------------------------------------------------------------------


def _merge(dst: Tree, src: Tree, node: Node = SCHEMA) -> None:
    if node.key in EXCLUSIVE and src:
        dst.clear()
    for name, value in src.items():
        child = _step(node, name)[1]
        if isinstance(value, dict) and isinstance(dst.get(name), dict):
            _merge(dst[name], value, child)
        else:
            dst[name] = copy.deepcopy(value)


def _remove(dst: Tree, src: Tree) -> None:
    for name, value in src.items():
        if name in dst:
            if isinstance(value, dict) and isinstance(dst[name], dict):
                _remove(dst[name], value)
            else:  # null (or a value) names what goes
                del dst[name]


def _nest(path: list[str], leaf: Any) -> Tree:
    tree: Any = leaf
    for word in reversed(path):
        tree = {word: tree}
    result: Tree = tree
    return result


def _leaves(tree: Tree, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, value) per printable line: scalar leaves and bare maps (value None)."""
    for name, value in tree.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, (*path, name))
        else:
            yield (*path, name), None if isinstance(value, dict) else value


def _quote(word: object) -> str:
    text = str(word)
    if text and re.fullmatch(r"[\w@%+=:,./-]+", text):
        return text
    return f'"{text}"' if not re.search(r'["$`\\!]', text) else shlex.quote(text)


def commands(tree: Tree, verb: str = "set") -> list[str]:
    """`nv set` (or `nv unset`) lines of a tree, as `nv config show -o commands` prints them."""
    return [" ".join(["nv", verb, *map(_quote, path), *([] if value is None else [_quote(value)])])
            for path, value in _leaves(tree)]


def diff(old: Tree, new: Tree) -> tuple[Tree, Tree]:
    """(unset, set) documents that turn `old` into `new`; a removed subtree is one unset, not one per leaf."""
    unset: Tree = {}
    set_: Tree = {}
    for name, before in old.items():
        if name not in new:
            unset[name] = None
        elif isinstance(before, dict) and isinstance(new[name], dict):
            u, s = diff(before, new[name])
            if u:
                unset[name] = u
            if s:
                set_[name] = s
        elif before != new[name]:
            set_[name] = copy.deepcopy(new[name])
    for name, after in new.items():
        if name not in old:
            set_[name] = copy.deepcopy(after)
    return unset, set_


def _get(tree: Any, *path: str) -> Any:
    for word in path:
        tree = tree.get(word) if isinstance(tree, dict) else None
    return tree


def breakout_qos_conflict(old: Tree, new: Tree) -> str | None:
    """The 5.14 caveat: a breakout change and a QoS change must not go in one apply (see the module docstring)."""
    ports = sorted(set(old.get("interface", {})) | set(new.get("interface", {})))
    changed = [p for p in ports if _get(old, "interface", p, "link", "breakout") != _get(new, "interface", p, "link",
                                                                                           "breakout")]
    qos = old.get("qos") != new.get("qos") or any(_get(old, "interface", p, "qos") != _get(new, "interface", p, "qos")
                                                  for p in ports)
    if not (changed and qos):
        return None
    return (f"Config invalid at interface.{changed[0]}.link.breakout: breakout of {', '.join(changed)} and QoS "
            "configuration change in the same apply; apply the breakout first (nv config apply), then the QoS "
            "configuration in a second apply")


def lab_hash(username: str, password: str) -> str:
    """A crypt-shaped stand-in for the account's SHA-512 hash (not crypt(3)); the salt is fixed per user so the
    same password gives the same config and re-applying it is not a change."""
    salt = hashlib.sha256(username.encode()).hexdigest()[:16]
    return f"$6${salt}${hashlib.sha512(f'{salt}{password}'.encode()).hexdigest()}"


def _hash_passwords(tree: Tree) -> None:
    """NVUE keeps only the hash of `password`."""
    for name, user in (_get(tree, "system", "aaa", "user") or {}).items():
        if isinstance(user, dict) and "password" in user:
            user["hashed-password"] = lab_hash(name, str(user.pop("password")))


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


@dataclass
class Revision:
    rev_id: int
    tree: Tree
    state: str  # pending | applied | detached | confirm | rolled-back
    user: str
    date: str


@dataclass
class _Confirm:
    rev_id: int
    previous: Tree
    deadline: float  # time.monotonic()
    timer: threading.Timer


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n"
                   for line in lines)


class CumulusDevice:
    """The switch behind one `LabSSHServer`; thread-safe (commands run in the server's worker threads)."""

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
        self.revisions: dict[int, Revision] = {1: Revision(1, copy.deepcopy(factory), "applied", username, _now())}
        self.history: list[tuple[int, int, str, str, str, str]] = [(1, 1, _now(), username, "CLI", "Initial")]
        self.pending: int | None = None
        self._confirm: _Confirm | None = None

    # --- Device protocol for LabSSHServer ---------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self._root

    def authenticate(self, username: str, password: str) -> bool:
        with self._lock:
            user = _get(self.applied, "system", "aaa", "user", username)
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

    # --- the lab fabric's questions and hand-made changes (lab/cumulus_state.py) --------------------------------------
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
        return str(_get(self.applied, "system", "hostname") or "cumulus")

    def expire_confirm_now(self) -> None:
        """Fault: the `--confirm` window closes now (the change rolls back) instead of at its deadline."""
        with self._lock:
            if self._confirm is not None:
                self._confirm.timer.cancel()
                self._rollback("confirm timeout")

    def _rev_tree(self, name: str) -> Tree | None:
        if name == "applied":
            return self.applied
        if name == "pending":
            return self.revisions[self.pending].tree if self.pending else self.applied
        if name == "empty":
            return {}
        if name == "startup":
            return self.applied  # auto-save (5.9+) keeps startup equal to applied
        found = self.revisions.get(int(name)) if name.isdigit() else None
        return found.tree if found else None

    def _edit(self, change: Callable[[Tree], None], user: str) -> None:
        """Run `change` on a copy of the pending tree (new revision from applied if none); commit only on success."""
        base = self.revisions[self.pending].tree if self.pending else self.applied
        work = copy.deepcopy(base)
        change(work)
        _hash_passwords(work)
        if self.pending is None:
            self.pending = max(self.revisions) + 1
            self.revisions[self.pending] = Revision(self.pending, work, "pending", user, _now())
        else:
            self.revisions[self.pending].tree = work

    def _check_rejected(self, tree: Tree, verb: str) -> None:
        pattern = self.faults.reject_path
        for path, _ in _leaves(tree) if pattern is not None else ():
            if pattern is not None and re.search(pattern, " ".join(path)):
                raise Invalid(f"Config invalid at {_dotted(list(path))}: {verb} refused (injected fault)")

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
                shown = {("counters",): cumulus_counters.general, ("counters", "qos"): cumulus_counters.qos,
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

    def _cli_edit(self, verb: str, words: list[str]) -> Callable[[Tree], None]:
        """The change one `nv set`/`nv unset` line makes, checked against the schema first."""
        node, path = SCHEMA, list[str]()
        value: Any = {}
        line = " ".join(["nv", verb, *words])
        for i, word in enumerate(words):
            try:
                name, child = _step(node, word)
            except Invalid as exc:
                if node.value is not None and i == len(words) - 1 and verb == "set":
                    try:
                        value = TYPES[node.value](word)
                    except ValueError as bad:
                        raise Invalid(f"Invalid Command: {line}\n  {bad}") from None
                    break
                raise Invalid(f"Invalid Command: {line}\n  {exc}") from None
            node, path = child, [*path, name]
        else:
            if not path or (verb == "set" and not node.bare):
                raise Invalid(f"Incomplete Command: {line}")
        doc = _nest(path, None if verb == "unset" else value)
        self._check_rejected(_nest(path, {}) if verb == "unset" else doc, verb)
        if verb == "unset":
            return lambda tree: _remove(tree, doc)
        return lambda tree: _merge(tree, doc)

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

    def _file_edit(self, name: str, *, replace: bool) -> Callable[[Tree], None]:
        root = self.root.resolve()
        path = (root / name.lstrip("/")).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise Invalid(f"File not found: {name}")
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = [line.strip() for line in text.splitlines()]
        changes: list[Callable[[Tree], None]] = [lambda tree: tree.clear()] if replace else []
        # NVUE reads a file of only comments, blank lines and nv set/unset lines as commands, anything else as YAML
        if all(not line or line.startswith("#") or re.match(r"nv (un)?set\s", line) for line in lines):
            for number, line in enumerate(lines, 1):
                if line and not line.startswith("#"):
                    try:
                        words = shlex.split(line)
                        changes.append(self._cli_edit(words[1], words[2:]))
                    except (Invalid, ValueError) as exc:
                        raise Invalid(f"line {number}: {line}\n  {exc}") from None
        else:
            changes += self._yaml_changes(text, name)

        def run(tree: Tree) -> None:
            for change in changes:
                change(tree)
        return run

    def _yaml_changes(self, text: str, name: str) -> list[Callable[[Tree], None]]:
        try:
            docs = load_yaml12(text)
        except yaml.YAMLError as exc:
            raise Invalid(f"Failed to parse {name}: {exc}") from None
        if docs is None:
            docs = []
        if not isinstance(docs, list):
            raise Invalid(f"Config invalid at <root>: {type(docs).__name__} is not of type 'array'")
        changes: list[Callable[[Tree], None]] = []
        for doc in docs:
            if not isinstance(doc, dict) or len(doc) != 1 or next(iter(doc)) not in ("set", "unset", "header"):
                raise Invalid(f"Config invalid at <root>: {doc!r} is not one of the 'header', 'set', 'unset' forms")
            verb, body = next(iter(doc.items()))
            if verb == "header":
                continue
            tree: Tree = _normalise(body, SCHEMA, [], verb == "unset") or {}
            self._check_rejected(tree, verb)
            changes.append(partial(_remove if verb == "unset" else _merge, src=tree))
        return changes

    # --- apply, confirm, rollback ------------------------------------------------------------------------------------

    def _apply(self, opts: dict[str, str], rest: list[str], user: str) -> Outcome:
        if "--confirm-status" in opts:
            if self._confirm is None:
                return 0, "No pending confirm\n", ""
            left = max(0.0, self._confirm.deadline - time.monotonic())
            return 0, f"Confirm pending for rev_id {self._confirm.rev_id}: {left:.0f} seconds left\n", ""
        if "--confirm-yes" in opts or "--confirm-no" in opts:
            if self._confirm is None:
                raise Invalid("There is no pending confirm")
            confirm, rev_id = self._confirm, self._confirm.rev_id
            if "--confirm-no" in opts:
                confirm.timer.cancel()
                self._rollback("confirm rejected")
                return 0, f"rolled back [rev_id: {rev_id}]\n", ""
            confirm.timer.cancel()
            self._confirm = None
            self.revisions[rev_id].state = "applied"
            return 0, f"confirmed [rev_id: {rev_id}]\n", ""
        if self._confirm is not None:
            raise Invalid(f"A confirm is pending for rev_id {self._confirm.rev_id}: run nv config apply "
                          "--confirm-yes or --confirm-no first")
        if len(rest) > 1:
            raise Invalid(f"Invalid Command: nv config apply {' '.join(rest)}")
        chosen = int(rest[0]) if rest and rest[0].isdigit() else self.pending
        if rest and (chosen is None or chosen not in self.revisions):
            raise Invalid(f"Unknown revision: {rest[0]}")
        if chosen is None:
            raise Invalid("There is no pending configuration to apply")
        rev_id = chosen
        confirm_s = _duration(opts["--confirm"]) if "--confirm" in opts else None

        def go() -> Result:
            with self._lock:
                return self._commit(rev_id, user, confirm_s, opts.get("-m", "CLI apply"))
        if "-y" in opts:
            return go()
        if "--assume-no" in opts:
            return 1, "", "Declined apply after warnings\n"
        return Ask("Are you sure? [y/N] ", lambda answer: go() if answer.lower() in ("y", "yes") else (
            1, "", "Declined apply after warnings\n"))

    def _commit(self, rev_id: int, user: str, confirm_s: float | None, message: str) -> Result:
        if self._confirm is not None:  # another apply --confirm won the race while this one was asking
            return 1, "", f"Error: A confirm is pending for rev_id {self._confirm.rev_id}\n"
        target = self.revisions[rev_id].tree
        problem = breakout_qos_conflict(self.applied, target)
        if problem:
            return 1, "", f"Invalid config [rev_id: {rev_id}]\n  {problem}\n"
        previous, self.applied = self.applied, copy.deepcopy(target)
        self.revisions[rev_id].state = "confirm" if confirm_s else "applied"
        if rev_id == self.pending:
            self.pending = None
        self.history.append((len(self.history) + 1, rev_id, _now(), user, "CLI", message))
        out = f"applied [rev_id: {rev_id}]\n"
        if confirm_s:
            timer = threading.Timer(confirm_s, self._expire, args=(rev_id,))
            timer.daemon = True
            self._confirm = _Confirm(rev_id, previous, time.monotonic() + confirm_s, timer)
            timer.start()
            out += f"Confirm within {confirm_s:g} seconds with nv config apply --confirm-yes, or it rolls back\n"
        return 0, out, ""

    def _expire(self, rev_id: int) -> None:
        with self._lock:
            if self._confirm is not None and self._confirm.rev_id == rev_id:
                self._rollback("confirm timeout")

    def _rollback(self, why: str) -> None:
        assert self._confirm is not None
        confirm, self._confirm = self._confirm, None
        self.applied = confirm.previous
        self.revisions[confirm.rev_id].state = "rolled-back"
        self.history.append((len(self.history) + 1, confirm.rev_id, _now(), "system", "rollback", why))

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


def _duration(text: str) -> float:
    found = re.fullmatch(r"(\d+)([smh]?)", text)
    if not found or int(found[1]) == 0:
        raise Invalid(f"Invalid confirm time: {text}")
    return int(found[1]) * {"s": 1, "m": 60, "h": 3600, "": 60}[found[2]]  # a bare number is minutes


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
