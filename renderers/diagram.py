"""A fabric plan as a topology diagram: one standalone SVG 1.1 document, built as plain text.

Tiers are horizontal bands, top tier first: super-spines, spines, leaves, hosts. Large tiers are drawn as
groups (super-spine planes, spine pods, leaf pairs or rail groups, the hosts behind each leaf group) and links
as one edge per connected pair of groups, labelled with cable count and speed, so a 1,024-node, 8,192-NIC
fabric stays a few dozen boxes. Every group and edge carries data-* attributes (tier, member count, members,
cables) that tests and tools read back.
"""

from __future__ import annotations

import math
from fractions import Fraction

from rocefab.renderers.diagram_layout import (
    CHAR_W,
    GAP_Y,
    LINE_H,
    MARGIN,
    PLURAL,
    STYLES,
    TIMES,
    TOP,
    Edges,
    Group,
    aggregate_edges,
    bands_of,
    counted,
    layout,
    models_label,
)
from rocefab.renderers.plan import FabricPlan, LinkKind, Role, Switch
from rocefab.renderers.summary import bandwidth

TOOLTIP_NAMES = 4  # names a group's tooltip lists before eliding the middle
_LABEL_CHAR_W = 6.0  # the same for the 10 px edge labels


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


def _tooltip(group: Group) -> str:
    names = group.members
    shown = names if len(names) <= TOOLTIP_NAMES + 1 else [*names[: TOOLTIP_NAMES - 1], "…", names[-1]]
    inside = f", {group.internal} peer links" if group.internal else ""
    return f"{', '.join(shown)} ({counted(len(names), group.tier)}{inside})"


def _speeds(speeds: dict[int, int]) -> str:
    return " + ".join(f"{n:,} {TIMES} {speed}G" for speed, n in sorted(speeds.items(), reverse=True))


def _draw_group(group: Group, box_w: float, box_h: float) -> list[str]:
    radius = STYLES[group.style][2]
    data = _attrs(id=f"g{group.index}", data_tier=group.tier, data_count=len(group.members),
                  data_platform=group.style, data_internal_cables=group.internal, data_members=" ".join(group.members))
    box = _attrs(x=group.x - box_w / 2, y=group.y, width=box_w, height=box_h, rx=radius)
    out = [
        f'<g class="group"{data}>',
        f"<title>{escape(_tooltip(group))}</title>",
        f'<rect class="{group.style}"{box}/>',
    ]
    top = group.y + (box_h - len(group.lines) * LINE_H) / 2 + LINE_H - 3
    for i, line in enumerate(group.lines):
        cls = "name" if i == 0 else "detail"
        out.append(f'<text class="{cls}"{_attrs(x=group.x, y=top + i * LINE_H)}>{escape(line)}</text>')
    out.append("</g>")
    return out


def _label(x: float, y: float, text: str) -> list[str]:
    # A white plate under the label keeps it legible where other edges cross.
    w = len(text) * _LABEL_CHAR_W + 6
    return [f'<rect class="plate"{_attrs(x=x - w / 2, y=y - 10, width=w, height=13)}/>',
            f"<text{_attrs(x=x, y=y)}>{escape(text)}</text>"]


def _shared_labels(groups: list[Group], edges: Edges, bands: list[list[Group]]) -> dict[tuple[str, str], str]:
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


def _draw_edges(groups: list[Group], edges: Edges, bands: list[list[Group]], box_h: float) -> list[str]:
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
        out.append(f'<text class="note"{_attrs(x=MARGIN, y=middle - 2)}>every edge:</text>')
        out.append(f'<text class="note"{_attrs(x=MARGIN, y=middle + 12)}>{escape(label)}</text>')
    return out


