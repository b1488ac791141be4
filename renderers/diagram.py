"""A fabric plan as a topology diagram: one standalone SVG 1.1 document, built as plain text.

Tiers are horizontal bands, top tier first: super-spines, spines, leaves, hosts. Large tiers are drawn as
groups (super-spine planes, spine pods, leaf pairs or rail groups, the hosts behind each leaf group) and links
as one edge per connected pair of groups, labelled with cable count and speed, so a 1,024-node, 8,192-NIC
fabric stays a few dozen boxes. Every group and edge carries data-* attributes (tier, member count, members,
cables) that tests and tools read back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction

from rocefab.platforms import UNITS, DiagramStyle, host_unit
from rocefab.renderers.plan import FabricPlan, Host, LinkKind, Role, Switch
from rocefab.renderers.summary import bandwidth

INDIVIDUAL_MAX = 16  # a tier of at most this many switches is drawn switch by switch
TOOLTIP_NAMES = 4  # names a group's tooltip lists before eliding the middle
_TIMES, _DASH = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}"  # spelled out: ruff flags the look-alike glyphs

_PLURAL = {"superspine": "super-spines", "spine": "spines", "leaf": "leaves", "host": "hosts"}
_MIXED = DiagramStyle("#eeeeee", "#555555", 5, "mixed platforms")
# css class: (fill, stroke, corner radius, legend text); switch platforms, then a group of several, then hosts
_STYLES: dict[str, tuple[str, str, int, str]] = {
    key: (s.fill, s.stroke, s.corner_radius, s.legend)
    for key, s in [*((u.key, u.diagram) for u in UNITS.values() if u.is_switch), ("mixed", _MIXED),
                   (host_unit().key, host_unit().diagram)]
}

# Geometry, in SVG user units (px).
_CHAR_W = 6.6  # average advance of an 11 px sans-serif character, to size boxes from their labels
_LABEL_CHAR_W = 6.0  # the same for the 10 px edge labels
_LINE_H = 14
_PAD = 8
_GAP_X = 24
_GAP_Y = 120  # between bands: room for edges and their labels
_GUTTER = 104  # left margin holding the tier names
_MARGIN = 20
_TOP = 72  # title and figure line


@dataclass(slots=True)
class _Group:
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
class _Edges:
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
    return names[0] if len(names) == 1 else f"{names[0]}{_DASH}{names[-1]}"


def _counted(n: int, tier: str) -> str:
    return f"{n:,} {tier}" if n == 1 else f"{n:,} {_PLURAL[tier]}"


def _models(members: list[Switch]) -> str:
    counts: dict[str, int] = {}
    for switch in members:
        counts[switch.model] = counts.get(switch.model, 0) + 1
    return " + ".join(f"{n} {_TIMES} {model}" for model, n in sorted(counts.items()))


def _switch_group(tier: str, members: list[Switch], *lines: str) -> _Group:
    """A box for `members` with these label lines; without lines, a single switch drawn on its own."""
    platforms = sorted({s.platform for s in members})
    style = platforms[0] if len(platforms) == 1 and platforms[0] in _STYLES else "mixed"
    names = [s.name for s in members]
    return _Group(tier, names, list(lines) or [names[0], members[0].model], style)


def _superspine_groups(plan: FabricPlan, supers: list[Switch], spines: list[Switch]) -> list[_Group]:
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
    return [_switch_group("superspine", m, f"plane {i}", _models(m)) for i, m in enumerate(planes)]


def _spine_groups(spines: list[Switch]) -> list[_Group]:
    if any(s.pod is not None for s in spines):
        return [_switch_group("spine", m, f"pod {m[0].pod} spines", _models(m))
                for m in _buckets(spines, lambda s: s.pod)]
    if len(spines) <= INDIVIDUAL_MAX:
        return [_switch_group("spine", [s]) for s in spines]
    return [_switch_group("spine", m, "spines", _models(m)) for m in _buckets(spines, lambda s: s.model)]


def _leaf_groups(leaves: list[Switch]) -> list[_Group]:
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
            lines = [f"{pod}rail {first.rail}: {_counted(len(members), 'leaf')}", _models(members), _span(names)]
        elif loose:
            lines = [f"{pod}{_counted(len(members), 'leaf')}", _models(members), _span(names)]
        else:
            lines = []
        groups.append(_switch_group("leaf", members, *lines))
    return groups


def _host_groups(plan: FabricPlan, leaf_of: dict[str, _Group]) -> list[_Group]:
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
            lines = [f"{len(hosts):,} nodes {_TIMES} {len(first.nics)} NICs", _span(names)]
        else:
            lines = [f"{_counted(len(hosts), 'host')}: {_span(names)}"]
            if first.bonds:
                bonds = "1 bond" if len(first.bonds) == 1 else f"{len(first.bonds)} bonds"
                lines.append(f"{bonds} of 2 {_TIMES} {first.bonds[0].speed_gbps}G")
        groups.append(_Group("host", names, lines, host_unit().key, anchors=anchors))
    return groups


def _group(plan: FabricPlan) -> list[list[_Group]]:
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


def _number(bands: list[list[_Group]]) -> None:
    for i, group in enumerate(g for band in bands for g in band):
        group.index = i


def _aggregate(plan: FabricPlan, bands: list[list[_Group]]) -> _Edges:
    """One pass over the links: cables per pair of groups and speed, and per link kind and speed."""
    group_of = {name: g for band in bands for g in band for name in g.members}
    edges = _Edges()
    for link in plan.links:
        kind = (link.kind.value, link.speed_gbps)
        edges.cables[kind] = edges.cables.get(kind, 0) + 1
        ga, gb = group_of[link.a.device], group_of[link.b.device]
        if ga is gb:
            ga.internal += 1
            continue
        pair = (ga.index, gb.index) if ga.index < gb.index else (gb.index, ga.index)
        speeds = edges.speeds.setdefault(pair, {})
        speeds[link.speed_gbps] = speeds.get(link.speed_gbps, 0) + 1
    return edges


# --- layout ------------------------------------------------------------------------------------------------


def _layout(bands: list[list[_Group]]) -> tuple[float, float, float]:
    """Place every group; returns box width, the height of each band's boxes and the width of the drawing."""
    groups = [g for band in bands for g in band]
    # The first line is bold, about a tenth wider.
    longest = max(len(line) * (1.1 if i == 0 else 1.0) for g in groups for i, line in enumerate(g.lines))
    box_w = max(150.0, math.ceil(longest * _CHAR_W) + 2 * _PAD)
    box_h = float(max(len(g.lines) for g in groups) * _LINE_H + 2 * _PAD)
    row_w = max(len(band) for band in bands) * (box_w + _GAP_X)
    right = float(_GUTTER + row_w)
    for row, band in enumerate(bands):
        y = _TOP + row * (box_h + _GAP_Y)
        if band[0].tier == "host" and row > 0:
            # Hosts sit under the leaf groups they are cabled to, pushed apart where they would overlap.
            x_of = {g.index: g.x for g in bands[row - 1]}
            wanted = sorted((sum(x_of[a] for a in g.anchors) / len(g.anchors) if g.anchors else right, g.index, g)
                            for g in band)
            left = -math.inf
            for x, _index, group in wanted:
                group.x, group.y = max(x, left + box_w + _GAP_X), y
                left = group.x
            right = max(right, left + box_w / 2 + _GAP_X / 2)
            continue
        # Fewer boxes than the widest band spread out, so a pod's spines sit over the pod's leaves.
        slot = row_w / len(band)
        for i, group in enumerate(band):
            group.x, group.y = _GUTTER + slot * (i + 0.5), y
    return box_w, box_h, right - _GAP_X / 2 + _MARGIN


