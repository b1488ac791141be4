"""Rack placement, cabling plan and bill of materials: every link once, the medium its racks call for, and
quantities that add up to the cabling plan."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import EXAMPLES, example_plan, generated_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.renderers.bom import bill_of_materials, render_bom_csv
from rocefab.renderers.cabling import (
    CAGE_TO_CAGE,
    COLUMNS,
    COPPER,
    MULTIMODE,
    SINGLE_MODE,
    SPLITTER,
    Connection,
    connections,
    render_cabling_csv,
)
from rocefab.renderers.plan import Endpoint, FabricPlan, Role


def check_placement(plan: FabricPlan, nodes_per_rack: int = 4, switches_per_rack: int = 8) -> None:
    servers: defaultdict[str, list[str]] = defaultdict(list)
    for host in plan.hosts:
        servers[host.rack].append(host.name)
    pairs_of_rack = defaultdict(set)
    for host in plan.hosts:
        pairs_of_rack[host.rack].add((host.pair, host.pod))
    assert all(len(names) <= nodes_per_rack for names in servers.values())
    assert all(len(pairs) == 1 for pairs in pairs_of_rack.values()), "a rack mixes two pairs' or pods' servers"
    network: defaultdict[str, list[str]] = defaultdict(list)
    for switch in plan.switches:
        assert switch.rack, switch.name
        if switch.rack in servers:
            # a ToR leaf stands with servers of its own pair
            assert switch.role is Role.LEAF and switch.pair is not None
            assert {h.pair for h in plan.hosts if h.rack == switch.rack} == {switch.pair}
        else:
            network[switch.rack].append(switch.name)
    assert all(len(names) <= switches_per_rack for names in network.values())
    pods_of_rack = defaultdict(set)
    for switch in plan.switches:
        if switch.rack in network:
            pods_of_rack[switch.rack].add("core" if switch.role is Role.SUPERSPINE else switch.pod)
    assert all(len(pods) == 1 for pods in pods_of_rack.values()), "a network rack mixes pods"


def check_cabling(plan: FabricPlan) -> None:
    rows = connections(plan)
    assert [row.link for row in rows] == list(plan.links), "every link once, in plan order"
    racks = {s.name: s.rack for s in plan.switches} | {h.name: h.rack for h in plan.hosts}
    roles = {s.name: s.role for s in plan.switches}
    pods = {s.name: s.pod for s in plan.switches}
    by_cable = defaultdict(list)
    for row in rows:
        a, b = row.link.a.device, row.link.b.device
        assert (row.a_rack, row.b_rack) == (racks[a], racks[b])
        if racks[a] == racks[b]:
            assert row.media is COPPER
        elif b in roles and (Role.SUPERSPINE in (roles[a], roles[b]) or pods[a] != pods[b]):
            assert row.media is SINGLE_MODE
        else:
            assert row.media is MULTIMODE
        by_cable[row.cable].append(row)
    for cable, shared in by_cable.items():
        if len(shared) > 1:  # only copper shares a cable: one cage's children, on a splitter or cage to cage
            assert {r.media for r in shared} == {COPPER} and len({r.shared for r in shared}) == 1, cable
            cages = {(r.link.a.device, r.a_cage) for r in shared}
            far = {(r.link.b.device, r.b_cage) for r in shared}
            assert len(cages) == 1 or len(far) == 1, cable  # one side is one cage
            if shared[0].shared == CAGE_TO_CAGE:
                assert len(cages) == len(far) == 1
            # A cable has a leg (or lane group) per child of the cage; unused children stay uncabled.
            assert len(shared) <= shared[0].cable_gbps // shared[0].link.speed_gbps

    table = list(csv.reader(io.StringIO(render_cabling_csv(plan))))
    assert tuple(table[0]) == COLUMNS and len(table) == len(rows) + 1

    items = bill_of_materials(plan, rows)
    switches = {i.item: i.quantity for i in items if i.category == "switch"}
    assert switches == Counter(s.model for s in plan.switches)
    assert sum(i.quantity for i in items if i.category == "cable") == len(by_cable)
    ports = {(s.name, p.name): p.cage for s in plan.switches for p in s.ports}
    optical_cages = {(end.device, ports[(end.device, end.port)]) for row in rows if row.media.optical
                     for end in (row.link.a, row.link.b) if end.device in roles}
    assert sum(i.quantity for i in items if i.item.endswith("switch cage")) == len(optical_cages)
    assert sum(i.quantity for i in items if i.item.endswith("server NIC port")) == sum(
        1 for row in rows if row.media.optical and row.link.b.device not in roles)
    bom = list(csv.reader(io.StringIO(render_bom_csv(plan, rows))))
    assert len(bom) == len(items) + 1


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples(name: str) -> None:
    plan = example_plan(name)
    check_placement(plan)
    check_cabling(plan)


def test_tor_pairs_stand_with_their_servers_and_copper_reaches_them() -> None:
    plan = example_plan("pod32")
    rows = connections(plan)
    host_rows = [r for r in rows if r.link.b.device in {h.name for h in plan.hosts}]
    assert {r.media for r in host_rows} == {COPPER, MULTIMODE}  # the pair's own rack, and the racks beside it
    assert all(r.media is MULTIMODE for r in rows if r.link.kind.value == "fabric")
    # The Cumulus pair's servers in its own rack hang off 2x400G splitters: two rows per cable.
    splitter_rows = [r for r in rows if r.splitter]
    assert len(splitter_rows) == 16 and len({r.cable for r in splitter_rows}) == 8


def test_rail_fabric_is_all_optics_and_counts_cages_once() -> None:
    plan = example_plan("cluster1024-rail")
    rows = connections(plan)
    assert {r.media for r in rows} == {MULTIMODE}
    items = {(i.item, i.speed_gbps): i.quantity for i in bill_of_materials(plan, rows)}
    # 128 leaves x 64 cages (32 to servers as 2x400G, 32 up as 2x400G) + 64 spines x 64 cages
    assert items[("multimode transceiver (SR4), switch cage", 800)] == 128 * 64 + 64 * 64
    assert items[("multimode transceiver (SR4), server NIC port", 400)] == 8192
    assert items[("multimode fibre, MPO-12", 400)] == 8192 * 2


def test_three_tier_uplinks_to_superspines_are_single_mode() -> None:
    plan = example_plan("tor128-3tier")
    roles = {s.name: s.role for s in plan.switches}
    for row in connections(plan):
        if Role.SUPERSPINE in (roles.get(row.link.a.device), roles.get(row.link.b.device)):
            assert row.media is SINGLE_MODE


def test_a_splitter_with_unused_legs_is_one_cable(tmp_path: Path) -> None:
    """One server with a 2x100G bond: each member lands on one leg of a 4x100G splitter on its leaf, three legs
    unused, and each splitter is one cable."""
    intent = {
        "fabric": {"name": "tiny"},
        "vlans": [{"id": 101, "name": "t0", "subnet": "10.101.0.0/16", "pair_prefix_length": 24}],
        "underlay": {"asn": {"spine": 64600, "leaf_first": 64700}, "loopback_subnet": "10.0.0.0/20",
                     "p2p_subnet": "10.1.0.0/16", "peer_link_subnet": "10.255.0.0/20"},
        "topology": {"design": "tor-dual-homed", "nodes": 1, "nics_per_node": 1, "nic_speed_gbps": 100,
                     "models": {"leaf": "DCS-7060DX5-64S", "spine": "DCS-7060DX5-64S"}},
        "hosts": {"nccl": {"socket_ifname": "eno1"},
                  "bonds": [{"name": "bond0", "members": ["ens1f0np0", "ens1f1np1"], "rdma_device": "mlx5_bond_0",
                             "speed_gbps": 100, "vlan": 101}]},
    }
    plan = generated_plan(tmp_path, intent)
    check_cabling(plan)
    rows = [r for r in connections(plan) if r.splitter]
    assert [(r.a_cage_gbps, r.link.speed_gbps) for r in rows] == [(400, 100), (400, 100)]
    assert len({(r.link.a.device, r.cable) for r in rows}) == 2  # one splitter on each leaf of the pair


def _fields(rows: list[Connection]) -> list[list[str]]:
    """The cabling plan's header and rows, each field as text: what its CSV must read back as."""
    table = [list(COLUMNS)]
    for row in rows:
        link = row.link
        medium = f"{row.media.name} splitter" if row.shared == SPLITTER else row.media.name
        table.append([row.cable, link.kind.value, link.a.device, link.a.port, row.a_rack, link.b.device,
                      link.b.port, row.b_rack, str(link.speed_gbps), medium, row.media.reach, str(link.length_m)])
    return table


