"""What the perftest pairs put on each fabric link, as ECMP would spread them.

The coverage claim of bandwidth-tests/: every fabric link (leaf-spine, spine-super-spine), in each
direction, lies on an equal-cost path of some planned pair, and with QPs hashed evenly over the equal-cost
next hops each direction expects at least a few QPs over the whole plan. Hashing decides which link a QP
really takes, so a plan cannot force traffic onto one uplink; it can only make every uplink a candidate
often enough that one carrying nothing is unlikely. A single leaf pair (a lab) has no spine path at all.

How it stays linear in the fabric's size: traffic towards a set of server leaves T reaches T only through
T's neighbours N(T), and every switch outside T is one hop farther from T than from N(T). So the next hops of
a switch outside N(T) and T depend on N(T) alone — the spines of a pod or a rail plane, shared by every leaf
there. Per such neighbourhood the fabric is walked once, carrying every pair's QPs at once up to N(T)
(a linear split, so the sum of the pairs' QPs splits as each would); only the last hop, from N(T) down to T,
is taken per T, with what arrives at each switch of N(T) for that T.
"""

from __future__ import annotations

from itertools import chain, repeat

from rocefab.renderers.bandwidth_pairs import PerftestPair
from rocefab.renderers.plan import FabricPlan, LinkKind
from rocefab.renderers.record import record

Hop = tuple[str, str, str]  # from device, its port, to device: one direction of one cable
Graph = dict[str, list[tuple[str, str]]]  # per switch: (its port, the switch at the other end) per fabric link
Share = dict[str, float]  # per switch of a neighbourhood: the fraction of a node's QPs arriving there
# a switch's links one step nearer N(T): as runs of links to one switch in cabling order, per switch, how many
_Hops = tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...], int]


@record
class Coverage:
    per_switch: dict[tuple[str, str], float]  # expected QPs on each link from a switch to another, over all pairs
    graph: Graph  # the fabric links of each switch
    hops: int  # directions of fabric links in the fabric (two per link)

    @property
    def qps(self) -> dict[Hop, float]:
        """Expected QPs per direction of every fabric link."""
        return {(node, port, peer): self.per_switch[node, peer] for node, ends in self.graph.items()
                for port, peer in ends}

    @property
    def uncovered(self) -> list[Hop]:
        return sorted((node, port, peer) for node, ends in self.graph.items() for port, peer in ends
                      if self.per_switch[node, peer] == 0)

    @property
    def least(self) -> float:
        return min(self.per_switch.values(), default=0.0)


def _graph(plan: FabricPlan) -> Graph:
    graph: Graph = {}
    for link in plan.links:
        if link.kind is LinkKind.FABRIC:
            graph.setdefault(link.a.device, []).append((link.a.port, link.b.device))
            graph.setdefault(link.b.device, []).append((link.b.port, link.a.device))
    return graph


def _distances(peers: dict[str, tuple[str, ...]], start: frozenset[str]) -> dict[str, int]:
    """Hops from `start` to every switch it reaches, a breadth at a time over each switch's distinct peers (the
    parallel links of a pair of switches are one step; a 98,304-GPU fabric is walked from two dozen starts, each
    breadth a union of peer tuples made by C loops)."""
    dist = dict.fromkeys(start, 0)
    frontier: set[str] = set(start)
    d = 0
    while frontier:
        d += 1
        frontier = set(chain.from_iterable(map(peers.get, frontier, repeat(())))).difference(dist)
        dist.update(dict.fromkeys(frontier, d))
    return dist


def _link_runs(graph: Graph) -> dict[str, tuple[tuple[str, int], ...]]:
    """Per switch, its links in cabling order as runs of consecutive links to one switch: (that switch, how many
    links)."""
    found: dict[str, tuple[tuple[str, int], ...]] = {}
    for node, ends in graph.items():
        runs: list[tuple[str, int]] = []
        for _, peer in ends:
            if runs and runs[-1][0] == peer:
                runs[-1] = peer, runs[-1][1] + 1
            else:
                runs.append((peer, 1))
        found[node] = tuple(runs)
    return found


