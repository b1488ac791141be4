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

from rocefab.renderers.bandwidth_pairs import PerftestPair
from rocefab.renderers.plan import FabricPlan, LinkKind
from rocefab.renderers.record import record

Hop = tuple[str, str, str]  # from device, its port, to device: one direction of one cable
Graph = dict[str, list[tuple[str, str]]]  # per switch: (its port, the switch at the other end) per fabric link
Share = dict[str, float]  # per switch of a neighbourhood: the fraction of a node's QPs arriving there


@record
class Coverage:
    qps: dict[Hop, float]  # expected QPs per direction of every fabric link, over all pairs
    hops: int  # directions of fabric links in the fabric (two per link)

    @property
    def uncovered(self) -> list[Hop]:
        return sorted(hop for hop, n in self.qps.items() if n == 0)

    @property
    def least(self) -> float:
        return min(self.qps.values(), default=0.0)


def _graph(plan: FabricPlan) -> Graph:
    graph: Graph = {}
    for link in plan.links:
        if link.kind is LinkKind.FABRIC:
            graph.setdefault(link.a.device, []).append((link.a.port, link.b.device))
            graph.setdefault(link.b.device, []).append((link.b.port, link.a.device))
    return graph


def _distances(peers: dict[str, tuple[str, ...]], start: frozenset[str]) -> dict[str, int]:
    """Hops from `start` to every switch it reaches, a breadth at a time over each switch's distinct peers (the
    parallel links of a pair of switches are one step; a 98,304-GPU fabric is walked from two dozen starts)."""
    dist = dict.fromkeys(start, 0)
    frontier = list(start)
    d = 0
    while frontier:
        d += 1
        reached = []
        for node in frontier:
            for peer in peers.get(node, ()):
                if peer not in dist:
                    dist[peer] = d
                    reached.append(peer)
        frontier = reached
    return dist


def _distinct_peers(graph: Graph) -> dict[str, tuple[str, ...]]:
    return {node: tuple(dict.fromkeys(peer for _, peer in ends)) for node, ends in graph.items()}


class _Neighbourhood:
    """The walk towards one N(T): each switch's next hops (one step nearer N(T)) and, memoized, how a QP
    entering at a switch arrives over N(T)."""

    def __init__(self, graph: Graph, peers: dict[str, tuple[str, ...]], members: frozenset[str]) -> None:
        self.graph = graph
        self.dist = _distances(peers, members)
        self._hops: dict[str, list[tuple[str, str]]] = {}
        self._shares: dict[str, Share] = {member: {member: 1.0} for member in members}
        self._ports: dict[str, dict[str, list[str]]] = {}

    def ports_to(self, member: str, leaf: str) -> list[str]:
        """The ports of a switch of N(T) cabled to `leaf`, in cabling order."""
        by_peer = self._ports.get(member)
        if by_peer is None:
            by_peer = self._ports[member] = {}
            for port, peer in self.graph[member]:
                by_peer.setdefault(peer, []).append(port)
        return by_peer.get(leaf, [])

    def hops(self, node: str) -> list[tuple[str, str]]:
        found = self._hops.get(node)
        if found is None:
            d = self.dist[node] - 1
            found = self._hops[node] = [(port, peer) for port, peer in self.graph[node] if self.dist.get(peer) == d]
        return found

    def share(self, node: str) -> Share:
        """Where a QP entering at `node` reaches N(T), as fractions (nearest switches first, so the recursion
        is as deep as the fabric has tiers)."""
        found = self._shares.get(node)
        if found is None:
            hops = self.hops(node)
            found = {}
            for _, peer in hops:
                for member, part in self.share(peer).items():
                    found[member] = found.get(member, 0.0) + part / len(hops)
            self._shares[node] = found
        return found

    def climb(self, sources: dict[str, float], qps: dict[Hop, float]) -> None:
        """Add to `qps` the QPs entering at `sources` on their way to N(T), split evenly over the next hops at
        every switch, a distance at a time, farthest first."""
        at = sources
        for d in range(max((self.dist[n] for n in at), default=0), 0, -1):
            nearer: dict[str, float] = {}
            for node, amount in at.items():
                if self.dist[node] != d:
                    nearer[node] = nearer.get(node, 0.0) + amount
                    continue
                hops = self.hops(node)
                part = amount / len(hops)
                for port, peer in hops:
                    qps[(node, port, peer)] += part
                    nearer[peer] = nearer.get(peer, 0.0) + part
            at = nearer


def coverage(plan: FabricPlan, pairs: tuple[PerftestPair, ...]) -> Coverage:
    graph = _graph(plan)
    qps: dict[Hop, float] = {(node, port, peer): 0.0 for node, ends in graph.items() for port, peer in ends}
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
    peers = _distinct_peers(graph)
    for near, target_sets in by_neighbourhood.items():
        walk = _Neighbourhood(graph, peers, near)
        climbing: dict[str, float] = {}
        for targets in target_sets:
            for leaf, amount in routes[targets].items():
                if leaf in walk.dist:
                    climbing[leaf] = climbing.get(leaf, 0.0) + amount
        walk.climb(climbing, qps)
        for targets in target_sets:
            _descend(walk, targets, routes[targets], qps)
    return Coverage(qps, len(qps))


def _descend(walk: _Neighbourhood, targets: frozenset[str], sources: dict[str, float],
             qps: dict[Hop, float]) -> None:
    """The last hop: what the sources' QPs for `targets` bring to each switch of N(T), split over its links
    to T."""
    arriving: dict[str, float] = {}
    for leaf, amount in sources.items():
        if leaf in walk.dist:
            for member, part in walk.share(leaf).items():
                arriving[member] = arriving.get(member, 0.0) + amount * part
    for member, amount in arriving.items():
        down = [(port, leaf) for leaf in targets for port in walk.ports_to(member, leaf)]
        for port, peer in down:
            qps[(member, port, peer)] += amount / len(down)
