"""Devices whose changes are the same once their own values are set aside: one review per unique change.

A fabric-wide change (an ECN threshold, a DSCP entry, a new NTP server) reaches every switch of a platform as the
same lines around different names, addresses, ASNs and ports. Each changed line (`+`/`-`, not the context, the
headers or the hunk positions) is abstracted:

- a device name of the plan          -> `<device>`
- an IPv4 or IPv6 address or prefix  -> `<ipv4>` / `<ipv6>`
- a MAC address                      -> `<mac>`
- an interface name (Ethernet1/2, swp3s1, Port-Channel12, bond0, Vlan101, peerlink.4094, ...) -> `<if>`
- the number after `router bgp`, `remote-as`, `autonomous-system`, `local-as` -> `<asn>`
- the text of a `description`        -> `<text>`
- a content hash (12 or more hex digits: a host's installed script, which carries the host's own data) -> `<hash>`

Two devices of one platform are in one group when the *sets* of their abstracted changed lines are equal: a leaf
with 16 ports and a spine with 64 that both change every port's PFC line change alike. Notes above a diff (`# needs
a reload: ...`) are part of what is compared. Everything else (thresholds, percentages, DSCP values, VLAN ids,
keywords) stays as it is, so two devices that differ in what really changes are never merged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?(?![\w.])")
_IPV6 = re.compile(r"(?<![\w:])(?=[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:)(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:/\d{1,3})?"
                   r"(?![\w:])")
_MAC = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}(?![\w:])|"
                  r"(?<![\w.])[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?![\w.])")
_IFNAME = re.compile(r"(?<![\w-])(?:Ethernet|Eth|Et|ethernet|Port-Channel|port-channel|Po|Loopback|loopback|lo|"
                     r"Management|mgmt|Vlan|vlan|swp|bond|peerlink|eth)\d[\w/.:-]*(?![\w/])|(?<![\w-])peerlink(?:\.\d+)?"
                     r"(?![\w.])")
_ASN = re.compile(r"\b(router bgp|remote-as|autonomous-system|local-as)( |: )\d+(?:\.\d+)?\b")
_DESCRIPTION = re.compile(r"\b(description)( |: )\S.*$")
_HASH = re.compile(r"(?<![\w:])[0-9a-f]{12,}(?![\w:])")
# A list of one kind of value (`dlb-interface <if> , <if> , <if>`): as long as the device's port count, so one item
_RUN = re.compile(r"(<(\w+)>)(?:\s*,\s*<\2>)+")


def abstract_line(line: str, names: re.Pattern[str] | None) -> str:
    """A changed line with its device-specific values replaced by their kind.

    >>> abstract_line("+   neighbor 10.0.64.1 remote-as 65101", None)
    '+   neighbor <ipv4> remote-as <asn>'
    >>> abstract_line("-interface Ethernet1/7", None), abstract_line("+  mtu 9216", None)
    ('-interface <if>', '+  mtu 9216')
    >>> abstract_line("+  dlb-interface Ethernet1/1 , Ethernet1/2 , Ethernet1/3", None)
    '+  dlb-interface <if>...'
    """
    text = _DESCRIPTION.sub(r"\1\2<text>", line)
    text = _ASN.sub(r"\1\2<asn>", text)
    text = _MAC.sub("<mac>", text)
    text = _HASH.sub("<hash>", text)
    text = _IPV6.sub("<ipv6>", text)
    text = _IPV4.sub("<ipv4>", text)
    if names is not None:
        text = names.sub("<device>", text)
    return _RUN.sub(r"\1...", _IFNAME.sub("<if>", text))


def names_pattern(device_names: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for every device name, longest first, matched as whole words."""
    ordered = sorted(set(device_names), key=len, reverse=True)
    if not ordered:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, ordered)) + r")(?![\w-])")


def changed_lines(diff: str) -> list[str]:
    """The notes and the `+`/`-` lines of a unified diff, without its file headers.

    >>> changed_lines("# a note\\n--- x (running)\\n+++ x (candidate)\\n@@ -1 +1 @@\\n ctx\\n-a\\n+b")
    ['# a note', '-a', '+b']
    """
    out = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ", "@@")):
            continue
        if line.startswith(("#", "+", "-")):
            out.append(line)
    return out


@dataclass(frozen=True, slots=True)
class DiffGroup:
    kind: str
    members: tuple[str, ...]  # in the order the devices were given; the first is the group's example
    key: tuple[str, ...]  # the abstracted changed lines, sorted

    @property
    def example(self) -> str:
        return self.members[0]


def group_diffs(diffs: Sequence[tuple[str, str, str]], device_names: Iterable[str] = ()) -> list[DiffGroup]:
    """Groups of (name, kind, diff) whose diffs change alike, largest first (ties: first seen first). Devices with
    an empty diff are left out.

    >>> a = "--- a (running)\\n+++ a (candidate)\\n@@ -1 +1 @@\\n-hostname a\\n+hostname a\\n-  mtu 1500\\n+  mtu 9216"
    >>> b = a.replace("hostname a", "hostname b")
    >>> [(g.members, g.key) for g in group_diffs([("a", "eos", a), ("b", "eos", b)], ["a", "b"])]
    [(('a', 'b'), ('+  mtu 9216', '+hostname <device>', '-  mtu 1500', '-hostname <device>'))]
    """
    names = names_pattern(device_names)
    found: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for name, kind, diff in diffs:
        lines = changed_lines(diff)
        if not lines:
            continue
        key = tuple(sorted({abstract_line(line, names) for line in lines}))
        found.setdefault((kind, key), []).append(name)
    groups = [DiffGroup(kind, tuple(members), key) for (kind, key), members in found.items()]
    order = {id(g): i for i, g in enumerate(groups)}
    return sorted(groups, key=lambda g: (-len(g.members), order[id(g)]))
