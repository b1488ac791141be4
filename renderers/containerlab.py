"""A containerlab topology for a small lab cut of a planned fabric (which devices: renderers/lab_cut.py).

A laptop cannot run 192 switches, so `select_lab_cut` keeps a small, representative, connected subset of the
plan (a leaf pair or two rails' leaves, the spines and super-spines above them, two hosts) and
`render_containerlab` writes it as a containerlab topology file. Node kinds and interface names follow
containerlab's kind documentation:

- Arista EOS -> `arista_ceos` (cEOS-lab container). Interfaces are `ethN`; `ethX_Y` comes up as `EthernetX/Y`
  inside cEOS, so cEOS ports keep their physical numbering.
- Cisco NX-OS -> `cisco_n9kv` (Nexus 9000v VM packaged with vrnetlab). `ethN` is `Ethernet1/N` inside NX-OS.
- NVIDIA Cumulus Linux -> `nvidia_cumulusvx` (Cumulus VX VM packaged with vrnetlab), interfaces `swpN`. The old
  container-based `cvx` kind is unmaintained and Cumulus VX itself was discontinued after 5.12.1.
- GPU hosts -> `linux`, interfaces `eth1`, `eth2`, ... in the host's NIC order.

The lab gets no management addresses from the plan: containerlab assigns them on its own network. Each switch
node boots from its rendered config, rewritten for the cut (renderers/lab_startup.py): the mapped ports renamed
to the container's interfaces, the other front-panel ports left out. The rewritten configs are written beside
the topology under containerlab/configs/, and `startup-config:` paths are relative to the topology file, which
is how containerlab resolves them (core/config.go: ResolvePath against the topology file's folder).
"""

from __future__ import annotations

import json
import re
import textwrap

import yaml

from rocefab.platforms import UNITS, ContainerlabNode, host_unit, unit
from rocefab.renderers.lab_cut import MAX_PARALLEL_LINKS, LabCut, select_lab_cut
from rocefab.renderers.lab_startup import STARTUP, Renaming, rename_config
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import Endpoint, FabricPlan, LinkKind, Role, Switch

TOPOLOGY_FILE = "lab-cut.clab.yml"
STARTUP_FOLDER = "containerlab/configs"  # relative to the topology file's folder (the render output's top)

_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

_ROLE_TITLES: dict[Role, str] = {Role.SUPERSPINE: "super-spines", Role.SPINE: "spines", Role.LEAF: "leaves"}


def node_kind(switch: Switch) -> str:
    """The containerlab kind standing in for a switch's platform."""
    return unit(switch.platform).containerlab.kind


def container_interfaces(cut: LabCut) -> dict[Endpoint, str]:
    """The container interface each kept link endpoint uses.

    cEOS nodes keep physical numbering (`Ethernet61/1` -> `eth61_1`) when every kept port allows it, otherwise
    they count `eth1`, `eth2`, ...; NX-OSv nodes count `eth1`, ...; Cumulus VX nodes count `swp1`, ...; hosts count
    `eth1`, ... in their NIC order. Switch ports are counted in the order the plan lists them on the switch.
    """
    used: dict[str, list[str]] = {}
    for link in cut.links:
        for end in (link.a, link.b):
            ports = used.setdefault(end.device, [])
            if end.port not in ports:
                ports.append(end.port)

    mapping: dict[Endpoint, str] = {}
    for switch in cut.switches:
        listed = {p.name: i for i, p in enumerate(switch.ports)}
        ports = sorted(used.get(switch.name, []), key=lambda p: (listed.get(p, len(listed)), natural_key(p)))
        names = unit(switch.platform).containerlab.interfaces(ports)
        mapping.update({Endpoint(switch.name, p): n for p, n in zip(ports, names, strict=True)})
    hosts = host_unit().containerlab
    for host in cut.hosts:
        nic_order = [m.netdev for b in host.bonds for m in b.members] + [n.netdev for n in host.nics]
        listed = {netdev: i for i, netdev in enumerate(nic_order)}
        ports = sorted(used.get(host.name, []), key=lambda p: (listed.get(p, len(listed)), natural_key(p)))
        mapping.update({Endpoint(host.name, p): n for p, n in zip(ports, hosts.interfaces(ports), strict=True)})
    return mapping


def _scalar(text: str) -> str:
    """A YAML scalar for text: plain when YAML reads it back as the same string, double-quoted otherwise."""
    try:
        plain_ok = text.strip() == text and yaml.safe_load(text) == text
    except yaml.YAMLError:
        plain_ok = False
    return text if plain_ok else json.dumps(text)


