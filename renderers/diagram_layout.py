"""The topology diagram's groups and geometry: which switches and hosts share a box, the edges between boxes
with their cable counts and speeds, and where every band and box goes. renderers/diagram.py draws them."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from rocefab.platforms import UNITS, DiagramStyle, host_unit
from rocefab.renderers.plan import A_DEVICE, B_DEVICE, LINK_KIND, LINK_SPEED, FabricPlan, Host, LinkKind, Role, Switch

INDIVIDUAL_MAX = 16  # a tier of at most this many switches is drawn switch by switch
TIMES, DASH = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}"  # spelled out: ruff flags the look-alike glyphs

PLURAL = {"superspine": "super-spines", "spine": "spines", "leaf": "leaves", "host": "hosts"}
MIXED = DiagramStyle("#eeeeee", "#555555", 5, "mixed platforms")
# css class: (fill, stroke, corner radius, legend text); switch platforms, then a group of several, then hosts
STYLES: dict[str, tuple[str, str, int, str]] = {
    key: (s.fill, s.stroke, s.corner_radius, s.legend)
    for key, s in [*((u.key, u.diagram) for u in UNITS.values() if u.is_switch), ("mixed", MIXED),
                   (host_unit().key, host_unit().diagram)]
}

# Geometry, in SVG user units (px).
CHAR_W = 6.6  # average advance of an 11 px sans-serif character, to size boxes from their labels
LINE_H = 14
PAD = 8
GAP_X = 24
GAP_Y = 120  # between bands: room for edges and their labels
GUTTER = 104  # left margin holding the tier names
MARGIN = 20
TOP = 72  # title and figure line


@dataclass(slots=True)
class Group:
    tier: str
    members: list[str]
    lines: list[str]
    style: str
    index: int = 0  # position in top-to-bottom, left-to-right order; also its id
    anchors: tuple[int, ...] = ()  # hosts: the leaf groups they are cabled to
    internal: int = 0  # links with both ends inside the group: peer links
    x: float = 0.0  # centre
    y: float = 0.0  # top


@dataclass(slots=True)
class Edges:
    speeds: dict[tuple[int, int], dict[int, int]] = field(default_factory=dict)  # (upper, lower) -> speed -> cables
    cables: dict[tuple[str, int], int] = field(default_factory=dict)  # (link kind, speed) -> cables


# --- grouping ----------------------------------------------------------------------------------------------


def _buckets(switches: list[Switch], key: Callable[[Switch], Hashable]) -> list[list[Switch]]:
    """Switches split by key, in plan order (the planner's order: pods, planes and rails in sequence)."""
    out: dict[Hashable, list[Switch]] = {}
    for switch in switches:
        out.setdefault(key(switch), []).append(switch)
    return list(out.values())


def _span(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]}{DASH}{names[-1]}"


def counted(n: int, tier: str) -> str:
    return f"{n:,} {tier}" if n == 1 else f"{n:,} {PLURAL[tier]}"


def models_label(members: list[Switch]) -> str:
    counts: dict[str, int] = {}
    for switch in members:
        counts[switch.model] = counts.get(switch.model, 0) + 1
    return " + ".join(f"{n} {TIMES} {model}" for model, n in sorted(counts.items()))


def _switch_group(tier: str, members: list[Switch], *lines: str) -> Group:
    """A box for `members` with these label lines; without lines, a single switch drawn on its own."""
    platforms = sorted({s.platform for s in members})
    style = platforms[0] if len(platforms) == 1 and platforms[0] in STYLES else "mixed"
    names = [s.name for s in members]
    return Group(tier, names, list(lines) or [names[0], members[0].model], style)


def _superspine_groups(plan: FabricPlan, supers: list[Switch], spines: list[Switch]) -> list[Group]:
    if len(supers) <= INDIVIDUAL_MAX:
        return [_switch_group("superspine", [s]) for s in supers]
    # Spine k of every pod reaches super-spine plane k, so super-spines reached from the same spine
    # positions form a plane.
    position: dict[str, int] = {}
    per_pod: dict[int | None, int] = {}
    for spine in spines:
        position[spine.name] = per_pod.get(spine.pod, 0)
        per_pod[spine.pod] = position[spine.name] + 1
    reached: dict[str, set[int]] = {s.name: set() for s in supers}
    for link in plan.links:
        a, b = link.a.device, link.b.device
        if a in position and b in reached:
            reached[b].add(position[a])
        elif b in position and a in reached:
            reached[a].add(position[b])
    planes = _buckets(supers, lambda s: tuple(sorted(reached[s.name])))
    return [_switch_group("superspine", m, f"plane {i}", models_label(m)) for i, m in enumerate(planes)]


def _spine_groups(spines: list[Switch]) -> list[Group]:
    if any(s.pod is not None for s in spines):
        return [_switch_group("spine", m, f"pod {m[0].pod} spines", models_label(m))
                for m in _buckets(spines, lambda s: s.pod)]
    if len(spines) <= INDIVIDUAL_MAX:
        return [_switch_group("spine", [s]) for s in spines]
    return [_switch_group("spine", m, "spines", models_label(m)) for m in _buckets(spines, lambda s: s.model)]