# --- drawing -----------------------------------------------------------------------------------------------


def _num(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def escape(text: str) -> str:
    """Text as XML character data. (xml.sax.saxutils has this, but importing it pulls in urllib and http.)"""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _quoted(value: str) -> str:
    """A double-quoted XML attribute value."""
    return '"' + escape(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;") + '"'


def _attrs(**values: str | int | float) -> str:
    return "".join(f" {name.replace('_', '-')}={_quoted(_num(v) if isinstance(v, float) else str(v))}"
                   for name, v in values.items())


def _tooltip(group: _Group) -> str:
    names = group.members
    shown = names if len(names) <= TOOLTIP_NAMES + 1 else [*names[: TOOLTIP_NAMES - 1], "…", names[-1]]
    inside = f", {group.internal} peer links" if group.internal else ""
    return f"{', '.join(shown)} ({_counted(len(names), group.tier)}{inside})"


def _speeds(speeds: dict[int, int]) -> str:
    return " + ".join(f"{n:,} {_TIMES} {speed}G" for speed, n in sorted(speeds.items(), reverse=True))


def _draw_group(group: _Group, box_w: float, box_h: float) -> list[str]:
    radius = _STYLES[group.style][2]
    data = _attrs(id=f"g{group.index}", data_tier=group.tier, data_count=len(group.members),
                  data_platform=group.style, data_internal_cables=group.internal, data_members=" ".join(group.members))
    box = _attrs(x=group.x - box_w / 2, y=group.y, width=box_w, height=box_h, rx=radius)
    out = [
        f'<g class="group"{data}>',
        f"<title>{escape(_tooltip(group))}</title>",
        f'<rect class="{group.style}"{box}/>',
    ]
    top = group.y + (box_h - len(group.lines) * _LINE_H) / 2 + _LINE_H - 3
    for i, line in enumerate(group.lines):
        cls = "name" if i == 0 else "detail"
        out.append(f'<text class="{cls}"{_attrs(x=group.x, y=top + i * _LINE_H)}>{escape(line)}</text>')
    out.append("</g>")
    return out


def _label(x: float, y: float, text: str) -> list[str]:
    # A white plate under the label keeps it legible where other edges cross.
    w = len(text) * _LABEL_CHAR_W + 6
    return [f'<rect class="plate"{_attrs(x=x - w / 2, y=y - 10, width=w, height=13)}/>',
            f"<text{_attrs(x=x, y=y)}>{escape(text)}</text>"]


def _shared_labels(groups: list[_Group], edges: _Edges, bands: list[list[_Group]]) -> dict[tuple[str, str], str]:
    """Tier pairs whose edges cross as a mesh and all carry the same label: said once, beside the band gap."""
    band_size = {band[0].tier: len(band) for band in bands}
    labels: dict[tuple[str, str], set[str]] = {}
    count: dict[tuple[str, str], int] = {}
    for (i, j), speeds in edges.speeds.items():
        tiers = (groups[i].tier, groups[j].tier)
        labels.setdefault(tiers, set()).add(_speeds(speeds))
        count[tiers] = count.get(tiers, 0) + 1
    return {tiers: texts.pop() for tiers, texts in labels.items()
            if len(texts) == 1 and count[tiers] > max(band_size[tiers[0]], band_size[tiers[1]])}


def _draw_edges(groups: list[_Group], edges: _Edges, bands: list[list[_Group]], box_h: float) -> list[str]:
    band_size = {band[0].tier: len(band) for band in bands}
    shared = _shared_labels(groups, edges, bands)
    gbps = {pair: sum(s * n for s, n in speeds.items()) for pair, speeds in edges.speeds.items()}
    low, high = math.log(min(gbps.values(), default=1)), math.log(max(gbps.values(), default=1))
    out = []
    for (i, j), speeds in sorted(edges.speeds.items()):
        up, down = groups[i], groups[j]
        cables, label = sum(speeds.values()), _speeds(speeds)
        x1, y1, x2, y2 = up.x, up.y + box_h, down.x, down.y
        width = 1.0 + (5.0 * (math.log(gbps[i, j]) - low) / (high - low) if high > low else 1.0)
        out += [
            f'<g class="edge"{_attrs(data_from=f"g{i}", data_to=f"g{j}", data_cables=cables, data_gbps=gbps[i, j])}>',
            f"<title>{escape(f'{up.lines[0]} — {down.lines[0]}: {label}')}</title>",
            f"<line{_attrs(x1=x1, y1=y1, x2=x2, y2=y2, stroke_width=width)}/>",
        ]
        if (up.tier, down.tier) not in shared:
            # Edges fan out towards the band with more boxes; labels go there, where the lines are apart.
            t = 0.3 if band_size[up.tier] > band_size[down.tier] else 0.7
            out += _label(x1 + (x2 - x1) * t, y1 + (y2 - y1) * t + 4, label)
        out.append("</g>")
    tops = {band[0].tier: band[0].y for band in bands}
    for (upper, lower), label in sorted(shared.items()):
        middle = (tops[upper] + box_h + tops[lower]) / 2
        out.append(f'<text class="note"{_attrs(x=_MARGIN, y=middle - 2)}>every edge:</text>')
        out.append(f'<text class="note"{_attrs(x=_MARGIN, y=middle + 12)}>{escape(label)}</text>')
    return out


def _figures(plan: FabricPlan, bands: list[list[_Group]], edges: _Edges) -> tuple[str, list[str]]:
    """The figure line under the title and the legend's lines: tiers, bandwidth ratios, cables."""
    counts = {band[0].tier: sum(len(g.members) for g in band) for band in bands}
    nics = sum(n for (kind, _speed), n in edges.cables.items() if kind == LinkKind.HOST.value)
    pods = len({s.pod for s in plan.switches if s.pod is not None})
    rails = len({s.rail for s in plan.switches if s.rail is not None})
    figures = [f"{len(plan.hosts):,} hosts", f"{nics:,} NICs"]
    figures += [_counted(n, tier) for tier, n in counts.items() if tier != "host"]
    if pods > 1:
        figures.append(f"{pods} pods")
    if rails:
        figures.append(f"{rails} rails")
    by_tier: dict[str, list[Switch]] = {role.value: [] for role in Role}
    for switch in plan.switches:
        by_tier[switch.role.value].append(switch)
    legend = []
    for tier, switches in by_tier.items():
        if switches:
            # The tier's worst switch, as `rocefab plan` reports it.
            worst = max((bandwidth(s) for s in switches),
                        key=lambda b: Fraction(b.down_gbps, b.up_gbps) if b.up_gbps else Fraction(0))
            legend.append(f"{_PLURAL[tier]}: {_models(switches)} · down:up {worst.oversubscription}")
    cables = sorted(edges.cables.items(), key=lambda kv: (kv[0][0], -kv[0][1]))
    legend.append("cables: " + " · ".join(f"{n:,} {_TIMES} {speed}G {kind}" for (kind, speed), n in cables))
    return " · ".join(figures), legend


_CSS = """
text { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; font-size: 11px; fill: #222; }
.title { font-size: 18px; font-weight: bold; }
.figures, .tier { font-size: 12px; fill: #444; }
.tier { font-weight: bold; text-anchor: start; }
.group text { text-anchor: middle; }
.group .name { font-weight: bold; }
.edge line { stroke: #5a6b7d; stroke-opacity: 0.75; }
.edge text { font-size: 10px; text-anchor: middle; fill: #333; }
.edge .plate { fill: #fff; fill-opacity: 0.85; stroke: none; }
.note { font-size: 10px; fill: #333; }
.legend text { text-anchor: start; }
""" + "".join(f".{cls} {{ fill: {fill}; stroke: {stroke}; stroke-width: 1.5px; }}\n"
              for cls, (fill, stroke, _r, _t) in _STYLES.items()) + ".host { stroke-dasharray: 4 2; }\n"


def _legend(styles: list[str], lines: list[str], y: float) -> tuple[list[str], float]:
    """Platform swatches and figure lines from `y` down; returns the elements and the width they need."""
    out, x = [], float(_MARGIN)
    for style in styles:
        _fill, _stroke, radius, text = _STYLES[style]
        out.append(f'<rect class="{style}"{_attrs(x=x, y=y, width=28, height=16, rx=min(radius, 6))}/>')
        out.append(f"<text{_attrs(x=x + 34, y=y + 12)}>{escape(text)}</text>")
        x += 34 + len(text) * _CHAR_W + 24
    for i, line in enumerate(lines):
        out.append(f"<text{_attrs(x=_MARGIN, y=y + 40 + i * 18)}>{escape(line)}</text>")
    return out, max(x, _MARGIN + max(len(line) for line in lines) * _CHAR_W) + _MARGIN


def render_topology_svg(plan: FabricPlan) -> str:
    """The plan's topology as a standalone SVG document; the same plan always gives the same bytes."""
    bands = _group(plan)
    edges = _aggregate(plan, bands)
    box_w, box_h, width = _layout(bands)
    groups = [g for band in bands for g in band]
    figures, lines = _figures(plan, bands, edges)
    # The description is free text from the intent; XML 1.0 cannot carry most control characters.
    description = "".join(c if c.isprintable() else " " for c in plan.source.description).strip()
    title = plan.source.fabric + (f" — {description}" if description else "")
    legend_y = _TOP + len(bands) * (box_h + _GAP_Y) - _GAP_Y + 36
    legend, legend_w = _legend([s for s in _STYLES if any(g.style == s for g in groups)], lines, legend_y)
    # Title and figure line are drawn larger than labels: give them room as well.
    width = max(width, legend_w, 2 * _MARGIN + 1.6 * _CHAR_W * len(title), 2 * _MARGIN + 1.1 * _CHAR_W * len(figures))
    height = legend_y + 40 + len(lines) * 18 + _MARGIN

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1"'
        f'{_attrs(width=width, height=height, viewBox=f"0 0 {_num(width)} {_num(height)}")}>',
        f"<title>{escape(title)}</title>",
        f'<style type="text/css"><![CDATA[{_CSS}]]></style>',
        f'<rect{_attrs(x=0, y=0, width=width, height=height, fill="#ffffff")}/>',
        f'<text class="title"{_attrs(x=_MARGIN, y=30)}>{escape(title)}</text>',
        f'<text class="figures"{_attrs(x=_MARGIN, y=52)}>{escape(figures)}</text>',
    ]
    for band in bands:
        label = _PLURAL[band[0].tier]
        out.append(f'<text class="tier"{_attrs(x=_MARGIN, y=band[0].y + box_h / 2 + 4)}>{escape(label)}</text>')
    out += ['<g class="edges">', *_draw_edges(groups, edges, bands, box_h), "</g>", '<g class="groups">']
    for group in groups:
        out += _draw_group(group, box_w, box_h)
    out += ["</g>", '<g class="legend">', *legend, "</g>", "</svg>"]
    return "\n".join(out) + "\n"