def _images(cut: LabCut) -> dict[str, str]:
    images: dict[str, str] = {}
    for switch in cut.switches:
        node = unit(switch.platform).containerlab
        images.setdefault(node.kind, f"{node.image}:{switch.release}")
    if cut.hosts:
        hosts = host_unit().containerlab
        images[hosts.kind] = hosts.image
    return images


def _nodes_by_kind() -> dict[str, ContainerlabNode]:
    return {u.containerlab.kind: u.containerlab for u in UNITS.values()}


_WIDTH = 116


def _comment(text: str, first: str = "# ", rest: str = "# ") -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False)


def _header(plan: FabricPlan, cut: LabCut, images: dict[str, str]) -> list[str]:
    source = plan.source
    n_switch_links = sum(1 for link in cut.links if link.kind is not LinkKind.HOST)
    lines = _comment(
        f"Lab cut of fabric {source.fabric!r} for containerlab, generated by rocefab {source.rocefab_version} from "
        f"{source.intent_file}: a small, representative subset of the planned fabric, not the fabric. It holds"
    )
    for role in (Role.SUPERSPINE, Role.SPINE, Role.LEAF):
        names = [s.name for s in cut.switches if s.role is role]
        if names:
            lines += _comment(", ".join(names), f"#   {_ROLE_TITLES[role] + ':':14}", "#" + " " * 17)
    if cut.hosts:
        lines += _comment(", ".join(h.name for h in cut.hosts), f"#   {'hosts:':14}", "#" + " " * 17)
    lines += _comment(
        f"{len(cut.switches)} of {len(plan.switches)} switches, {len(cut.hosts)} of {len(plan.hosts)} hosts and "
        f"{len(cut.links)} of {len(plan.links)} links ({n_switch_links} between switches: at most "
        f"{MAX_PARALLEL_LINKS} parallel links between two switches are kept). Deploy with "
        "`containerlab deploy -t <this file>`."
    )
    lines += ["#"]
    lines += _comment(
        "Images: the tags under topology.kinds are placeholders (a switch tag names the release the plan "
        "targets); edit them to the images you have built or imported."
    )
    releases = {node_kind(s): s.release for s in cut.switches}
    nodes = _nodes_by_kind()
    for kind in images:
        node = nodes[kind]
        target = f"(plan target: {node.release_name} {releases[kind]}) " if kind in releases else ""
        lines += _comment(f"{target}{node.note}", f"#   {kind}: ", "#     ")
    lines += ["#"]
    switch_notes = [u.containerlab.interfaces_note for u in UNITS.values() if u.is_switch]
    lines += _comment(
        "Interfaces: a container has few ports, so each kept switch port maps to a container interface. "
        f"{', '.join(switch_notes)} and {host_unit().containerlab.interfaces_note}. The comment above "
        "each link names the physical ports it stands for; each node's rocefab-port-<interface> labels record "
        "the same mapping."
    )
    lines += ["#"]
    lines += _comment(
        "Management: containerlab assigns every node's management address on its own management network; the "
        "plan's management addresses appear only in the startup configs (below)."
    )
    lines += ["#"]
    lines += _comment(
        f"Startup configs: each switch boots from {STARTUP_FOLDER}/<switch>, its rendered config with the mapped "
        "ports renamed to the names the NOS gives the container's interfaces and every other front-panel port "
        "left out. Their management sections are the plan's, not containerlab's; edit them (or drop "
        "startup-config) if the lab must be reached over its management network."
    )
    for kind in images:
        if kind in STARTUP:
            lines += _comment(STARTUP[kind].note + ".", f"#   {kind}: ", "#     ")
    return lines


def _lab_name(fabric: str) -> str:
    # containerlab joins lab and node names with dashes, so the lab name avoids them.
    return "rocefab_" + re.sub(r"[^A-Za-z0-9_]", "_", fabric)


def startup_path(switch: Switch) -> str | None:
    """Where a switch's lab startup config goes, relative to the topology file; None if its kind takes none."""
    syntax = STARTUP.get(node_kind(switch))
    return None if syntax is None else f"{STARTUP_FOLDER}/{switch.name}{syntax.suffix}"


