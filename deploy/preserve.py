"""Device-local sections a full replace must not wipe: accounts, management access, logging (each
platform unit lists the block headers it preserves).

rocefab's rendered config owns the fabric; the device keeps its own users and management plane. Before a
replace, the running config's top-level blocks that match these prefixes and that the candidate does not
configure are carried into the candidate, so a replace never locks the operator out and never needs the
secrets those blocks hold to pass through rocefab's files.

Once the intent's `services` section renders a kind of line (NTP servers, syslog hosts, ...), those lines are
rocefab's: the device's own lines of that kind are no longer carried, or an NTP server taken out of the intent
would stay on every switch. `RENDERED_FAMILIES` lists those kinds; their secrets (`tacacs-server key`,
`snmp-server community`, `ntp authentication-key`) are other kinds and stay on the device.

`replace_preview` (text configs) and `nvue_replace_preview` (NVUE documents) say beforehand which of the
running config's blocks a replace keeps and which it removes, for a dry run to show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rocefab.renderers.configtext import IndentedText, is_separator

# Header prefixes of the service lines rocefab renders (rocefab/platforms/*/services.py), EOS and NX-OS spellings.
RENDERED_FAMILIES = (
    "ntp server ", "logging host ", "logging vrf ", "logging server ", "ip name-server ", "ip domain-name ",
    "ip domain-list ", "dns domain ", "snmp-server location ", "snmp-server contact ", "tacacs-server host ",
    "radius-server host ", "banner motd",
)
_EOS_BANNERS = ("banner motd", "banner login")
_EOS_BANNER_END = "EOF"


def _blocks(text: str) -> Iterator[list[str]]:
    """The raw lines of each top-level block; a banner's text (EOS: up to `EOF`; NX-OS: up to its closing
    delimiter) belongs to its `banner` line, although it is not indented."""
    lines = IndentedText(text)
    block: list[str] = []
    for line in lines:
        if is_separator(line):
            continue
        if line.indent > 0 and block:
            block.append(line.raw)
            continue
        if block:
            yield block
        block = [line.raw]
        if line.text in _EOS_BANNERS:
            block += [*lines.take_until(_EOS_BANNER_END), _EOS_BANNER_END]
        elif line.text.startswith("banner motd "):
            delimiter = line.text[len("banner motd ")]
            if line.text[len("banner motd ") + 1:].count(delimiter) == 0:
                for more in lines:
                    block.append(more.raw)
                    if more.raw.rstrip().endswith(delimiter):
                        break
    if block:
        yield block


def top_level_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Split an indented config into (header line, raw lines of the block) pairs; `!` and `end` dropped.

    >>> top_level_blocks("banner motd\\nhi\\nEOF\\n!\\ninterface Ethernet1\\n   mtu 9214\\nend\\n")
    [('banner motd', ['banner motd', 'hi', 'EOF']), ('interface Ethernet1', ['interface Ethernet1', '   mtu 9214'])]
    """
    return [(block[0].strip(), block) for block in _blocks(text)]


def _family(header: str) -> str | None:
    return next((f for f in RENDERED_FAMILIES if header.startswith(f) or header == f.strip()), None)


def _carried(prefixes: tuple[str, ...], running: str, candidate: str) -> tuple[list[list[str]], list[str]]:
    """The running blocks a replace carries into the candidate, and the headers of those it removes."""
    headers = [header for header, _ in top_level_blocks(candidate)]
    configured = set(headers)
    rendered = {family for header in headers if (family := _family(header)) is not None}
    carried, removed = [], []
    for header, lines in top_level_blocks(running):
        if header in configured:
            continue
        if header.startswith(prefixes) and _family(header) not in rendered:
            carried.append(lines)
        else:
            removed.append(header)
    return carried, removed


def carry_preserved(prefixes: tuple[str, ...], running: str, candidate: str) -> str:
    """The candidate plus every preserved block (a header starting with one of `prefixes`, which the
    platform's unit lists) of the running config it does not already configure, unless the candidate
    renders lines of that block's kind itself (`RENDERED_FAMILIES`)."""
    carried, _ = _carried(prefixes, running, candidate)
    if not carried:
        return candidate
    body = candidate.rstrip("\n")
    tail = ""
    if body.endswith("\nend"):
        body, tail = body[: -len("\nend")], "\nend"
    return body + "\n" + "\n".join("\n".join(lines) for lines in carried) + tail + "\n"


