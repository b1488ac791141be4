"""One BGP summary per rail leaf: over rail fabrics the schema accepts (node counts, rails, pods, host_subnet sizes),
each leaf's host /31s lie in its aggregate, no two leaves' aggregates overlap, and an aggregate holds no address the
plan gives to anything else, so spines need one prefix per leaf and every host /31 stays reachable."""

from __future__ import annotations

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


def _addresses_elsewhere(plan: FabricPlan, leaf: str) -> set[IPv4Address]:
    """Every address the plan gives to something other than `leaf`'s host links (both ends of each)."""
    found = set()
    for sw in plan.switches:
        found.add(IPv4Network(sw.loopback_ipv4).network_address)
        for port in sw.ports:
            if port.ipv4 and not (sw.name == leaf and port.role is PortRole.HOST):
                found.update(IPv4Network(port.ipv4, strict=False))
        if sw.management:
            found.add(IPv4Network(sw.management.ipv4, strict=False).network_address)
    for host in plan.hosts:
        for nic in host.nics:
            if nic.switch != leaf:
                found.add(IPv4Network(nic.ipv4, strict=False).network_address + 1)
    return found


def assert_one_summary_per_leaf(plan: FabricPlan) -> None:
    leaves = [sw for sw in plan.switches if sw.role is Role.LEAF]
    summaries: list[tuple[IPv4Network, str]] = []
    for leaf in leaves:
        links = [IPv4Network(p.ipv4, strict=False) for p in leaf.ports if p.role is PortRole.HOST and p.ipv4]
        host_sides = {nic.ipv4 for host in plan.hosts for nic in host.nics if nic.switch == leaf.name}
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
        assert not any(a in agg for a in _addresses_elsewhere(plan, leaf.name)), f"{leaf.name}: {agg} holds others'"
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