def lab_names(cut: LabCut, interfaces: dict[Endpoint, str]) -> dict[Endpoint, str]:
    """What each kept endpoint is called inside its node: the NOS's name for a switch's container interface, the
    container interface itself for a host."""
    kinds = {s.name: node_kind(s) for s in cut.switches}
    return {end: STARTUP[kinds[end.device]].nos_name(iface) if kinds.get(end.device) in STARTUP else iface
            for end, iface in interfaces.items()}


def startup_configs(plan: FabricPlan, cut: LabCut, interfaces: dict[Endpoint, str]) -> dict[str, str]:
    """Path -> text of each kept switch's startup config (see renderers/lab_startup.py)."""
    from rocefab.renderers.render import target_of  # here: render.py imports this module

    names = lab_names(cut, interfaces)
    configs: dict[str, str] = {}
    for switch in cut.switches:
        path = startup_path(switch)
        if path is None:
            continue
        syntax = STARTUP[node_kind(switch)]
        rendered = unit(switch.platform).files()(plan, switch, target_of(switch))
        text = next(f.content for f in rendered if f.kind == syntax.file_kind)
        renaming = Renaming(
            own={end.port: name for end, name in names.items() if end.device == switch.name},
            peers={f"{end.device} {end.port}": f"{end.device} {name}"
                   for end, name in names.items() if end.device != switch.name},
        )
        note = (f"lab cut ({TOPOLOGY_FILE}): ports renamed to the containerlab node's interfaces, other "
                "front-panel ports left out")
        configs[path] = rename_config(text, syntax, renaming, note)
    return configs


def render_containerlab_files(plan: FabricPlan) -> list[tuple[str, str, str]]:
    """The lab cut's files as (path, kind, text): the topology, then each switch's startup config."""
    cut = select_lab_cut(plan)
    configs = startup_configs(plan, cut, container_interfaces(cut))
    return [(TOPOLOGY_FILE, "containerlab-topology", render_containerlab(plan, cut)),
            *((path, "containerlab-startup-config", text) for path, text in configs.items())]


def render_containerlab(plan: FabricPlan, cut: LabCut | None = None) -> str:
    """A containerlab topology file (YAML) for the lab cut of the plan (`select_lab_cut(plan)` unless the caller
    has it); the same plan gives the same text."""
    cut = select_lab_cut(plan) if cut is None else cut
    for name in cut.device_names:
        if not _NODE_NAME.fullmatch(name):
            raise ValueError(f"{name!r} cannot be a containerlab node name")
    interfaces = container_interfaces(cut)
    images = _images(cut)

    lines = _header(plan, cut, images)
    lines += [f"name: {_scalar(_lab_name(plan.source.fabric))}", "", "topology:", "  kinds:"]
    for kind, image in images.items():
        lines += [f"    {kind}:", f"      image: {_scalar(image)}"]

    by_device: dict[str, list[tuple[str, str]]] = {}
    for end, iface in interfaces.items():
        by_device.setdefault(end.device, []).append((iface, end.port))

    lines += ["", "  nodes:"]
    for switch in cut.switches:
        labels = [
            ("rocefab-role", switch.role.value),
            ("rocefab-platform", switch.platform),
            ("rocefab-model", switch.model),
        ]
        lines += _node(switch.name, node_kind(switch), switch.role.value, labels, by_device.get(switch.name, []),
                       startup_path(switch))
    hosts = host_unit()
    for host in cut.hosts:
        lines += _node(host.name, hosts.containerlab.kind, hosts.key, [("rocefab-role", hosts.key)],
                       by_device.get(host.name, []))

    lines += ["", "  links:"]
    for link in cut.links:
        a, b = interfaces[link.a], interfaces[link.b]
        ends = f"{link.a.device} {link.a.port} <-> {link.b.device} {link.b.port}"
        lines.append(f"    # {ends} ({link.kind.value}, {link.speed_gbps}G)")
        lines.append(f"    - endpoints: {json.dumps([f'{link.a.device}:{a}', f'{link.b.device}:{b}'])}")
    return "\n".join(lines) + "\n"


def _node(name: str, kind: str, group: str, labels: list[tuple[str, str]], ports: list[tuple[str, str]],
          startup: str | None = None) -> list[str]:
    lines = [f"    {_scalar(name)}:", f"      kind: {kind}", f"      group: {_scalar(group)}"]
    lines += [f"      startup-config: {_scalar(startup)}"] if startup is not None else []
    lines += ["      labels:"]
    lines += [f"        {key}: {_scalar(value)}" for key, value in labels]
    lines += [f"        {_scalar('rocefab-port-' + iface)}: {_scalar(port)}" for iface, port in ports]
    return lines
