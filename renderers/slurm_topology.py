"""Slurm's `topology.conf` (TopologyPlugin=topology/tree) from the plan, so the scheduler places a job's nodes as
the cabling really joins them instead of from a hand-kept copy.

topology/tree wants a hierarchy: each line a switch and its children, nodes or switches, in Slurm's hostlist
expressions (`gpu[001-064]`, `block[01-16]`). A folded Clos is not a tree (every leaf reaches every spine), so the
tree names the scheduling units rather than single boxes:

- the lowest level is the set of leaves a node is cabled to: a ToR pair (named as the intent names the pair),
  a single leaf, or, in a rail-optimized fabric, a *rail block*: the leaves, one per rail, that serve the same
  nodes. A node's eight NICs sit on eight different switches, but the nodes of one block reach each other over
  one leaf hop on every rail, and nodes of different blocks cross the spines: that is the boundary Slurm should
  see, so a block is one Slurm switch (its leaves are listed in a comment above it);
- above that, a pod's spines (three-tier fabrics) as one switch per pod, and the top tier (spines of a two-tier
  fabric, super-spines of a three-tier one) as the root.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rocefab.renderers.plan import FabricPlan, Role

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


class SlurmTopologyError(ValueError):
    pass


def hostlist(names: Iterable[str]) -> str:
    """Slurm's hostlist expression of `names`: names that differ only in a trailing number of one width share a
    bracket of ranges (the width kept, so padding survives); the rest are listed as they are. Order: first seen.

    >>> hostlist(["gpu001", "gpu002", "gpu003", "gpu010", "rack1-a", "gpu9", "gpu10"])
    'gpu[001-003,010],rack1-a,gpu9,gpu10'
    >>> hostlist(["block1", "block2"]), hostlist(["spines"])
    ('block[1-2]', 'spines')
    """
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for name in names:
        match = _TRAILING_NUMBER.match(name)
        if match is None:
            order.append(name)
            continue
        key = (match[1], len(match[2]))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(match[2]))
    parts = []
    for item in order:
        if isinstance(item, str):
            parts.append(item)
            continue
        prefix, width = item
        numbers = sorted(set(groups[item]))
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        runs: list[tuple[int, int]] = []
        for number in numbers:
            if runs and number == runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], number)
            else:
                runs.append((number, number))
        ranges = [f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in runs]
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)


@dataclass(frozen=True, slots=True)
class SlurmSwitch:
    name: str
    nodes: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    comment: str = ""


def _check_name(name: str, what: str) -> str:
    if not _NAME.fullmatch(name):
        raise SlurmTopologyError(f"{what} {name!r} cannot be written in a Slurm hostlist expression")
    return name


def slurm_switches(plan: FabricPlan) -> list[SlurmSwitch]:
    """The tree, leaves' level first, root last."""
    switches = {s.name: s for s in plan.switches}
    blocks: dict[tuple[str, ...], list[str]] = {}
    order = {s.name: i for i, s in enumerate(plan.switches)}
    for host in plan.hosts:
        cabled = {m.switch for b in host.bonds for m in b.members} | {n.switch for n in host.nics}
        if not cabled:
            raise SlurmTopologyError(f"host {host.name} is cabled to no leaf")
        blocks.setdefault(tuple(sorted(cabled, key=order.__getitem__)), []).append(_check_name(host.name, "host"))
    rail = any(host.nics for host in plan.hosts)
    width = len(str(len(blocks)))
    lowest: list[tuple[SlurmSwitch, int | None]] = []
    for k, (leaves, nodes) in enumerate(blocks.items(), 1):
        pairs = {switches[leaf].pair for leaf in leaves}
        if len(leaves) == 1:
            name, comment = leaves[0], ""
        elif len(pairs) == 1 and None not in pairs:
            name, comment = str(pairs.pop()), f"leaf pair {' and '.join(leaves)}"
        else:
            name = f"block{k:0{width}d}"
            rails = sorted(r for leaf in leaves if (r := switches[leaf].rail) is not None)
            comment = f"rail block: {', '.join(leaves)}"
            if rail and rails:
                comment += f" (rails {rails[0]}-{rails[-1]})"
        leaf_pods = {switches[leaf].pod for leaf in leaves}
        lowest.append((SlurmSwitch(_check_name(name, "leaf group"), tuple(nodes), comment=comment),
                       leaf_pods.pop() if len(leaf_pods) == 1 else None))
    tree = [s for s, _ in lowest]
    tops = [s.name for s in plan.switches if s.role is (Role.SUPERSPINE if any(
        x.role is Role.SUPERSPINE for x in plan.switches) else Role.SPINE)]
    pods = sorted({pod for _, pod in lowest if pod is not None})
    if pods and len(pods) > 1:
        children = []
        for pod in pods:
            spines = [s.name for s in plan.switches if s.role is Role.SPINE and s.pod == pod]
            members = tuple(s.name for s, p in lowest if p == pod)
            children.append(SlurmSwitch(f"pod{pod}", switches=members, comment=f"pod {pod}: {hostlist(spines)}"))
        tree += children
        root_children: Sequence[str] = [c.name for c in children]
    else:
        root_children = [s.name for s in tree]
    root = "superspines" if any(s.role is Role.SUPERSPINE for s in plan.switches) else "spines"
    tree.append(SlurmSwitch(root, switches=tuple(root_children), comment=f"top tier: {hostlist(tops)}"))
    names = [s.name for s in tree]
    clash = sorted({n for n in names if names.count(n) > 1} | (set(names) & {h.name for h in plan.hosts}))
    if clash:
        raise SlurmTopologyError(f"Slurm switch name(s) {', '.join(clash)} taken twice (a leaf group, pod or tier "
                                 "named like another or like a node)")
    return tree


def topology_conf(plan: FabricPlan) -> str:
    """The file's text."""
    source = plan.source
    lines = [f"# Slurm topology.conf (TopologyPlugin=topology/tree) of fabric {source.fabric}, from "
             f"{source.intent_file} (sha256 {source.intent_sha256[:12]}), rocefab {source.rocefab_version}",
             "# A switch here is a scheduling unit: the leaves a node is cabled to (a ToR pair, a leaf, or a rail",
             "# block: one leaf per rail serving the same nodes), then the pods' spines, then the top tier. A node's",
             "# rail NICs are on different switches; the nodes of one rail block meet on each of them in one hop."]
    for switch in slurm_switches(plan):
        if switch.comment:
            lines.append(f"# {switch.comment}")
        words = [f"SwitchName={switch.name}"]
        if switch.switches:
            words.append(f"Switches={hostlist(switch.switches)}")
        if switch.nodes:
            words.append(f"Nodes={hostlist(switch.nodes)}")
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"