def _leaf_groups(leaves: list[Switch]) -> list[Group]:
    loose = sum(1 for s in leaves if s.pair is None and s.rail is None) > INDIVIDUAL_MAX
    pods = any(s.pod is not None for s in leaves)

    def key(s: Switch) -> Hashable:
        if s.pair is not None:
            return ("pair", s.pair)
        if s.rail is not None:
            return ("rail", s.pod, s.rail)
        return ("pod", s.pod, s.model) if loose else ("leaf", s.name)

    groups = []
    for members in _buckets(leaves, key):
        first, names = members[0], [s.name for s in members]
        pod = f"pod {first.pod} · " if pods else ""
        if first.pair is not None:
            models = ", ".join(sorted({s.model for s in members}))
            lines = [f"{pod}{first.pair}", " · ".join(names), models]
        elif first.rail is not None:
            lines = [f"{pod}rail {first.rail}: {counted(len(members), 'leaf')}", models_label(members), _span(names)]
        elif loose:
            lines = [f"{pod}{counted(len(members), 'leaf')}", models_label(members), _span(names)]
        else:
            lines = []
        groups.append(_switch_group("leaf", members, *lines))
    return groups


def _host_groups(plan: FabricPlan, leaf_of: dict[str, Group]) -> list[Group]:
    """Hosts cabled to the same set of leaf groups share a box: a ToR pair's hosts, a rail pod's nodes."""
    attached: dict[str, set[int]] = {h.name: set() for h in plan.hosts}
    for link in plan.links:
        if link.kind is LinkKind.HOST:  # `a` is the switch side
            attached[link.b.device].add(leaf_of[link.a.device].index)
    buckets: dict[tuple[int, ...], list[Host]] = {}
    for host in plan.hosts:
        buckets.setdefault(tuple(sorted(attached[host.name])), []).append(host)
    groups = []
    for anchors, hosts in sorted(buckets.items()):
        names, first = [h.name for h in hosts], hosts[0]
        if first.nics:
            lines = [f"{len(hosts):,} nodes {TIMES} {len(first.nics)} NICs", _span(names)]
        else:
            lines = [f"{counted(len(hosts), 'host')}: {_span(names)}"]
            if first.bonds:
                bonds = "1 bond" if len(first.bonds) == 1 else f"{len(first.bonds)} bonds"
                lines.append(f"{bonds} of 2 {TIMES} {first.bonds[0].speed_gbps}G")
        groups.append(Group("host", names, lines, host_unit().key, anchors=anchors))
    return groups


def bands_of(plan: FabricPlan) -> list[list[Group]]:
    """Bands of groups, top tier first; every group numbered in drawing order."""
    by_role: dict[Role, list[Switch]] = {role: [] for role in Role}
    for switch in plan.switches:
        by_role[switch.role].append(switch)
    bands = [
        _superspine_groups(plan, by_role[Role.SUPERSPINE], by_role[Role.SPINE]) if by_role[Role.SUPERSPINE] else [],
        _spine_groups(by_role[Role.SPINE]) if by_role[Role.SPINE] else [],
        _leaf_groups(by_role[Role.LEAF]) if by_role[Role.LEAF] else [],
    ]
    _number(bands)
    leaf_of = {name: g for g in bands[2] for name in g.members}
    bands.append(_host_groups(plan, leaf_of))
    _number(bands)
    return [band for band in bands if band]


def _number(bands: list[list[Group]]) -> None:
    for i, group in enumerate(g for band in bands for g in band):
        group.index = i


def aggregate_edges(plan: FabricPlan, bands: list[list[Group]]) -> Edges:
    """Cables per pair of groups and speed, and per link kind and speed: counted by C loops over the links (a
    98,304-GPU fabric has 294,912), then added up per group, in the order the links first name each."""
    groups = [g for band in bands for g in band]
    index_of = {name: g.index for g in groups for name in g.members}
    by_index = {g.index: g for g in groups}
    links = plan.links
    speeds = list(map(LINK_SPEED, links))
    edges = Edges()
    for (kind, speed), n in Counter(zip(map(LINK_KIND, links), speeds, strict=True)).items():
        edges.cables[kind.value, speed] = n
    ends = zip(map(index_of.__getitem__, map(A_DEVICE, links)), map(index_of.__getitem__, map(B_DEVICE, links)),
               speeds, strict=True)
    for (a, b, speed), n in Counter(ends).items():
        if a == b:
            by_index[a].internal += n
            continue
        cables = edges.speeds.setdefault((a, b) if a < b else (b, a), {})
        cables[speed] = cables.get(speed, 0) + n
    return edges



# --- layout ------------------------------------------------------------------------------------------------


def layout(bands: list[list[Group]]) -> tuple[float, float, float]:
    """Place every group; returns box width, the height of each band's boxes and the width of the drawing."""
    groups = [g for band in bands for g in band]
    # The first line is bold, about a tenth wider.
    longest = max(len(line) * (1.1 if i == 0 else 1.0) for g in groups for i, line in enumerate(g.lines))
    box_w = max(150.0, math.ceil(longest * CHAR_W) + 2 * PAD)
    box_h = float(max(len(g.lines) for g in groups) * LINE_H + 2 * PAD)
    row_w = max(len(band) for band in bands) * (box_w + GAP_X)
    right = float(GUTTER + row_w)
    for row, band in enumerate(bands):
        y = TOP + row * (box_h + GAP_Y)
        if band[0].tier == "host" and row > 0:
            # Hosts sit under the leaf groups they are cabled to, pushed apart where they would overlap.
            x_of = {g.index: g.x for g in bands[row - 1]}
            wanted = sorted((sum(x_of[a] for a in g.anchors) / len(g.anchors) if g.anchors else right, g.index, g)
                            for g in band)
            left = -math.inf
            for x, _index, group in wanted:
                group.x, group.y = max(x, left + box_w + GAP_X), y
                left = group.x
            right = max(right, left + box_w / 2 + GAP_X / 2)
            continue
        # Fewer boxes than the widest band spread out, so a pod's spines sit over the pod's leaves.
        slot = row_w / len(band)
        for i, group in enumerate(band):
            group.x, group.y = GUTTER + slot * (i + 0.5), y
    return box_w, box_h, right - GAP_X / 2 + MARGIN


# --- drawing -----------------------------------------------------------------------------------------------
