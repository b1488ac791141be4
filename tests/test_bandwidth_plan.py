"""The bandwidth acceptance plan (renderers/bandwidth_pairs.py, bandwidth_coverage.py, bandwidth.py) as
properties over the example intents: rounds never reuse a NIC or a leaf, every rail, leaf pair, pod and
fabric link is exercised, and the rendered scripts are clean shell."""

from __future__ import annotations

import ipaddress
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import INTENTS as INTENT_FOLDER
from conftest import example_plan, generated_plan, needs_tool
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.renderers.bandwidth import render_bandwidth_tests, roce_gid
from rocefab.renderers.bandwidth_coverage import coverage
from rocefab.renderers.bandwidth_pairs import BandwidthPlan, bandwidth_plan
from rocefab.renderers.plan import FabricPlan

INTENTS = ["lab", "pod32", "tor128-3tier", "cluster1024-rail"]
RAIL = ["cluster1024-rail"]
TOR_MULTI_PAIR = ["pod32", "tor128-3tier"]


def planned(name: str) -> tuple[FabricPlan, BandwidthPlan]:
    plan = example_plan(name)
    return plan, bandwidth_plan(plan)


@pytest.mark.parametrize("name", INTENTS)
def test_no_nic_and_no_leaf_twice_in_a_round(name: str) -> None:
    _, bw = planned(name)
    assert bw.pairs and bw.rounds == max(p.round for p in bw.pairs)
    nics: Counter[tuple[int, str, str]] = Counter()
    groups: Counter[tuple[int, str]] = Counter()
    for p in bw.pairs:
        nics.update([(p.round, p.client.host, p.client.device), (p.round, p.server.host, p.server.device)])
        if p.crosses_spines:
            groups.update([(p.round, p.client.group), (p.round, p.server.group)])
    assert max(nics.values()) == 1
    assert not groups or max(groups.values()) == 1


@pytest.mark.parametrize("name", INTENTS)
def test_every_rdma_port_sends_and_receives(name: str) -> None:
    plan, bw = planned(name)
    ports = {(h.name, d) for h in plan.hosts for d in h.rdma_devices}
    assert {(p.client.host, p.client.device) for p in bw.pairs} == ports
    assert {(p.server.host, p.server.device) for p in bw.pairs} == ports
    pct = plan.operations.perftest_percent_of_line_rate
    for p in bw.pairs:
        assert p.line_rate_gbps == min(p.client.line_rate_gbps, p.server.line_rate_gbps)
        assert p.min_gbps == pytest.approx(p.line_rate_gbps * pct / 100)
        assert p.client.host != p.server.host


@pytest.mark.parametrize("name", RAIL)
def test_every_rail_and_every_rail_leaf_goes_through_the_spines(name: str) -> None:
    plan, bw = planned(name)
    rails = {n.rail for h in plan.hosts for n in h.nics}
    leaves = {n.switch for h in plan.hosts for n in h.nics}
    same_rail = [p for p in bw.pairs if p.client.rail == p.server.rail]
    assert {p.client.rail for p in same_rail} == rails
    assert all(p.crosses_spines and p.client.leaves != p.server.leaves for p in same_rail)
    assert {p.client.group for p in same_rail} == leaves == {p.server.group for p in same_rail}
    # ranks talking across rails: every leaf sends to the next rail once
    cross = [p for p in bw.pairs if p.client.rail != p.server.rail]
    assert {p.client.group for p in cross} == leaves
    assert {(p.client.rail, p.server.rail) for p in cross} == {(r, (r + 1) % len(rails)) for r in rails}


@pytest.mark.parametrize("name", TOR_MULTI_PAIR)
def test_every_leaf_pair_reaches_another_through_the_spines(name: str) -> None:
    plan, bw = planned(name)
    pairs = {sw.pair for sw in plan.switches if sw.pair}
    assert all(p.crosses_spines and p.client.group != p.server.group for p in bw.pairs)
    assert {p.client.group for p in bw.pairs} == pairs == {p.server.group for p in bw.pairs}
    pods = {sw.pod for sw in plan.switches if sw.pod is not None}
    if pods:  # three tiers: every pod sends to another pod, so the super-spines carry traffic
        cross_pod = [p for p in bw.pairs if p.client.pod != p.server.pod]
        assert {p.client.pod for p in cross_pod} == pods


