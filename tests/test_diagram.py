"""The topology diagram: a well-formed SVG whose groups and edges account for every switch, host and link."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, INTENTS, TEST_VERSION, example_plan

from rocefab.renderers.diagram import render_topology_svg
from rocefab.renderers.diagram_layout import INDIVIDUAL_MAX
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan

SVG = "{http://www.w3.org/2000/svg}"
TIMES, DASH = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}"


def parse(svg: str) -> ET.Element:
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    return ET.fromstring(svg)


def groups(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "group"]


def edges(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]


def members(group: ET.Element) -> list[str]:
    return (group.get("data-members") or "").split()


def assert_accounts_for_plan(plan: FabricPlan, svg: str) -> None:
    """Every device in exactly one group, and every link in exactly one edge or inside one group."""
    root = parse(svg)
    drawn = groups(root)
    for g in drawn:
        assert int(g.get("data-count", "-1")) == len(members(g)) > 0
        assert g[0].tag == f"{SVG}title", "a group's tooltip comes first"
    by_tier: dict[str, list[str]] = {}
    counts: Counter[str] = Counter()
    for g in drawn:
        by_tier.setdefault(g.get("data-tier", ""), []).extend(members(g))
        counts[g.get("data-tier", "")] += int(g.get("data-count", "0"))
    expected: dict[str, list[str]] = {}
    for s in plan.switches:
        expected.setdefault(s.role.value, []).append(s.name)
    if plan.hosts:
        expected["host"] = [h.name for h in plan.hosts]
    assert {tier: sorted(names) for tier, names in by_tier.items()} == {
        tier: sorted(names) for tier, names in expected.items()
    }
    assert counts == Counter({tier: len(names) for tier, names in expected.items()})

    # Recount the links group by group from the plan, and compare with what the edges say.
    group_of = {name: g.get("id") for g in drawn for name in members(g)}
    rank = {g.get("id"): i for i, g in enumerate(drawn)}
    between: Counter[tuple[str | None, str | None]] = Counter()
    inside: Counter[str | None] = Counter()
    for link in plan.links:
        a, b = group_of[link.a.device], group_of[link.b.device]
        if a == b:
            inside[a] += 1
        else:
            between[(a, b) if rank[a] < rank[b] else (b, a)] += 1
    drawn_edges = Counter({(e.get("data-from"), e.get("data-to")): int(e.get("data-cables", "0")) for e in edges(root)})
    assert len(drawn_edges) == len(edges(root)), "one edge per pair of groups"
    assert drawn_edges == between, "an edge per connected pair of groups, none between unconnected ones"
    internal = {g.get("id"): int(g.get("data-internal-cables", "0")) for g in drawn}
    assert {k: n for k, n in internal.items() if n} == dict(inside)
    assert sum(drawn_edges.values()) + sum(inside.values()) == len(plan.links)


@pytest.mark.parametrize("name", EXAMPLES)
def test_diagram_accounts_for_every_switch_host_and_link(name: str) -> None:
    plan = example_plan(name)
    assert_accounts_for_plan(plan, render_topology_svg(plan))


@pytest.mark.parametrize("name", EXAMPLES)
def test_edge_cables_add_up_to_fabric_and_host_links(name: str) -> None:
    plan = example_plan(name)
    root = parse(render_topology_svg(plan))
    between_tiers = sum(1 for link in plan.links if link.kind.value in ("fabric", "host"))
    assert sum(int(e.get("data-cables", "0")) for e in edges(root)) == between_tiers
    speeds = {link.speed_gbps for link in plan.links}
    for edge in edges(root):
        label = "".join(edge.itertext())
        found = re.findall(rf"\d+ {TIMES} (\d+)G", label)
        assert found and {int(s) for s in found} <= speeds, label


@pytest.mark.parametrize("name", ["lab", "pod32"])
def test_small_fabrics_name_every_switch_in_a_label(name: str) -> None:
    plan = example_plan(name)
    root = parse(render_topology_svg(plan))
    labels = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    for switch in plan.switches:
        assert re.search(rf"(^|[\s·]){re.escape(switch.name)}($|[\s·])", labels), switch.name


def test_pod32_draws_pairs_and_platforms() -> None:
    root = parse(render_topology_svg(example_plan("pod32")))
    leaves = [g for g in groups(root) if g.get("data-tier") == "leaf"]
    assert [members(g) for g in leaves] == [[f"rack{i}-a", f"rack{i}-b"] for i in range(1, 5)]
    assert [g.get("data-platform") for g in leaves] == ["eos", "eos", "cumulus", "nxos"]
    assert all(int(g.get("data-internal-cables", "0")) == 2 for g in leaves), "two peer links per pair"
    hosts = [g for g in groups(root) if g.get("data-tier") == "host"]
    assert [g.get("data-count") for g in hosts] == ["8"] * 4
    assert f"8 hosts: gpu001{DASH}gpu008" in "".join(hosts[0].itertext())
    legend = "".join(next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend").itertext())
    assert "Arista EOS" in legend and "Cumulus" in legend and "NX-OS" in legend


def test_tor128_groups_spines_by_pod() -> None:
    plan = example_plan("tor128-3tier")
    root = parse(render_topology_svg(plan))
    tiers = Counter(g.get("data-tier") for g in groups(root))
    assert tiers == {"superspine": 6, "spine": 3, "leaf": 9, "host": 9}
    spines = [g for g in groups(root) if g.get("data-tier") == "spine"]
    assert [{plan.switch(n).pod for n in members(g)} for g in spines] == [{0}, {1}, {2}]


def test_cluster1024_stays_small() -> None:
    plan = example_plan("cluster1024-rail")
    svg = render_topology_svg(plan)
    root = parse(svg)
    shapes = sum(1 for e in root.iter() if e.tag in (f"{SVG}rect", f"{SVG}line", f"{SVG}path"))
    assert shapes <= 300
    assert len(svg.encode()) < 300_000
    leaves = [g for g in groups(root) if g.get("data-tier") == "leaf"]
    assert len(leaves) == 8 and all(g.get("data-count") == "16" for g in leaves), "one group per rail"
    assert "rail 3: 16 leaves" in "".join(leaves[3].itertext())
    (hosts,) = [g for g in groups(root) if g.get("data-tier") == "host"]
    assert f"1,024 nodes {TIMES} 8 NICs" in "".join(hosts.itertext())
    tooltip = hosts.findtext(f"{SVG}title") or ""
    assert len(tooltip) < 80 and "gpu1024" in tooltip and "…" in tooltip


def test_cluster1024_renders_fast() -> None:
    plan = example_plan("cluster1024-rail")
    best = min(_timed(plan) for _ in range(3))
    # The budget is 0.1 s; the bound leaves room for a busy machine and still catches a quadratic loop.
    assert best < 0.5, f"{best:.3f} s"


def _timed(plan: FabricPlan) -> float:
    start = time.perf_counter()
    render_topology_svg(plan)
    return time.perf_counter() - start


@pytest.mark.parametrize("name", EXAMPLES)
def test_deterministic(name: str) -> None:
    plan = example_plan(name)
    assert render_topology_svg(plan) == render_topology_svg(plan)


def test_rail_pods_and_super_spine_planes(tmp_path: Path) -> None:
    """512 rail-optimized nodes in pods of 128: 32 super-spines in planes, leaves per pod and rail."""
    intent = yaml.safe_load((INTENTS / "cluster1024-rail.yaml").read_text())
    intent["topology"].update(nodes=512, pod_nodes=128)
    path = tmp_path / "rail512.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    checked = check_file(path, TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    plan = checked.plan
    svg = render_topology_svg(plan)
    assert_accounts_for_plan(plan, svg)
    root = parse(svg)
    supers = [g for g in groups(root) if g.get("data-tier") == "superspine"]
    assert sum(1 for s in plan.switches if s.role.value == "superspine") > INDIVIDUAL_MAX
    spine_pods = [g for g in groups(root) if g.get("data-tier") == "spine"]
    assert len(supers) == len(members(spine_pods[0])), "a plane per spine position"
    # Spine k of every pod reaches exactly the super-spines of plane k.
    plane_of = {name: i for i, g in enumerate(supers) for name in members(g)}
    reached: dict[str, set[int]] = {}
    for link in plan.links:
        if link.b.device in plane_of:
            reached.setdefault(link.a.device, set()).add(plane_of[link.b.device])
    for pod in spine_pods:
        assert [reached[spine] for spine in members(pod)] == [{k} for k in range(len(supers))]
    leaves = [g for g in groups(root) if g.get("data-tier") == "leaf"]
    assert "pod 1 · rail 3: 2 leaves" in "".join(leaves[8 + 3].itertext())
    assert Counter(g.get("data-count") for g in groups(root) if g.get("data-tier") == "host") == {"128": 4}


def test_description_with_markup_and_control_characters() -> None:
    plan = example_plan("lab")
    odd = replace(plan, source=replace(plan.source, description='<b> & "x"\x01\ty'))
    root = parse(render_topology_svg(odd))
    assert root.findtext(f"{SVG}title") == 'lab — <b> & "x"  y'
