"""The containerlab lab cut: a small, connected subset of each example fabric as a topology containerlab takes."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter, deque
from typing import Any

import pytest
import yaml
from conftest import EXAMPLES, example_plan

from rocefab.renderers.containerlab import (
    STARTUP_FOLDER,
    TOPOLOGY_FILE,
    container_interfaces,
    lab_names,
    render_containerlab,
    render_containerlab_files,
)
from rocefab.renderers.lab_cut import MAX_HOSTS, MAX_PARALLEL_LINKS, select_lab_cut
from rocefab.renderers.lab_startup import STARTUP, Renaming, StartupSyntax, rename_config
from rocefab.renderers.plan import Endpoint, FabricPlan, Link, LinkKind, Role

MAX_NODES = 12

# containerlab kinds (long and short names) that can stand in for each rocefab platform.
EXPECTED_KINDS = {
    "eos": {"arista_ceos", "ceos"},
    "nxos": {"cisco_n9kv", "vr-n9kv", "vr-cisco_n9kv"},
    "cumulus": {"nvidia_cumulusvx", "cvx", "cumulus_cvx"},
    "host": {"linux"},
}

# Interface names each kind accepts, after containerlab's kind sources: cEOS checks `eth[1-9][\w.]*$`, the
# Nexus 9000v and Cumulus VX kinds map their aliases to ethN, Linux data ports start at eth1.
IFACE_PATTERNS = {
    "arista_ceos": re.compile(r"eth[1-9][\w.]*"),
    "cisco_n9kv": re.compile(r"eth[1-9]\d*|Ethernet1/[1-9]\d*"),
    "nvidia_cumulusvx": re.compile(r"swp[1-9]\d*(?:s\d+)?"),
    "linux": re.compile(r"eth[1-9]\d*"),
}

LABEL_PORT = "rocefab-port-"


@pytest.fixture(scope="module", params=EXAMPLES)
def example(request: pytest.FixtureRequest) -> tuple[FabricPlan, dict[str, Any]]:
    plan = example_plan(request.param)
    return plan, yaml.safe_load(render_containerlab(plan))


def _endpoints(topo: dict[str, Any]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    result = []
    for link in topo["topology"]["links"]:
        a, b = (end.split(":", 1) for end in link["endpoints"])
        result.append(((a[0], a[1]), (b[0], b[1])))
    return result


def _physical(topo: dict[str, Any], node: str, iface: str) -> str:
    port: str = topo["topology"]["nodes"][node]["labels"][LABEL_PORT + iface]
    return port


def test_output_is_a_containerlab_topology(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    _, topo = example
    assert isinstance(topo["name"], str) and "-" not in topo["name"]
    assert set(topo) == {"name", "topology"}
    assert set(topo["topology"]) == {"kinds", "nodes", "links"}
    for kind, spec in topo["topology"]["kinds"].items():
        assert isinstance(spec["image"], str) and ":" in spec["image"], kind
    used = {node["kind"] for node in topo["topology"]["nodes"].values()}
    assert used == set(topo["topology"]["kinds"])


def test_starts_with_a_comment_naming_the_devices(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, topo = example
    text = render_containerlab(plan)
    header = text[: text.index("\nname:")]
    assert text.startswith("# Lab cut of fabric")
    assert all(line.startswith("#") for line in header.splitlines())
    assert "rocefab" in header and "placeholder" in header and "mapping" in header
    for name in topo["topology"]["nodes"]:
        assert name in header


def test_links_reference_existing_nodes(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    _, topo = example
    nodes = topo["topology"]["nodes"]
    for a, b in _endpoints(topo):
        assert a[0] in nodes and b[0] in nodes, (a, b)
        assert a[0] != b[0]


def test_node_kinds_fit_platforms(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, topo = example
    hosts = {h.name for h in plan.hosts}
    for name, node in topo["topology"]["nodes"].items():
        platform = "host" if name in hosts else plan.switch(name).platform
        assert node["kind"] in EXPECTED_KINDS[platform], (name, node["kind"])


def test_interface_names_fit_kinds_and_are_used_once(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    _, topo = example
    nodes = topo["topology"]["nodes"]
    seen: Counter[tuple[str, str]] = Counter()
    for end in (e for pair in _endpoints(topo) for e in pair):
        seen[end] += 1
        assert IFACE_PATTERNS[nodes[end[0]]["kind"]].fullmatch(end[1]), end
        assert len(end[1]) <= 15, end  # a Linux interface name
    assert max(seen.values()) == 1, [end for end, n in seen.items() if n > 1]


def test_every_kept_link_appears_exactly_once(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, topo = example
    cut = select_lab_cut(plan)
    expected = Counter(frozenset({(lk.a.device, lk.a.port), (lk.b.device, lk.b.port)}) for lk in cut.links)
    rendered = Counter(
        frozenset({(a[0], _physical(topo, *a)), (b[0], _physical(topo, *b))}) for a, b in _endpoints(topo)
    )
    assert rendered == expected
    assert max(expected.values()) == 1


def test_labels_match_the_interface_map(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, topo = example
    mapping = container_interfaces(select_lab_cut(plan))
    labelled = {
        (name, key.removeprefix(LABEL_PORT)): port
        for name, node in topo["topology"]["nodes"].items()
        for key, port in node["labels"].items()
        if key.startswith(LABEL_PORT)
    }
    assert labelled == {(end.device, iface): end.port for end, iface in mapping.items()}


def test_cut_is_connected_and_small(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    _, topo = example
    nodes = set(topo["topology"]["nodes"])
    assert 2 <= len(nodes) <= MAX_NODES
    adjacent: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in _endpoints(topo):
        adjacent[a[0]].add(b[0])
        adjacent[b[0]].add(a[0])
    for start in sorted(nodes):
        reached = {start}
        queue = deque([start])
        while queue:
            for nxt in adjacent[queue.popleft()] - reached:
                reached.add(nxt)
                queue.append(nxt)
        assert reached == nodes, (start, nodes - reached)


def test_selection_keeps_only_links_between_kept_devices(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, _ = example
    cut = select_lab_cut(plan)
    kept = set(cut.device_names)
    assert len(kept) == len(cut.device_names)
    assert 1 <= len(cut.hosts) <= MAX_HOSTS
    assert all(lk.a.device in kept and lk.b.device in kept for lk in cut.links)
    # Every pair of kept devices cabled in the plan is cabled in the lab, switch pairs by at most
    # MAX_PARALLEL_LINKS links, hosts by all of their links to kept leaves.
    in_plan = Counter(
        frozenset((lk.a.device, lk.b.device)) for lk in plan.links if lk.a.device in kept and lk.b.device in kept
    )
    in_cut = Counter(frozenset((lk.a.device, lk.b.device)) for lk in cut.links)
    assert set(in_cut) == set(in_plan)
    host_names = {h.name for h in cut.hosts}
    for pair, n in in_plan.items():
        expected = n if pair & host_names else min(n, MAX_PARALLEL_LINKS)
        assert in_cut[pair] == expected, pair
    # Kept spines reach kept leaves, kept super-spines reach kept spines.
    for upper, lower in ((cut.spines, cut.leaves), (cut.superspines, cut.spines)):
        for switch in upper:
            assert any(frozenset((switch.name, s.name)) in in_cut for s in lower), switch.name
    for leaf in cut.leaves:
        assert not cut.spines or any(frozenset((leaf.name, s.name)) in in_cut for s in cut.spines), leaf.name
    supers = {s.name for s in plan.switches if s.role is Role.SUPERSPINE}
    for spine in cut.spines:
        ends = ({lk.a.device, lk.b.device} for lk in plan.links)
        if any(spine.name in e and e & supers for e in ends):
            assert any(frozenset((spine.name, s.name)) in in_cut for s in cut.superspines), spine.name


def test_nothing_points_at_plan_addresses(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, topo = example
    text = render_containerlab(plan)
    assert not re.search(r"\b\d{1,3}(?:\.\d{1,3}){3}\b", text)
    for node in topo["topology"]["nodes"].values():
        assert not {"mgmt-ipv4", "mgmt-ipv6", "mgmt_ipv6", "exec"} & set(node)
    assert "mgmt" not in topo


def test_output_is_deterministic(example: tuple[FabricPlan, dict[str, Any]]) -> None:
    plan, _ = example
    assert render_containerlab(plan) == render_containerlab(plan)
    assert select_lab_cut(plan) == select_lab_cut(plan)


def test_tor_cut_keeps_the_first_leaf_pair() -> None:
    plan = example_plan("pod32")
    cut = select_lab_cut(plan)
    first = next(s for s in plan.switches if s.role is Role.LEAF)
    assert [s.name for s in cut.leaves] == [s.name for s in plan.switches if s.pair == first.pair]
    assert len(cut.spines) == 2
    # Peer-link members are kept.
    assert sum(1 for lk in cut.links if lk.kind is LinkKind.PEER_LINK) == 2


def test_ceos_ports_keep_their_physical_numbering() -> None:
    topo = yaml.safe_load(render_containerlab(example_plan("pod32")))
    eos = {n for n, node in topo["topology"]["nodes"].items() if node["kind"] == "arista_ceos"}
    assert eos
    for end in (e for pair in _endpoints(topo) for e in pair):
        if end[0] in eos:
            assert _physical(topo, *end) == "Ethernet" + end[1].removeprefix("eth").replace("_", "/")


def test_rail_cut_hosts_reach_their_own_rail() -> None:
    plan = example_plan("cluster1024-rail")
    cut = select_lab_cut(plan)
    rails = sorted({s.rail for s in cut.leaves if s.rail is not None})
    assert len(rails) == len({s.rail for s in cut.leaves})
    assert rails == [0, 1]
    first_pod = next(s for s in plan.switches if s.role is Role.LEAF).pod
    assert all(s.pod == first_pod for s in cut.leaves)
    kept_leaves = {s.name: s for s in cut.leaves}
    host_links = [lk for lk in cut.links if lk.kind is LinkKind.HOST]
    assert host_links
    for host in cut.hosts:
        nics = {n.netdev: n for n in host.nics}
        mine = [lk for lk in host_links if lk.b.device == host.name]
        # Every NIC whose leaf is kept is cabled, to a leaf of the NIC's own rail.
        assert len(mine) == sum(1 for n in host.nics if n.switch in kept_leaves)
        for link in mine:
            nic = nics[link.b.port]
            leaf = kept_leaves[link.a.device]
            assert leaf.rail == nic.rail, (host.name, nic.netdev, leaf.name)
            assert link.a.device == nic.switch and link.a.port == nic.port
    # The hosts sit under different leaves, so same-rail traffic between them crosses a spine.
    under = [frozenset(lk.a.device for lk in host_links if lk.b.device == h.name) for h in cut.hosts]
    assert len(set(under)) == len(under)


def test_three_tier_cut_keeps_super_spines_above_the_kept_spines() -> None:
    plan = example_plan("tor128-3tier")
    cut = select_lab_cut(plan)
    assert cut.superspines
    spines = {s.name for s in cut.spines}
    supers = {s.name for s in cut.superspines}
    assert all(s.pod == cut.leaves[0].pod for s in cut.spines)
    up = [lk for lk in cut.links if {lk.a.device, lk.b.device} & supers]
    assert up and all({lk.a.device, lk.b.device} <= spines | supers for lk in up)
    # Each kept spine keeps its uplinks to a kept super-spine (its own plane), and every kept pair appears.
    for spine in spines:
        assert any(spine in (lk.a.device, lk.b.device) for lk in up), spine
    for sup in supers:
        assert any(sup in (lk.a.device, lk.b.device) for lk in up), sup
    topo = yaml.safe_load(render_containerlab(plan))
    rendered = {frozenset((a[0], b[0])) for a, b in _endpoints(topo)}
    for link in up:
        assert frozenset((link.a.device, link.b.device)) in rendered
    assert {node["kind"] for name, node in topo["topology"]["nodes"].items() if name in supers} == {"nvidia_cumulusvx"}


def test_each_kept_spine_keeps_a_super_spine_of_its_own_plane() -> None:
    """With two super-spines per plane, plan order alone would keep both of the first plane."""
    plan = example_plan("tor128-3tier")
    supers = [s.name for s in plan.switches if s.role is Role.SUPERSPINE]
    spines = [s.name for s in plan.switches if s.role is Role.SPINE]
    planes = {spines[0]: supers[:2], spines[1]: supers[2:4]}
    others = [lk for lk in plan.links if not ({lk.a.device, lk.b.device} & set(supers))]
    uplinks = [
        Link(LinkKind.FABRIC, Endpoint(spine, f"Ethernet1/{40 + i}"), Endpoint(sup, f"swp{i + 1}"), 400)
        for spine, above in planes.items()
        for i, sup in enumerate(above)
    ]
    cut = select_lab_cut(dataclasses.replace(plan, links=(*uplinks, *others)))
    assert [s.name for s in cut.spines] == spines[:2]
    assert [s.name for s in cut.superspines] == [supers[0], supers[2]]


# --- startup configs ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=EXAMPLES)
def lab_files(request: pytest.FixtureRequest) -> tuple[FabricPlan, dict[str, Any], dict[str, str]]:
    plan = example_plan(request.param)
    files = {path: text for path, _, text in render_containerlab_files(plan)}
    return plan, yaml.safe_load(files[TOPOLOGY_FILE]), files


def _own_names(text: str, syntax: StartupSyntax) -> set[str]:
    """The front-panel interfaces a startup config configures: CLI `interface X` lines, NVUE interface keys."""
    if syntax.tree:
        (entry,) = yaml.safe_load(text)
        return {k for k in entry["set"]["interface"] if syntax.physical.fullmatch(k)}
    return {m.group(1) for m in re.finditer(r"^interface (\S+)$", text, re.M) if syntax.physical.fullmatch(m.group(1))}


def _syntax_text(text: str, syntax: StartupSyntax) -> str:
    """The config without its comments and descriptions (free text that names peers)."""
    if syntax.tree:
        def strip(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: strip(v) for k, v in node.items() if k != "description"}
            return [strip(i) for i in node] if isinstance(node, list) else node
        return yaml.safe_dump(strip(yaml.safe_load(text)))
    lines = (line.split(" description ")[0] for line in text.splitlines()
             if not line.lstrip().startswith(("description ", "!")))
    return "\n".join(lines)


def test_every_switch_boots_from_a_rendered_startup_config(
        lab_files: tuple[FabricPlan, dict[str, Any], dict[str, str]]) -> None:
    plan, topo, files = lab_files
    hosts = {h.name for h in plan.hosts} & set(topo["topology"]["nodes"])
    startups = {name: node.get("startup-config") for name, node in topo["topology"]["nodes"].items()}
    assert all(startups[h] is None for h in hosts)
    switch_paths = {name: path for name, path in startups.items() if name not in hosts}
    assert all(switch_paths.values()), switch_paths
    assert sorted(switch_paths.values()) == sorted(p for p in files if p != TOPOLOGY_FILE)
    for name, path in switch_paths.items():
        assert path.startswith(f"{STARTUP_FOLDER}/{name}.")  # relative to the topology file, as containerlab reads
        assert f"lab cut ({TOPOLOGY_FILE})" in files[path].splitlines()[4]  # after the rendered header


def test_startup_configs_configure_exactly_the_linked_interfaces(
        lab_files: tuple[FabricPlan, dict[str, Any], dict[str, str]]) -> None:
    plan, topo, files = lab_files
    cut = select_lab_cut(plan)
    names = lab_names(cut, container_interfaces(cut))
    linked: dict[str, set[str]] = {}
    for a, b in _endpoints(topo):
        for node, iface in (a, b):
            linked.setdefault(node, set()).add(iface)
    for name, node in topo["topology"]["nodes"].items():
        if "startup-config" not in node:
            continue
        syntax = STARTUP[node["kind"]]
        text = files[node["startup-config"]]
        expected = {syntax.nos_name(iface) for iface in linked[name]}
        assert _own_names(text, syntax) == expected, name
        # None of the physical names of the mapped ports stays (unless the NOS name is the same one).
        body = _syntax_text(text, syntax)
        for end, lab in names.items():
            if end.device == name and end.port != lab and end.port not in expected:
                assert not re.search(rf"(?<![\w/.-]){re.escape(end.port)}(?![\w/.-])", body), (name, end.port)
        # Descriptions name each kept peer by its lab name (a physical name that is also one of the peer's lab
        # names, as spine001 Ethernet1/6 can be both, is not a leftover).
        peer_labs = {(end.device, lab) for end, lab in names.items()}
        for end, lab in names.items():
            if end.device != name and end.port != lab and (end.device, end.port) not in peer_labs:
                assert not re.search(rf"(?<![\w/.-]){re.escape(f'{end.device} {end.port}')}(?![\w/.-])", text), \
                    (name, end)


def test_startup_configs_parse_and_keep_the_rest_of_the_config(
        lab_files: tuple[FabricPlan, dict[str, Any], dict[str, str]]) -> None:
    _, topo, files = lab_files
    for name, node in topo["topology"]["nodes"].items():
        if "startup-config" not in node:
            continue
        text = files[node["startup-config"]]
        assert f"{name}" in text.splitlines()[1]  # the rendered header names the device
        if STARTUP[node["kind"]].tree:
            (entry,) = yaml.safe_load(text)
            assert {"interface", "qos", "router"} <= set(entry["set"]), name
        else:
            assert re.search(r"^router bgp \d+$", text, re.M), name


def test_an_unchanged_nvue_document_comes_back_byte_for_byte() -> None:
    """The tree rewrite dumps with the renderer's own YAML writer, so renaming nothing changes nothing."""
    plan = example_plan("lab")
    from rocefab.platforms import unit
    from rocefab.renderers.render import target_of

    spine = plan.switch("spine1")
    (nvue,) = [f.content for f in unit(spine.platform).files()(plan, spine, target_of(spine)) if f.kind == "nvue-yaml"]
    own = {p.name: p.name for p in spine.ports}
    lines = rename_config(nvue, STARTUP["nvidia_cumulusvx"], Renaming(own, {}), "NOTE").splitlines(keepends=True)
    assert lines[4] == "# NOTE\n"
    assert "".join(lines[:4] + lines[5:]) == nvue