def _csv_module_text(rows: list[Connection]) -> str:
    """The cabling plan as the csv module prints it, with minimal quoting."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(_fields(rows))
    return out.getvalue()


_ANY_TEXT = st.text(st.sampled_from([*'ab ,"\r\n\t;\'é', "\u2028"]), max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_cabling_plan_reads_back_as_written(data: st.DataObject) -> None:
    """Any name, port or rack text (commas, quotes, line breaks, empty) reads back from the CSV as it was; the
    text is csv.writer's wherever no field holds a carriage return (Python 3.11's writer leaves a lone one
    unquoted, which its reader then refuses)."""
    plan = example_plan("lab")
    changed = []
    for row in connections(plan)[:6]:
        a, b = (Endpoint(data.draw(_ANY_TEXT), data.draw(_ANY_TEXT)) for _ in range(2))
        link = replace(row.link, a=a, b=b, length_m=data.draw(st.integers(0, 10**6)))
        # cable ids are rocefab's own (connections: C and five or more digits), printed unquoted
        cable = f"C{data.draw(st.integers(1, 10**7)):05d}"
        changed.append(replace(row, link=link, cable=cable, a_rack=data.draw(_ANY_TEXT),
                               b_rack=data.draw(_ANY_TEXT), shared=data.draw(st.sampled_from(["", SPLITTER]))))
    text = render_cabling_csv(plan, changed)
    assert list(csv.reader(io.StringIO(text, newline=""))) == _fields(changed)
    if not any("\r" in field for line in _fields(changed) for field in line):
        assert text == _csv_module_text(changed)


def test_the_examples_cabling_plans_print_what_the_csv_module_prints() -> None:
    for name in EXAMPLES:
        plan = example_plan(name)
        rows = connections(plan)
        assert all(re.fullmatch(r"C[0-9]{5,}", row.cable) for row in rows), name  # never quoted: see above
        assert render_cabling_csv(plan, rows) == _csv_module_text(rows), name
