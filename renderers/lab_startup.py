"""A switch's rendered config rewritten for its node in the containerlab lab cut: the fabric ports the cut maps
carry the names the containerized NOS gives its container interfaces, the other front-panel ports are left out.

Why left out rather than kept: a container has only the interfaces its links give it, and a kept port would
collide with a renamed one (on NX-OS 9000v the cut's third port becomes Ethernet1/3, which the physical config
already uses for another cable). Renaming is one pass over exact names, so `Ethernet1/1` never touches
`Ethernet1/10` or `Ethernet1/1/2`, and two ports trading names cannot chain.

CLI configs (EOS, NX-OS) are rewritten line by line: what follows `description` is free text naming the peer
(`spine1 Ethernet1/9`), renamed with the peer's lab name; the rest of a line names this switch's own interfaces.
A line naming a left-out port goes, with the lines indented under it (its `interface` stanza, say). NVUE YAML is
rewritten as the document tree: interface keys renamed or removed, descriptions as above.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from rocefab.renderers.record import record
from rocefab.renderers.yamltext import dump_block

# The configs rocefab itself rendered, read back as safe_load reads them (YAML 1.1 scalars, as the renaming
# was written against), with libyaml where PyYAML has it: a 4,096-node fabric's spine config holds
# thousands of keys, and the pure-Python parser takes seconds per file.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_EDGE = r"(?<![\w/.-])", r"(?![\w/.-])"  # a name stands alone: not part of Ethernet1/10, swp1s0 or 1/1.100


@record
class StartupSyntax:
    """How one containerlab kind takes a rendered config as its startup config."""

    file_kind: str  # the rendered file that becomes the startup config (UnitFile.kind)
    suffix: str
    tree: bool  # a YAML document (NVUE) rather than CLI lines
    physical: re.Pattern[str]  # the NOS's front-panel port names
    nos_name: Callable[[str], str]  # container interface -> the name the NOS inside gives it
    drop_line: re.Pattern[str] | None  # CLI lines that cannot apply inside the container
    note: str  # how the kind loads it, for the topology's header


def _ceos_name(iface: str) -> str:
    # containerlab docs, manual/kinds/ceos.md: eth1 is the first data interface (Ethernet1), and underscores
    # stand for slashes, so eth1_1 comes up as Ethernet1/1 and eth2_1_1 as Ethernet2/1/1.
    return "Ethernet" + iface.removeprefix("eth").replace("_", "/")


def _n9kv_name(iface: str) -> str:
    # containerlab docs, manual/kinds/vr-n9kv.md ("Interface naming"): eth1 maps to the VM's Ethernet1/1,
    # eth2 to Ethernet1/2, and so on.
    return "Ethernet1/" + iface.removeprefix("eth")


_ETHERNET = re.compile(r"Ethernet\d+(?:/\d+)*")

# Keyed by containerlab kind (rocefab/platforms/<platform>: ContainerlabNode.kind).
STARTUP: dict[str, StartupSyntax] = {
    # manual/kinds/ceos.md, "User defined config": the file is copied to the node's flash/startup-config and
    # cEOS boots from it, as a whole configuration (containerlab adds nothing, not even its management address).
    "arista_ceos": StartupSyntax("eos-config", ".cfg", False, _ETHERNET, _ceos_name, None,
                                 "cEOS boots from it as its whole startup-config"),
    # manual/kinds/vr-n9kv.md, "Startup configuration": copied to /config/startup-config.cfg and applied once the
    # VM is up, on top of its default configuration. The VM's ports are Ethernet1/N unbroken, so a breakout line
    # would rename the very ports the links use.
    "cisco_n9kv": StartupSyntax("nxos-config", ".cfg", False, _ETHERNET, _n9kv_name,
                                re.compile(r"interface breakout "),
                                "Nexus 9000v applies it after boot, on top of its default configuration"),
    # manual/kinds/nvidia_cumulusvx.md: swpN in the topology is swpN inside. containerlab's VM nodes copy a
    # startup-config to /config (nodes/vr_node.go); srl-labs/vrnetlab#521 made the Cumulus VX image apply an NVUE
    # YAML there (nv config patch, then apply), so the file is the NVUE document. Images older than that ignore it.
    "nvidia_cumulusvx": StartupSyntax("nvue-yaml", ".nvue.yaml", True, re.compile(r"swp\d+(?:s\d+)?"),
                                      lambda iface: iface, None,
                                      "Cumulus VX applies the NVUE document with nv config patch (vrnetlab "
                                      "images with srl-labs/vrnetlab#521; older ones boot unconfigured)"),
}


@record
class Renaming:
    """What changes in one switch's config: its own ports (renamed or left out) and the peers it names."""

    own: Mapping[str, str]  # this switch's mapped ports -> their names inside the container
    peers: Mapping[str, str]  # "device port" of every other kept endpoint -> "device lab-name"

    def words(self, names: set[str]) -> re.Pattern[str] | None:
        if not names:
            return None
        alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        return re.compile(f"{_EDGE[0]}(?:{alternatives}){_EDGE[1]}")


