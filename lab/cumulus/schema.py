"""NVUE's configuration schema as the lab's Cumulus emulator (lab/cumulus/nvue.py) checks it: the value types, in
jsonschema's words as NVUE prints them, and every config path the emulator accepts (`SCHEMA_LINES`).

A `- set:`/`- unset:` document or an `nv set` line is walked against `SCHEMA`: an unknown path or a bad value raises
`Invalid` with NVUE's message, and nothing changes. What the schema covers, and why, is said in lab/cumulus/nvue.py.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
    "seq": _int(1, 65535),  # route-map rule numbers (FRR route-map sequence numbers)
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
router policy route-map {name} rule {seq} action permit
router policy route-map {name} rule {seq} set ipv6-nexthop-prefer-global <onoff>
service ntp {name} server {host} iburst <onoff>
service dns {name} server {ip}
service dns {name} search {host}
system syslog server {host} vrf <name>
system syslog server {host} port <port>
system message pre-login <text>
system message post-login <text>
system gnmi-server state <state>
maintenance unit all-protocols mode <state>
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
vrf {name} router bgp neighbor {neighbor} address-family ipv4-unicast policy inbound route-map <name>
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


def step(node: Node, word: object) -> tuple[str, Node]:
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


def dotted(path: list[str]) -> str:
    return ".".join(path) or "<root>"


def normalise(data: object, node: Node, path: list[str], unset: bool) -> Any:
    """A `- set:` (or `- unset:`) document checked against the schema, keys as strings, values converted."""
    if unset and (data is None or data == {}):
        return None
    if node.value is not None:  # a leaf (no schema node is both a leaf and a map)
        try:
            return TYPES[node.value](data)
        except ValueError as exc:
            raise Invalid(f"Config invalid at {dotted(path)}: {exc}") from None
    if data is None and node.bare:
        return {}
    if not isinstance(data, dict):
        raise Invalid(f"Config invalid at {dotted(path)}: {data!r} is not of type 'object'")
    out: Tree = {}
    for word, value in data.items():
        try:
            name, child = step(node, word)
        except Invalid as exc:
            raise Invalid(f"Config invalid at {dotted(path)}: {exc}") from None
        out[name] = normalise(value, child, [*path, name], unset)
    return out
