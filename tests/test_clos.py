"""Sized Clos fabrics: properties over generated sizes and designs, the examples, and what does not fit."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from conftest import INTENTS, TEST_VERSION, example_plan, generated_plan
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from properties import check_fabric
from test_cabling import check_cabling, check_placement

from rocefab.models.catalogue import MODELS
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, LinkKind, PortRole, Role
from rocefab.renderers.plan_checks import check_plan
from rocefab.renderers.render import render_fabric

NAMES = sorted(MODELS)


@st.composite
def sized_intents(draw: st.DrawFn) -> dict:
    rail = draw(st.booleans())
    leaf = draw(st.sampled_from(NAMES))
    speed = draw(st.sampled_from(MODELS[leaf].speeds_gbps()))
    nics = draw(st.integers(1, 4)) if rail else draw(st.integers(1, 2))
    nodes = draw(st.integers(1, 48))
    topology = {
        "design": "rail-optimized" if rail else "tor-dual-homed",
        "nodes": nodes,
        "nics_per_node": nics,
        "nic_speed_gbps": speed,
        "models": {"leaf": leaf, "spine": draw(st.sampled_from(NAMES)), "superspine": draw(st.sampled_from(NAMES))},
        "oversubscription": draw(st.sampled_from(["1:1", "2:1", "3:1"])),
        "tiers": draw(st.sampled_from(["auto", 2, 3])),
    }
    if draw(st.booleans()):
        topology["pod_nodes"] = draw(st.integers(1, 24))
    hosts: dict = {"nccl": {"socket_ifname": "eno1"}}
    if rail:
        hosts["nics"] = [{"netdev": f"enp{i + 1}s0np0", "rdma_device": f"mlx5_{i}"} for i in range(nics)]
    else:
        hosts["bonds"] = [{"name": f"bond{b}", "members": [f"ens{b + 1}f0np0", f"ens{b + 1}f1np1"],
                           "rdma_device": f"mlx5_bond_{b}", "speed_gbps": speed, "vlan": 101 + b}
                          for b in range(nics)]
    return {
        "fabric": {"name": "sized"},
        "vlans": [] if rail else [{"id": 101 + b, "name": f"t{b}", "subnet": f"10.{101 + b}.0.0/16",
                                   "pair_prefix_length": 24} for b in range(nics)],
        "underlay": {
            "asn": {"superspine": 64500, "spine": 64600, "leaf_first": 64700},
            "loopback_subnet": "10.0.0.0/20", "p2p_subnet": "10.1.0.0/16",
            **({"host_subnet": "10.128.0.0/12"} if rail else {"peer_link_subnet": "10.255.0.0/20"}),
        },
        "topology": topology,
        "hosts": hosts,
    }


def assert_clos_properties(plan: FabricPlan, intent: dict) -> None:
    topo = intent["topology"]
    rail = topo["design"] == "rail-optimized"
    switches = {s.name: s for s in plan.switches}

    # Every NIC port is cabled exactly once, and no switch port twice.
    host_links = [link for link in plan.links if link.kind is LinkKind.HOST]
    ends = Counter((link.b.device, link.b.port) for link in host_links)
    assert set(ends.values()) == {1}
    assert len(plan.hosts) == topo["nodes"]
    ports_per_host = topo["nics_per_node"] * (1 if rail else 2)
    assert len(host_links) == topo["nodes"] * ports_per_host
    for sw in plan.switches:
        assert len({p.name for p in sw.ports}) == len(sw.ports), f"{sw.name} uses a port twice"

    # Each tier within the oversubscription target.
    down, up = (int(x) for x in topo["oversubscription"].split(":"))
    target = Fraction(down, up)
    for sw in plan.switches:
        speed = {r: sum(p.speed_gbps for p in sw.ports if p.role is r) for r in PortRole}
        below = speed[PortRole.HOST] + speed[PortRole.DOWNLINK]
        if speed[PortRole.UPLINK]:
            assert Fraction(below, speed[PortRole.UPLINK]) <= target, f"{sw.name} above {topo['oversubscription']}"

    # Uplinks balanced: a switch reaches each switch above it over the same number of links.
    for sw in plan.switches:
        per_upper = Counter(p.peer.device for p in sw.ports if p.role is PortRole.UPLINK)
        assert len(set(per_upper.values())) <= 1, f"{sw.name} uplinks unbalanced: {dict(per_upper)}"

    # Everyone reaches everyone: every leaf reaches every spine of its pod; spine k of every pod reaches
    # the same super-spines (its plane), so any two hosts are at most five switches apart.
    spines_by_pod: defaultdict[int | None, set[str]] = defaultdict(set)
    for sw in plan.switches:
        if sw.role is Role.SPINE:
            spines_by_pod[sw.pod].add(sw.name)
    for sw in plan.switches:
        if sw.role is Role.LEAF:
            assert {p.peer.device for p in sw.ports if p.role is PortRole.UPLINK} == spines_by_pod[sw.pod]
    supers = {s.name for s in plan.switches if s.role is Role.SUPERSPINE}
    if supers:
        planes = [frozenset(p.peer.device for p in sw.ports if p.role is PortRole.UPLINK)
                  for sw in plan.switches if sw.role is Role.SPINE]
        assert set().union(*planes) == supers
        assert len(set(planes)) * len(next(iter(planes))) == len(supers), "planes overlap"

    # Addresses and ASNs unique.
    addresses = [s.loopback_ipv4 for s in plan.switches]
    addresses += [p.ipv4 for s in plan.switches for p in s.ports if p.ipv4]
    addresses += [n.ipv4 for h in plan.hosts for n in h.nics]
    addresses += [b.ipv4 for h in plan.hosts for b in h.bonds]
    assert len(addresses) == len(set(addresses))
    leaf_asns = [s.asn for s in plan.switches if s.role is Role.LEAF]
    assert len(leaf_asns) == len(set(leaf_asns))
    assert not {s.asn for s in plan.switches if s.role is not Role.LEAF} & set(leaf_asns)

    # Rail i carries only NIC i.
    if rail:
        nic_of_rail = {i: n["netdev"] for i, n in enumerate(intent["hosts"]["nics"])}
        for sw in plan.switches:
            if sw.role is Role.LEAF:
                assert sw.rail is not None
                assert {p.peer.port for p in sw.ports if p.role is PortRole.HOST} <= {nic_of_rail[sw.rail]}
        for host in plan.hosts:
            assert [switches[n.switch].rail for n in host.nics] == list(range(topo["nics_per_node"]))


# Found by CI: one server in a full three-tier pod. Leaf pairs without servers stand in network racks beside the
# spines, so some leaf-spine links are copper between broken-out cages.
ONE_NODE_THREE_TIERS = {
    "fabric": {"name": "sized"},
    "vlans": [{"id": 101, "name": "t0", "subnet": "10.101.0.0/16", "pair_prefix_length": 24}],
    "underlay": {"asn": {"superspine": 64500, "spine": 64600, "leaf_first": 64700}, "loopback_subnet": "10.0.0.0/20",
                 "p2p_subnet": "10.1.0.0/16", "peer_link_subnet": "10.255.0.0/20"},
    "topology": {"design": "tor-dual-homed", "nodes": 1, "nics_per_node": 1, "nic_speed_gbps": 100,
                 "models": {"leaf": "DCS-7060DX5-64S", "spine": "DCS-7060DX5-64S", "superspine": "DCS-7060DX5-64S"},
                 "oversubscription": "1:1", "tiers": 3},
    "hosts": {"nccl": {"socket_ifname": "eno1"},
              "bonds": [{"name": "bond0", "members": ["ens1f0np0", "ens1f1np1"], "rdma_device": "mlx5_bond_0",
                         "speed_gbps": 100, "vlan": 101}]},
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(sized_intents())
@example(intent=ONE_NODE_THREE_TIERS)
def test_generated_clos_fabrics(tmp_path_factory: pytest.TempPathFactory, intent: dict) -> None:
    plan = generated_plan(tmp_path_factory.mktemp("clos"), intent)
    assert_clos_properties(plan, intent)
    check_fabric(plan, render_fabric(plan))
    check_placement(plan)
    check_cabling(plan)


@pytest.mark.parametrize("name", ["cluster1024-rail", "tor128-3tier"])
def test_sized_examples(name: str) -> None:
    intent = yaml.safe_load((INTENTS / f"{name}.yaml").read_text())
    assert_clos_properties(example_plan(name), intent)


def test_1024_nodes_of_8_nics_fit_two_tiers_non_blocking() -> None:
    plan = example_plan("cluster1024-rail")
    roles = Counter(s.role for s in plan.switches)
    assert roles == {Role.LEAF: 128, Role.SPINE: 64}
    assert sum(1 for link in plan.links if link.kind is LinkKind.HOST) == 8192


def test_tor_128_three_tiers() -> None:
    plan = example_plan("tor128-3tier")
    roles = Counter(s.role for s in plan.switches)
    assert roles == {Role.SUPERSPINE: 6, Role.SPINE: 18, Role.LEAF: 18}
    assert {s.pod for s in plan.switches if s.role is not Role.SUPERSPINE} == {0, 1, 2}


def _with(tmp_path: Path, name: str, **topology: object) -> Path:
    intent = yaml.safe_load((INTENTS / f"{name}.yaml").read_text())
    intent["topology"].update(topology)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    return path


def test_4096_nodes_on_one_tier_says_what_would_fit(tmp_path: Path) -> None:
    checked = check_file(_with(tmp_path, "cluster1024-rail", nodes=4096, tiers=2), TEST_VERSION)
    (finding,) = [f for f in checked.findings if f.is_error]
    assert finding.code == "single-tier-too-large"
    assert "512 leaves cannot all reach one spine layer" in finding.message
    assert "two tiers of SN5600 connect at most 1024 servers" in finding.hint


def test_4096_nodes_fit_three_tiers_once_the_pools_grow(tmp_path: Path) -> None:
    short = check_file(_with(tmp_path, "cluster1024-rail", nodes=4096), TEST_VERSION)
    assert {(f.code, f.path, f.hint) for f in short.findings if f.is_error} == {
        ("address-pool-too-small", ("underlay", "loopback_subnet"), "a /21 or larger holds them"),
        ("address-pool-too-small", ("management", "subnet"), "a /21 or larger holds them"),
    }
    path = _with(tmp_path, "cluster1024-rail", nodes=4096)
    intent = yaml.safe_load(path.read_text())
    intent["underlay"]["loopback_subnet"] = "10.0.0.0/21"
    intent["management"]["subnet"] = "192.168.0.0/21"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    checked = check_file(path, TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    roles = Counter(s.role for s in checked.plan.switches)
    assert roles[Role.SUPERSPINE] > 0 and roles[Role.LEAF] == 512


def test_a_leaf_cut_off_from_the_spines_is_out_of_reach() -> None:
    plan = example_plan("cluster1024-rail")
    assert check_plan(plan) == []
    cut = replace(plan, links=tuple(link for link in plan.links
                                    if not (link.kind is LinkKind.FABRIC and link.a.device == "leaf007")))
    findings = [f for f in check_plan(cut) if f.code == "leaves-out-of-reach"]
    assert len(findings) == 2  # leaf007 reaches nobody; everyone else misses leaf007
    assert any(f.message.startswith("leaf007 cannot reach 127 leaves") for f in findings)
    assert any("cannot reach 1 leaves (e.g. leaf007) within 2 fabric links (3 switch hops)" in f.message
               for f in findings)


def test_a_port_cabled_twice_and_a_cable_of_two_speeds_are_caught() -> None:
    """The plan's own checks on ports (each a cable once) and links (both ends at the link's speed), on a plan
    edited after the planner: a leaf's first port listed twice, and a host link whose NIC runs another speed."""
    plan = example_plan("pod32")
    assert check_plan(plan) == []
    leaf = next(s for s in plan.switches if s.role is Role.LEAF)
    doubled = replace(leaf, ports=(*leaf.ports, leaf.ports[0]))
    host_link = next(link for link in plan.links if link.kind is LinkKind.HOST)
    slower = replace(host_link, speed_gbps=host_link.speed_gbps // 2)
    edited = replace(plan, switches=tuple(doubled if s is leaf else s for s in plan.switches),
                     links=tuple(slower if link is host_link else link for link in plan.links))
    found = {(f.code, f.message) for f in check_plan(edited)}
    assert ("port-used-twice", f"{leaf.name} {leaf.ports[0].name} is cabled 2 times") in found
    mismatches = sorted(m for code, m in found if code == "link-speed-mismatch")
    ends = f"{host_link.a.device} {host_link.a.port} <-> {host_link.b.device} {host_link.b.port}"
    assert [m.split(": ", 1)[0] for m in mismatches] == [ends, ends]  # both ends named
    assert all(m.endswith(f"the link at {slower.speed_gbps} Gb/s") for m in mismatches)


def test_an_address_used_twice_and_a_leaf_mtu_below_the_hosts_frames_are_caught() -> None:
    """The plan's own checks on addresses (one owner each, whatever the prefix length it is written with) and on
    MTU (every leaf carries its hosts' frames), on a plan edited after the planner."""
    plan = example_plan("pod32")
    leaf = next(s for s in plan.switches if s.role is Role.LEAF)
    spine = next(s for s in plan.switches if s.role is Role.SPINE)
    address = leaf.loopback_ipv4.split("/")[0]
    clash = replace(spine, loopback_ipv4=f"{address}/31")  # another prefix length, the same address
    small = replace(leaf, mtu_bytes=plan.host_profile.mtu_bytes)  # no room for the Ethernet header
    edited = replace(plan, switches=tuple(small if s is leaf else clash if s is spine else s for s in plan.switches))
    found = check_plan(edited)
    assert [f.message for f in found if f.code == "duplicate-address"] == [f"address {address} is assigned 2 times"]
    host_ports = [link.a.port for link in plan.links if link.kind is LinkKind.HOST and link.a.device == leaf.name]
    too_small = [f.message for f in found if f.code == "mtu-too-small"]
    assert host_ports and too_small == [
        f"{leaf.name} {port}: MTU {small.mtu_bytes} cannot carry host frames of {plan.host_profile.mtu_bytes} + "
        f"18 bytes" for port in host_ports]


def test_a_pod_without_super_spine_uplinks_is_out_of_reach() -> None:
    plan = example_plan("tor128-3tier")
    pod0_spines = {s.name for s in plan.switches if s.role is Role.SPINE and s.pod == 0}
    cut = replace(plan, links=tuple(link for link in plan.links if link.a.device not in pod0_spines))
    findings = [f for f in check_plan(cut) if f.code == "leaves-out-of-reach"]
    assert findings and all("within 4 fabric links (5 switch hops)" in f.message for f in findings)


def test_a_pinned_spine_count_wins_when_it_fits(tmp_path: Path) -> None:
    checked = check_file(_with(tmp_path, "tor128-3tier", spines_per_pod=10), TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    spines = [s for s in checked.plan.switches if s.role is Role.SPINE]
    assert len(spines) == 3 * 10
    for leaf in (s for s in checked.plan.switches if s.role is Role.LEAF):
        per_spine = Counter(p.peer.device for p in leaf.ports if p.role is PortRole.UPLINK)
        assert len(per_spine) == 10 and set(per_spine.values()) == {3}, leaf.name


@pytest.mark.parametrize(("pinned", "message"), [
    (4, "30 uplinks per leaf do not spread evenly over 4 spines"),
    (3, "3 N9K-C9364D-GX2A spines have"),
])
def test_a_pinned_spine_count_that_does_not_fit_says_what_would(tmp_path: Path, pinned: int, message: str) -> None:
    checked = check_file(_with(tmp_path, "tor128-3tier", spines_per_pod=pinned), TEST_VERSION)
    (finding,) = [f for f in checked.findings if f.is_error]
    assert (finding.code, finding.path) == ("spine-count-unfit", ("topology", "spines_per_pod"))
    assert finding.message.startswith(message)
    assert finding.hint == "counts that fit: 6, 10, 15, 30"


@given(st.permutations(range(40)), st.lists(st.integers(0, 39), max_size=3))
def test_ports_come_out_in_the_natural_order_of_their_names(shuffled: list[int], doubled: list[int]) -> None:
    """The planner puts a switch's ports in the natural order of their names by picking them in its model's
    order (planner._in_port_order), which must be what sorting by natural_key gives: names of cages and
    broken-out children in any order, a name taken twice (both kept, for the plan's checks), no order at all."""
    from rocefab.renderers import planner
    from rocefab.renderers.natural import natural_key, natural_order

    template = example_plan("pod32").switches[0].ports[0]
    names = [f"swp{1 + i // 4}" if i % 4 == 3 else f"swp{1 + i // 4}s{i % 4}" for i in range(40)]
    ports = [replace(template, name=names[i]) for i in shuffled] + [replace(template, name=names[i]) for i in doubled]
    expected = sorted(ports, key=lambda p: natural_key(p.name))
    for order in (natural_order({p.name for p in ports}), natural_order(names), None):
        assert list(planner._in_port_order(ports, order)) == expected


def test_names_of_the_same_natural_key_have_no_natural_order() -> None:
    from rocefab.renderers.natural import natural_order

    assert natural_order(["swp10", "swp2", "swp1s1"]) == ("swp1s1", "swp2", "swp10")
    assert natural_order(["swp1", "swp01"]) is None
