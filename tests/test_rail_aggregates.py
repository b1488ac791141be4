"""One BGP summary per rail leaf: over rail fabrics the schema accepts (node counts, rails, pods, host_subnet sizes),
each leaf's host /31s lie in its aggregate, no two leaves' aggregates overlap, and an aggregate holds no address the
plan gives to anything else, so spines need one prefix per leaf and every host /31 stays reachable."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import replace
from ipaddress import IPv4Address, IPv4Network
from itertools import pairwise

import pytest
from conftest import example_plan, generated_plan
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_clos import sized_intents

from rocefab.renderers.plan import FabricPlan, PortRole, Role


@st.composite
def rail_intents(draw: st.DrawFn) -> dict:
    intent = draw(sized_intents().filter(lambda i: i["topology"]["design"] == "rail-optimized"))
    intent["topology"]["nodes"] = draw(st.integers(1, 160))
    # From roomy to just too small: a refusal must be a finding, never overlapping blocks.
    intent["underlay"]["host_subnet"] = f"10.128.0.0/{draw(st.integers(9, 24))}"
    return intent


def _given_out(plan: FabricPlan) -> list[tuple[int, str]]:
    """Every address the plan gives out, sorted, with its owner: the leaf, for both ends of a leaf's host /31s
    (the host end counted through its NIC, owned by the NIC's leaf); "" for everything else."""
    found = []
    for sw in plan.switches:
        found.append((int(IPv4Network(sw.loopback_ipv4).network_address), ""))
        for port in sw.ports:
            if port.ipv4:
                owner = sw.name if sw.role is Role.LEAF and port.role is PortRole.HOST else ""
                found += [(int(a), owner) for a in IPv4Network(port.ipv4, strict=False)]
        if sw.management:
            found.append((int(IPv4Network(sw.management.ipv4, strict=False).network_address), ""))
    for host in plan.hosts:
        for nic in host.nics:
            found.append((int(IPv4Network(nic.ipv4, strict=False).network_address + 1), nic.switch))
    return sorted(found)


def assert_one_summary_per_leaf(plan: FabricPlan) -> None:
    leaves = [sw for sw in plan.switches if sw.role is Role.LEAF]
    given_out = _given_out(plan)
    nics_of: dict[str, set[str]] = {}
    for host in plan.hosts:
        for nic in host.nics:
            nics_of.setdefault(nic.switch, set()).add(nic.ipv4)
    summaries: list[tuple[IPv4Network, str]] = []
    for leaf in leaves:
        links = [IPv4Network(p.ipv4, strict=False) for p in leaf.ports if p.role is PortRole.HOST and p.ipv4]
        host_sides = nics_of.get(leaf.name, set())
        assert len(host_sides) == len(links)
        assert all(IPv4Network(h, strict=False) in links for h in host_sides), f"{leaf.name}: NIC off its /31"
        advertised = [IPv4Network(a) for a in leaf.bgp.advertised]
        if len(links) <= 1:
            assert leaf.bgp.aggregates == (), f"{leaf.name}: an aggregate of one /31 has no contributor"
            assert set(links) <= set(advertised), f"{leaf.name}: its one host /31 is not advertised"
            summaries += [(link, leaf.name) for link in links]
            continue
        (agg,) = map(IPv4Network, leaf.bgp.aggregates)
        assert all(link.subnet_of(agg) and link.prefixlen > agg.prefixlen for link in links), f"{leaf.name}: {agg}"
        # The smallest prefix holding them: exact when the servers are a power of two, else less than double.
        used = 2 * len(links)
        assert used <= agg.num_addresses < 2 * used, f"{leaf.name}: {agg} for {len(links)} links"
        first, last = int(agg.network_address), int(agg.broadcast_address)
        inside = given_out[bisect_left(given_out, (first, "")):bisect_right(given_out, (last, "\uffff"))]
        others = [str(IPv4Address(a)) for a, owner in inside if owner != leaf.name]
        assert not others, f"{leaf.name}: {agg} holds others' {others[:4]}"
        assert not any(a.subnet_of(agg) and a != agg for a in advertised), f"{leaf.name}: a /31 leaks past {agg}"
        summaries.append((agg, leaf.name))
    ordered = sorted(summaries)
    for (a, leaf_a), (b, leaf_b) in pairwise(ordered):
        assert not a.overlaps(b), f"{leaf_a} {a} overlaps {leaf_b} {b}"
    # What a spine learns: one prefix per rail leaf, from that leaf alone.
    from_leaves = [p for leaf in leaves for p in leaf.bgp.advertised if not p.endswith("/32")]
    assert sorted(from_leaves) == sorted(str(s) for s, _ in summaries)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rail_intents())
def test_each_rail_leaf_has_one_summary_of_its_own_links(tmp_path_factory: pytest.TempPathFactory,
                                                          intent: dict) -> None:
    assert_one_summary_per_leaf(generated_plan(tmp_path_factory.mktemp("rail"), intent))


def test_cluster1024_leaves_each_advertise_one_slash25() -> None:
    plan = example_plan("cluster1024-rail")
    assert_one_summary_per_leaf(plan)
    leaf = plan.switch("leaf001")
    assert leaf.bgp.aggregates == ("10.128.0.0/25",)
    assert len(leaf.bgp.networks) == 65 and leaf.bgp.advertised == ("10.0.0.65/32", "10.128.0.0/25")


def test_an_address_of_another_device_inside_a_summary_is_caught() -> None:
    """The oracle can fail: a spine's loopback moved into leaf001's 10.128.0.0/25 is named."""
    plan = example_plan("cluster1024-rail")
    spine = next(sw for sw in plan.switches if sw.role is Role.SPINE)
    moved = replace(spine, loopback_ipv4="10.128.0.77/32")
    broken = replace(plan, switches=tuple(moved if sw is spine else sw for sw in plan.switches))
    with pytest.raises(AssertionError, match=r"leaf001: 10\.128\.0\.0/25 holds others' \['10\.128\.0\.77'\]"):
        assert_one_summary_per_leaf(broken)
