"""What the perftest pairs put on each fabric link, as ECMP would spread them.

The coverage claim of bandwidth-tests/: every fabric link (leaf-spine, spine-super-spine), in each
direction, lies on an equal-cost path of some planned pair, and with QPs hashed evenly over the equal-cost
next hops each direction expects at least a few QPs over the whole plan. Hashing decides which link a QP
really takes, so a plan cannot force traffic onto one uplink; it can only make every uplink a candidate
often enough that one carrying nothing is unlikely. A single leaf pair (a lab) has no spine path at all.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from rocefab.renderers.bandwidth_pairs import PerftestPair
from rocefab.renderers.plan import FabricPlan, LinkKind

Hop = tuple[str, str, str]  # from device, its port, to device: one direction of one cable


@dataclass(frozen=True, slots=True)
class Coverage:
    qps: dict[Hop, float]  # expected QPs per direction of every fabric link, over all pairs
    hops: int  # directions of fabric links in the fabric (two per link)

    @property
    def uncovered(self) -> list[Hop]:
        return sorted(hop for hop, n in self.qps.items() if n == 0)

    @property
    def least(self) -> float:
        return min(self.qps.values(), default=0.0)


def _graph(plan: FabricPlan) -> dict[str, list[tuple[str, str]]]:
    """Per switch: (its port, the switch at the other end) of each fabric link."""
    graph: dict[str, list[tuple[str, str]]] = {}
    for link in plan.links:
        if link.kind is LinkKind.FABRIC:
            graph.setdefault(link.a.device, []).append((link.a.port, link.b.device))
            graph.setdefault(link.b.device, []).append((link.b.port, link.a.device))
    return graph


def _distances(graph: dict[str, list[tuple[str, str]]], targets: frozenset[str]) -> dict[str, int]:
    dist = dict.fromkeys(targets, 0)
    queue = deque(targets)
    while queue:
        node = queue.popleft()
        for _, peer in graph.get(node, ()):
            if peer not in dist:
                dist[peer] = dist[node] + 1
                queue.append(peer)
    return dist


def _spread(graph: dict[str, list[tuple[str, str]]], sources: dict[str, float], dist: dict[str, int],
            qps: dict[Hop, float]) -> None:
    """Add to `qps` the QPs entering at `sources` towards the targets of `dist`, split evenly over the next-hop
    links at every switch (eBGP ECMP: each parallel link is a next hop of its own). Every next hop is one
    step nearer, so switches are taken a distance at a time, farthest first."""
    at = {node: amount for node, amount in sources.items() if node in dist}
    for d in range(max((dist[n] for n in at), default=0), 0, -1):
        nearer: dict[str, float] = {}
        for node, amount in at.items():
            if dist[node] != d:
                nearer[node] = nearer.get(node, 0.0) + amount
                continue
            hops = [(port, peer) for port, peer in graph[node] if dist.get(peer, -1) == d - 1]
            for port, peer in hops:
                qps[(node, port, peer)] += amount / len(hops)
                nearer[peer] = nearer.get(peer, 0.0) + amount / len(hops)
        at = nearer


def coverage(plan: FabricPlan, pairs: tuple[PerftestPair, ...]) -> Coverage:
    graph = _graph(plan)
    qps: dict[Hop, float] = {(node, port, peer): 0.0 for node, ends in graph.items() for port, peer in ends}
    # QPs by (client leaf, server leaves) first: a large fabric has thousands of pairs but few such routes
    routes: dict[tuple[str, frozenset[str]], float] = {}
    for pair in pairs:
        if pair.crosses_spines:
            targets = frozenset(pair.server.leaves)
            for leaf in pair.client.leaves:  # the client's LAG hashes its QPs over its leaves
                routes[(leaf, targets)] = routes.get((leaf, targets), 0.0) + pair.qps / len(pair.client.leaves)
    by_targets: dict[frozenset[str], dict[str, float]] = {}
    for (leaf, targets), weight in routes.items():
        by_targets.setdefault(targets, {})[leaf] = weight
    for targets, sources in by_targets.items():
        _spread(graph, sources, _distances(graph, targets), qps)
    return Coverage(qps, len(qps))