def _figures(plan: FabricPlan, bands: list[list[Group]], edges: Edges) -> tuple[str, list[str]]:
    """The figure line under the title and the legend's lines: tiers, bandwidth ratios, cables."""
    counts = {band[0].tier: sum(len(g.members) for g in band) for band in bands}
    nics = sum(n for (kind, _speed), n in edges.cables.items() if kind == LinkKind.HOST.value)
    pods = len({s.pod for s in plan.switches if s.pod is not None})
    rails = len({s.rail for s in plan.switches if s.rail is not None})
    figures = [f"{len(plan.hosts):,} hosts", f"{nics:,} NICs"]
    figures += [counted(n, tier) for tier, n in counts.items() if tier != "host"]
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
            legend.append(f"{PLURAL[tier]}: {models_label(switches)} · down:up {worst.oversubscription}")
    cables = sorted(edges.cables.items(), key=lambda kv: (kv[0][0], -kv[0][1]))
    legend.append("cables: " + " · ".join(f"{n:,} {TIMES} {speed}G {kind}" for (kind, speed), n in cables))
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
              for cls, (fill, stroke, _r, _t) in STYLES.items()) + ".host { stroke-dasharray: 4 2; }\n"


def _legend(styles: list[str], lines: list[str], y: float) -> tuple[list[str], float]:
    """Platform swatches and figure lines from `y` down; returns the elements and the width they need."""
    out, x = [], float(MARGIN)
    for style in styles:
        _fill, _stroke, radius, text = STYLES[style]
        out.append(f'<rect class="{style}"{_attrs(x=x, y=y, width=28, height=16, rx=min(radius, 6))}/>')
        out.append(f"<text{_attrs(x=x + 34, y=y + 12)}>{escape(text)}</text>")
        x += 34 + len(text) * CHAR_W + 24
    for i, line in enumerate(lines):
        out.append(f"<text{_attrs(x=MARGIN, y=y + 40 + i * 18)}>{escape(line)}</text>")
    return out, max(x, MARGIN + max(len(line) for line in lines) * CHAR_W) + MARGIN


def render_topology_svg(plan: FabricPlan) -> str:
    """The plan's topology as a standalone SVG document; the same plan always gives the same bytes."""
    bands = bands_of(plan)
    edges = aggregate_edges(plan, bands)
    box_w, box_h, width = layout(bands)
    groups = [g for band in bands for g in band]
    figures, lines = _figures(plan, bands, edges)
    # The description is free text from the intent; XML 1.0 cannot carry most control characters.
    description = "".join(c if c.isprintable() else " " for c in plan.source.description).strip()
    title = plan.source.fabric + (f" — {description}" if description else "")
    legend_y = TOP + len(bands) * (box_h + GAP_Y) - GAP_Y + 36
    legend, legend_w = _legend([s for s in STYLES if any(g.style == s for g in groups)], lines, legend_y)
    # Title and figure line are drawn larger than labels: give them room as well.
    width = max(width, legend_w, 2 * MARGIN + 1.6 * CHAR_W * len(title), 2 * MARGIN + 1.1 * CHAR_W * len(figures))
    height = legend_y + 40 + len(lines) * 18 + MARGIN

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1"'
        f'{_attrs(width=width, height=height, viewBox=f"0 0 {_num(width)} {_num(height)}")}>',
        f"<title>{escape(title)}</title>",
        f'<style type="text/css"><![CDATA[{_CSS}]]></style>',
        f'<rect{_attrs(x=0, y=0, width=width, height=height, fill="#ffffff")}/>',
        f'<text class="title"{_attrs(x=MARGIN, y=30)}>{escape(title)}</text>',
        f'<text class="figures"{_attrs(x=MARGIN, y=52)}>{escape(figures)}</text>',
    ]
    for band in bands:
        label = PLURAL[band[0].tier]
        out.append(f'<text class="tier"{_attrs(x=MARGIN, y=band[0].y + box_h / 2 + 4)}>{escape(label)}</text>')
    out += ['<g class="edges">', *_draw_edges(groups, edges, bands, box_h), "</g>", '<g class="groups">']
    for group in groups:
        out += _draw_group(group, box_w, box_h)
    out += ["</g>", '<g class="legend">', *legend, "</g>", "</svg>"]
    return "\n".join(out) + "\n"