def _free_text(text: str, renaming: Renaming, peers: re.Pattern[str] | None) -> str:
    return text if peers is None else peers.sub(lambda m: renaming.peers[m.group()], text)


def _left_out(text: str, syntax: StartupSyntax, renaming: Renaming) -> set[str]:
    """Front-panel ports the config names that the cut does not map."""
    return {m.group() for m in re.finditer(f"{_EDGE[0]}(?:{syntax.physical.pattern}){_EDGE[1]}", text)
            } - set(renaming.own)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


_LIST = re.compile(r"^(\s*\S+(?: \S+)*? )(\S+(?:\s*,\s*\S+)+)(\s*)$")


def _kept_items(line: str, gone: re.Pattern[str]) -> str:
    """A line ending in a comma-separated list, without the items the cut leaves out; any other line, or a list
    left empty, unchanged (the caller then drops it).

    >>> _kept_items("  dlb-interface Ethernet1/1 , Ethernet1/2 , Ethernet1/9\\n", re.compile(r"Ethernet1/9\\b"))
    '  dlb-interface Ethernet1/1 , Ethernet1/2\\n'
    """
    found = _LIST.match(line)
    if found is None:
        return line
    separator = " , " if " , " in found.group(2) else ","
    items = [item for item in re.split(r"\s*,\s*", found.group(2)) if not gone.fullmatch(item)]
    return f"{found.group(1)}{separator.join(items)}{found.group(3)}" if items else line


def _cli(text: str, syntax: StartupSyntax, renaming: Renaming) -> str:
    own = renaming.words(set(renaming.own))
    gone = renaming.words(_left_out(text, syntax, renaming))
    peers = renaming.words(set(renaming.peers))
    kept: list[str] = []
    skip_below: int | None = None  # dropping the lines indented deeper than this
    for line in text.splitlines(keepends=True):
        if skip_below is not None:
            if line.strip() and _indent(line) > skip_below:
                continue
            skip_below = None
        head, sep, tail = line.partition(" description ")
        if line.lstrip().startswith("description "):
            head, sep, tail = "", "", line
        if gone is not None and gone.search(head):
            head = _kept_items(head, gone)  # a list of ports (NX-OS dlb-interface) keeps those the cut maps
        if (gone is not None and gone.search(head)) or (syntax.drop_line and syntax.drop_line.match(line.strip())):
            skip_below = _indent(line)
            continue
        renamed = own.sub(lambda m: renaming.own[m.group()], head) if own is not None else head
        kept.append(renamed + sep + _free_text(tail, renaming, peers))
    return "".join(kept)


def _tree(node: Any, renaming: Renaming, gone: set[str], peers: re.Pattern[str] | None) -> Any:
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            if key in gone:
                continue
            new_key = renaming.own.get(key, key) if isinstance(key, str) else key
            if key == "description" and isinstance(value, str):
                out[new_key] = _free_text(value, renaming, peers)
            else:
                out[new_key] = _tree(value, renaming, gone, peers)
        return out
    if isinstance(node, list):
        return [_tree(item, renaming, gone, peers) for item in node]
    if isinstance(node, str):
        return renaming.own.get(node, node)
    return node


def _nvue(text: str, syntax: StartupSyntax, renaming: Renaming) -> str:
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    document = yaml.load(text, Loader=_LOADER)
    gone = _left_out(text, syntax, renaming)
    return header + dump_block(_tree(document, renaming, gone, renaming.words(set(renaming.peers))))


def rename_config(text: str, syntax: StartupSyntax, renaming: Renaming, note: str) -> str:
    """The rendered config `text` for the lab: renamed, the unmapped ports left out, `note` added to its header
    (after the rendered header comment, in its comment style)."""
    body = _nvue(text, syntax, renaming) if syntax.tree else _cli(text, syntax, renaming)
    lines = body.splitlines(keepends=True)
    marker = re.match(r"[!#] ?", lines[0]) if lines else None
    prefix = marker.group() if marker else ("# " if syntax.tree else "! ")
    at = next((i for i, line in enumerate(lines) if not line.startswith(prefix.strip())), len(lines))
    if at and lines[at - 1].strip() == prefix.strip():  # keep the header's closing blank comment last
        at -= 1
    return "".join([*lines[:at], f"{prefix}{note}\n", *lines[at:]])