@pytest.mark.parametrize("name", [*TOR_MULTI_PAIR, *RAIL])
def test_every_fabric_link_is_on_some_path_in_both_directions(name: str) -> None:
    """The coverage claim: each direction of every leaf-spine and spine-super-spine link is an equal-cost
    next hop of some pair, and spread evenly by ECMP expects at least 4 QPs over the plan."""
    plan, bw = planned(name)
    cover = coverage(plan, bw.pairs)
    fabric_links = sum(1 for link in plan.links if link.kind.value == "fabric")
    assert cover.hops == 2 * fabric_links
    assert cover.uncovered == []
    assert cover.least >= 4


def _hops_from(graph: dict[str, list[tuple[str, str]]], leaves: tuple[str, ...]) -> dict[str, int]:
    dist = dict.fromkeys(leaves, 0)
    frontier = list(leaves)
    while frontier:
        reached = []
        for node in frontier:
            for _, peer in graph.get(node, ()):
                if peer not in dist:
                    dist[peer] = dist[node] + 1
                    reached.append(peer)
        frontier = reached
    return dist


def _reference_qps(plan: FabricPlan, bw: BandwidthPlan) -> dict[tuple[str, str, str], float]:
    """The coverage, computed the slow and obvious way: per pair, a breadth-first search from its server leaves
    and its QPs split evenly over the next hops at every switch, a hop at a time."""
    graph: dict[str, list[tuple[str, str]]] = {}
    for link in plan.links:
        if link.kind.value == "fabric":
            graph.setdefault(link.a.device, []).append((link.a.port, link.b.device))
            graph.setdefault(link.b.device, []).append((link.b.port, link.a.device))
    qps = {(node, port, peer): 0.0 for node, ends in graph.items() for port, peer in ends}
    searched: dict[tuple[str, ...], dict[str, int]] = {}
    for pair in bw.pairs:
        if not pair.crosses_spines:
            continue
        if pair.server.leaves in searched:
            dist = searched[pair.server.leaves]
        else:
            dist = searched[pair.server.leaves] = _hops_from(graph, pair.server.leaves)
        for leaf in pair.client.leaves:
            at = {leaf: pair.qps / len(pair.client.leaves)}
            while at:
                step: dict[str, float] = {}
                for node, amount in at.items():
                    if dist[node] == 0:
                        continue
                    hops = [(port, peer) for port, peer in graph[node] if dist.get(peer) == dist[node] - 1]
                    for port, peer in hops:
                        qps[(node, port, peer)] += amount / len(hops)
                        step[peer] = step.get(peer, 0.0) + amount / len(hops)
                at = step
    return qps


@pytest.mark.parametrize("name", [*TOR_MULTI_PAIR, "cluster256-rail"])
def test_coverage_equals_the_per_pair_walk(name: str, tmp_path: Path) -> None:
    """The coverage walks each neighbourhood of server leaves once; per pair, hop by hop, it must come out the
    same on every direction of every link. (The rail example at a quarter of its size: the walk per pair is
    slow.)"""
    if name == "cluster256-rail":
        intent = yaml.safe_load((INTENT_FOLDER / "cluster1024-rail.yaml").read_text())
        intent["topology"]["nodes"] = 256
        plan = generated_plan(tmp_path, intent)
        bw = bandwidth_plan(plan)
    else:
        plan, bw = planned(name)
    fast = coverage(plan, bw.pairs).qps
    slow = _reference_qps(plan, bw)
    assert fast.keys() == slow.keys()
    assert all(abs(fast[hop] - slow[hop]) < 1e-9 * max(1.0, slow[hop]) for hop in slow)
    assert {hop for hop, n in fast.items() if n == 0} == {hop for hop, n in slow.items() if n == 0}


def test_one_leaf_pair_has_no_spine_path_and_says_so() -> None:
    plan, bw = planned("lab")
    assert not any(p.crosses_spines for p in bw.pairs)
    assert len(coverage(plan, bw.pairs).uncovered) == 2 * sum(1 for x in plan.links if x.kind.value == "fabric")
    rounds = {path: content for path, _, content in render_bandwidth_tests(plan)}
    assert "no pair crosses a spine" in rounds["bandwidth-tests/perftest-rounds.txt"]