def without_preserved(prefixes: tuple[str, ...], running: str) -> str:
    """The running config minus the blocks a replace carries over (accounts and secrets among them)."""
    kept = [lines for header, lines in top_level_blocks(running) if not header.startswith(prefixes)]
    return "\n".join(line for block in kept for line in block) + "\n"


@dataclass(frozen=True, slots=True)
class ReplacePreview:
    """What a full replace does to the running config's top-level blocks that the candidate does not have."""

    carried: tuple[str, ...]  # header lines (NVUE: paths) the replace keeps, device-local
    removed: tuple[str, ...]  # header lines (NVUE: paths) the replace deletes


def replace_preview(prefixes: tuple[str, ...], running: str, candidate: str) -> ReplacePreview:
    """For EOS and NX-OS (indented running-config text): the running blocks a replace with `candidate` keeps
    (`carry_preserved` carries them) and those it removes; blocks the candidate configures are in neither.

    >>> running = "username admin secret 5 x\\nntp server 192.0.2.9\\nvlan 99\\n   name old\\nend\\n"
    >>> replace_preview(("username ", "ntp "), running, "ntp server 192.0.2.1\\nend\\n")
    ReplacePreview(carried=('username admin secret ***',), removed=('ntp server 192.0.2.9', 'vlan 99'))
    """
    carried, removed = _carried(prefixes, running, candidate)
    return ReplacePreview(tuple(redacted(lines[0].strip()) for lines in carried), tuple(map(redacted, removed)))


# Words after which a config line holds a credential (EOS and NX-OS `username ... secret|password`, AAA `key`,
# SNMP `community`): what follows them is never printed.
SECRET_WORDS = frozenset({"secret", "password", "key", "community", "auth", "priv", "localizedkey"})


def redacted(header: str) -> str:
    """A block's header as printable: cut after the first word that introduces a credential.

    >>> redacted("username admin privilege 15 role network-admin secret sha512 $6$salt$hash")
    'username admin privilege 15 role network-admin secret ***'
    >>> redacted("tacacs-server key 7 070C285F4D06")
    'tacacs-server key ***'
    >>> redacted("interface Management1")
    'interface Management1'
    """
    words = header.split()
    for i, word in enumerate(words):
        if word.lower() in SECRET_WORDS and i + 1 < len(words):
            return " ".join([*words[: i + 1], "***"])
    return header


Tree = dict[str, Any]


def nvue_replace_preview(applied: Tree, candidate: Tree, carry: Callable[[Tree, Tree], Tree]) -> ReplacePreview:
    """For Cumulus (NVUE `set` trees, as `nv config show` and the rendered document hold them): what `nv config
    replace` of `candidate` after `carry` (the session's own merge, cumulus.session.carry_device_local) keeps
    of the applied config and what it removes, as paths two keys deep (`system aaa`, `interface swp9`).

    >>> keep = lambda applied, cand: {**cand, "system": {**cand.get("system", {}), "aaa": applied["system"]["aaa"]}}
    >>> applied = {"system": {"aaa": {}, "hostname": "x"}, "interface": {"swp1": {}, "swp9": {}}}
    >>> nvue_replace_preview(applied, {"system": {"hostname": "y"}, "interface": {"swp1": {}}}, keep)
    ReplacePreview(carried=('system aaa',), removed=('interface swp9',))
    """
    merged = carry(applied, candidate)
    carried: list[str] = []
    removed: list[str] = []
    for key, value in applied.items():
        if key not in candidate:
            (carried if key in merged else removed).append(key)
            continue
        ours, kept = candidate[key], merged.get(key)
        if not (isinstance(value, dict) and isinstance(ours, dict) and isinstance(kept, dict)):
            continue
        for child in value:
            if child not in ours:
                (carried if child in kept else removed).append(f"{key} {child}")
    return ReplacePreview(tuple(carried), tuple(removed))