def _merged(runs: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """The runs with each switch's links counted together, in order of first appearance."""
    if len({peer for peer, _ in runs}) == len(runs):
        return runs
    count: dict[str, int] = {}
    for peer, n in runs:
        count[peer] = count.get(peer, 0) + n
    return tuple(count.items())


class _Neighbourhood:
    """The walk towards one N(T): each switch's next hops (the switches one step nearer N(T), with the links to
    each) and, memoized, how a QP entering at a switch arrives over N(T).

    QPs are counted per pair of switches, not per link: every link between two switches is an equal next hop
    whenever one of them is, so each carries the same share, added in the same order; the links get their
    switch pair's count once the walks are done."""

    def __init__(self, peers: dict[str, tuple[str, ...]], runs: dict[str, tuple[tuple[str, int], ...]],
                 members: frozenset[str]) -> None:
        self.runs = runs
        self.dist = _distances(peers, members)
        self._hops: dict[str, _Hops] = {}
        self._shares: dict[str, Share] = {member: {member: 1.0} for member in members}
        self._between: dict[str, dict[str, int]] = {}

    def links_between(self, member: str) -> dict[str, int]:
        """The links from a switch of N(T) to each switch it is cabled to."""
        found = self._between.get(member)
        if found is None:
            found = self._between[member] = dict(_merged(self.runs[member]))
        return found

    def hops(self, node: str) -> _Hops:
        """The links to switches one step nearer N(T): as runs in cabling order, per switch, and how many."""
        found = self._hops.get(node)
        if found is None:
            d, dist = self.dist[node] - 1, self.dist
            runs = tuple([(peer, n) for peer, n in self.runs[node] if dist.get(peer) == d])
            found = self._hops[node] = runs, _merged(runs), sum(n for _, n in runs)
        return found

    def share(self, node: str) -> Share:
        """Where a QP entering at `node` reaches N(T), as fractions (nearest switches first, so the recursion
        is as deep as the fabric has tiers), added up link by link in cabling order."""
        found = self._shares.get(node)
        if found is None:
            runs, _, links = self.hops(node)
            found = {}
            for peer, n in runs:
                arriving = self.share(peer).items()
                for _ in range(n):
                    for member, part in arriving:
                        found[member] = found.get(member, 0.0) + part / links
            self._shares[node] = found
        return found

    def climb(self, sources: dict[str, float], qps: dict[tuple[str, str], float]) -> None:
        """Add to `qps` (per switch and the switch nearer N(T)) the QPs each link between them carries, of those
        entering at `sources` on their way to N(T), split evenly over the next hops at every switch, a distance
        at a time, farthest first."""
        at = sources
        dist = self.dist
        for d in range(max((dist[n] for n in at), default=0), 0, -1):
            nearer: dict[str, float] = {}
            for node, amount in at.items():
                if dist[node] != d:
                    nearer[node] = nearer.get(node, 0.0) + amount
                    continue
                _, per_switch, links = self.hops(node)
                part = amount / links
                for peer, n in per_switch:
                    qps[node, peer] += part
                    arrived = nearer.get(peer, 0.0)
                    for _ in range(n):  # once per link, as many additions as a walk per link makes
                        arrived += part
                    nearer[peer] = arrived
            at = nearer


def coverage(plan: FabricPlan, pairs: tuple[PerftestPair, ...]) -> Coverage:
    graph = _graph(plan)
    runs = _link_runs(graph)
    linked: dict[tuple[str, str], float] = {(node, peer): 0.0 for node, ends in runs.items() for peer, _ in ends}
    # QPs by server leaves, then by client leaf: a large fabric has many pairs but few such routes
    routes: dict[frozenset[str], dict[str, float]] = {}
    for pair in pairs:
        if pair.crosses_spines:
            sources = routes.setdefault(frozenset(pair.server.leaves), {})
            for leaf in pair.client.leaves:  # the client's LAG hashes its QPs over its leaves
                sources[leaf] = sources.get(leaf, 0.0) + pair.qps / len(pair.client.leaves)
    by_neighbourhood: dict[frozenset[str], list[frozenset[str]]] = {}
    for targets in routes:
        near = frozenset(peer for leaf in targets for _, peer in graph.get(leaf, ()))
        if near & targets:  # server leaves cabled to each other: N(T) would hold T itself; not a Clos
            raise ValueError(f"fabric links between server leaves {sorted(near & targets)}")
        by_neighbourhood.setdefault(near, []).append(targets)
    peers = {node: tuple(dict.fromkeys(peer for peer, _ in ends)) for node, ends in runs.items()}  # distinct
    for near, target_sets in by_neighbourhood.items():
        walk = _Neighbourhood(peers, runs, near)
        climbing: dict[str, float] = {}
        for targets in target_sets:
            for leaf, amount in routes[targets].items():
                if leaf in walk.dist:
                    climbing[leaf] = climbing.get(leaf, 0.0) + amount
        walk.climb(climbing, linked)
        for targets in target_sets:
            _descend(walk, targets, routes[targets], linked)
    return Coverage(linked, graph, sum(map(len, graph.values())))


def _descend(walk: _Neighbourhood, targets: frozenset[str], sources: dict[str, float],
             qps: dict[tuple[str, str], float]) -> None:
    """The last hop: what the sources' QPs for `targets` bring to each switch of N(T), split over its links
    to T (added to `qps` per switch pair, as `climb` does)."""
    arriving: dict[str, float] = {}
    for leaf, amount in sources.items():
        if leaf in walk.dist:
            for member, part in walk.share(leaf).items():
                arriving[member] = arriving.get(member, 0.0) + amount * part
    for member, amount in arriving.items():
        between = walk.links_between(member)
        down = [(leaf, between.get(leaf, 0)) for leaf in targets]
        links = sum(n for _, n in down)
        for leaf, n in down:
            if n:
                qps[member, leaf] += amount / links