def test_renaming_matches_whole_names_and_swaps_safely() -> None:
    text = ("! header\n!\n"
            "interface Ethernet1/1\n  description leaf9 Ethernet1/1\n  mtu 9216\n"
            "interface Ethernet1/10\n  mtu 9216\n"
            "interface Ethernet1/1/2\n  mtu 9216\n"
            "interface Ethernet1/2\n  mtu 9216\n"
            "interface breakout module 1 port 7 map 400g-2x\n"
            "router bgp 65000\n  neighbor 10.0.0.1\n    description leaf9 Ethernet1/2 via Ethernet1/1\n")
    renaming = Renaming(own={"Ethernet1/1": "Ethernet1/2", "Ethernet1/2": "Ethernet1/1"},
                        peers={"leaf9 Ethernet1/1": "leaf9 Ethernet1/3"})
    renamed = rename_config(text, STARTUP["cisco_n9kv"], renaming, "lab")
    assert renamed == ("! header\n! lab\n!\n"
                       "interface Ethernet1/2\n  description leaf9 Ethernet1/3\n  mtu 9216\n"
                       "interface Ethernet1/1\n  mtu 9216\n"
                       "router bgp 65000\n  neighbor 10.0.0.1\n    description leaf9 Ethernet1/2 via Ethernet1/1\n")