@pytest.mark.parametrize("name", ["lab", "pod32"])
def test_the_commands_carry_the_roce_traffic_class_and_gid(name: str) -> None:
    plan, bw = planned(name)
    files = {path: content for path, _, content in render_bandwidth_tests(plan)}
    text = files["bandwidth-tests/perftest-rounds.txt"]
    first = bw.pairs[0]
    assert f"--tclass={plan.qos.roce_tos}" in text and plan.qos.roce_tos == plan.qos.roce_dscp << 2 | 2
    assert f"#   client: ib_write_bw -d DEVICE -x GID_INDEX -F --report_gbits -D {bw.duration_s} -q QPS -p PORT " \
        f"--tclass={plan.qos.roce_tos} SERVER_ADDRESS\n" in text
    assert (f"  pair 1: {first.client.name} {first.client.address} -> {first.server.name} {first.server.address} "
            f"({first.scope}), {first.qps} QPs on port {first.port}, at least {first.min_gbps:g} Gb/s") in text
    script = files["bandwidth-tests/run-perftest.sh"]
    assert (f"pair 1 1 {first.client.host} {first.client.device} {roce_gid(first.client.address)} "
            f"{first.server.host}") in script
    assert roce_gid("10.101.0.4") == "0000:0000:0000:0000:0000:ffff:0a65:0004"


_OCTETS = st.one_of(st.integers(0, 300).map(str),
                    st.sampled_from(["010", "00", "-1", "+1", "0x1", " 1", "1 ", "", "\u0661"]))


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.lists(_OCTETS, min_size=3, max_size=5).map(".".join), st.text(max_size=20)))
def test_a_gid_is_the_mapped_address_or_the_address_is_refused(address: str) -> None:
    """roce_gid looks octets up in a table; it agrees with ipaddress on every text, address or not."""
    try:
        expected = "0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}".format(
            *ipaddress.IPv4Address(address).packed)
    except ValueError:
        with pytest.raises(ValueError):
            roce_gid(address)
        return
    assert roce_gid(address) == expected


def _write(tmp: Path, name: str, only: tuple[str, ...] = ()) -> list[Path]:
    written = []
    for path, _, content in render_bandwidth_tests(example_plan(name)):
        if path.endswith((".sh", ".sbatch")) and (not only or path.endswith(only)):
            target = tmp / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(target)
    return written


@needs_tool("shellcheck", "shellcheck")
def test_rendered_scripts_pass_shellcheck(tmp_path: Path) -> None:
    # the 1,024-node runner is the same template with 8,320 pair lines; its NCCL scripts are linted in full
    scripts = [s for name in ["lab", "pod32", "tor128-3tier"] for s in _write(tmp_path, name)]
    scripts += _write(tmp_path, "cluster1024-rail", (".sbatch", "mpirun.sh"))
    for script in scripts:
        result = subprocess.run(["shellcheck", "-S", "style", str(script)], capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0


def test_the_runner_starts_servers_then_clients_with_quoted_arguments(tmp_path: Path) -> None:
    """run-perftest.sh for real, with ssh replaced by a recorder: round 1 of the lab is two pairs."""
    (script,) = _write(tmp_path, "lab", ("run-perftest.sh",))
    log = tmp_path / "ssh.log"
    fake = tmp_path / "fake-ssh"
    fake.write_text(f'#!/bin/sh\nprintf "%s|%s\\n" "$1" "$2" >> {log}\necho "ran on $1"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "ROCEFAB_SSH": str(fake), "ROCEFAB_SERVER_WAIT_S": "0"}
    out = tmp_path / "results"
    result = subprocess.run(["bash", str(script), "-o", str(out), "1"], capture_output=True, text=True, env=env,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert sorted(c.split("|")[0] for c in calls) == ["gpu001", "gpu002", "gpu003", "gpu004"]
    client = next(c for c in calls if c.startswith("gpu001|")).split("|")[1]
    # the remote command is one shell line: sh -c SCRIPT name device gid index options... server-address
    assert client.startswith("sh -c ") and "\n" not in client
    assert "mlx5_bond_0 0000:0000:0000:0000:0000:ffff:0a65:0004 auto -F --report_gbits -D 10 -q 8 -p 18515 " \
           "--tclass=106 10.101.0.6" in client
    assert (out / "round-001" / "pair-00001.client.txt").read_text() == "ran on gpu001\n"
    assert (out / "round-001" / "pair-00001.server.txt").read_text() == "ran on gpu003\n"
    bad = subprocess.run(["bash", str(script), "3"], capture_output=True, text=True, env=env, check=False)
    assert bad.returncode == 2 and "rounds 1-2" in bad.stderr
