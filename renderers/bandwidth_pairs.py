"""Which NICs test against which: the perftest pairs of the bandwidth acceptance plan, their rounds, and the
NCCL run's target. Every decision of bandwidth-tests/ is made here; renderers/bandwidth.py only prints it.

The pairing, per plane (a rail of a rail-optimized fabric; the whole fabric of a ToR dual-homed one):
its RDMA ports are listed group by group (a group is what one port attaches to: a leaf, or a leaf pair),
groups ordered round-robin across pods, and port i sends to port i + m, where m is the largest group. So every
port is a client once and a server once, and whenever no group holds more than half of the plane's ports its
partner is in another group: every pair then crosses the spine tier (and, with pods, the super-spines).
A rail-optimized fabric also gets one cross-rail pair per leaf, since ranks that talk across rails (NCCL
without PXN, or other jobs) go leaf -> spine -> another rail's leaf.

Rounds hold each group at most once (and hence each NIC at most once): pairs of one round share no leaf, no
uplink and no host port, so a pair's shortfall is its own path's, never another pair's traffic.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import zip_longest

from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import A_DEVICE, LINK_SPEED, FabricPlan, Host, Switch, fabric_links
from rocefab.renderers.record import record

PERFTEST_BASE_PORT = 18515  # perftest's own default; a host's n-th RDMA device serves on base + n
DURATION_S = 10
# Each QP carries at most a quarter of the slowest link on its path, so a pair keeps its line rate unless
# more than four of its QPs hash onto one uplink.
QPS_PER_LINK = 4
# Across the plan, QPs leaving (and entering) a group's uplinks: at least this many per uplink when hashing
# spreads them evenly, so that an uplink carrying none is unlikely (about e**-8 per uplink when uniform).
QPS_PER_UPLINK = 8
MAX_QPS = 32
NCCL_MAX_BYTES = 8 * 1024**3  # all_reduce_perf -e 8G


@record
class RdmaPort:
    """One RDMA device as the tests see it."""

    host: str
    device: str
    address: str  # the RoCE address (its GID is ::ffff:address), without prefix length
    line_rate_gbps: int  # a bond: both members
    leaves: tuple[str, ...]  # the leaves its cables reach
    group: str  # a leaf pair (ToR) or a leaf (rail-optimized): what a round holds at most once
    pod: int | None
    rail: int | None
    index: int  # its place among the host's RDMA devices: which TCP port its server listens on

    @property
    def name(self) -> str:
        return f"{self.host}/{self.device}"


@record
class PerftestPair:
    round: int  # from 1
    number: int  # from 1, in round order
    client: RdmaPort  # ib_write_bw writes from client to server
    server: RdmaPort
    scope: str  # what the pair exercises, in words
    crosses_spines: bool
    qps: int
    port: int  # the server's TCP port for perftest's out-of-band exchange
    line_rate_gbps: int  # the slower end's
    min_gbps: float  # percent of that line rate


@record
class NcclRun:
    hosts: tuple[str, ...]
    node_line_rate_gbps: int  # the slowest host's RDMA ports together
    percent: int
    min_busbw_gbytes: float  # GB/s as nccl-tests prints it (10**9 bytes)
    max_bytes: int


@record
class BandwidthPlan:
    pairs: tuple[PerftestPair, ...]
    rounds: int
    percent: int
    duration_s: int
    tclass: int  # the GRH traffic class = IPv4 TOS byte of RoCEv2: the fabric's DSCP << 2 | ECT(0)
    gid_index: int | None  # pinned by the intent (NCCL_IB_GID_INDEX); None: looked up on each host
    nccl: NcclRun | None  # None: fewer than two hosts


def _ports(switches: dict[str, Switch], host: Host) -> list[RdmaPort]:
    ports: list[RdmaPort] = []
    for index, bond in enumerate(host.bonds):
        leaves = tuple(sorted({m.switch for m in bond.members}, key=natural_key))
        leaf = switches[leaves[0]]
        ports.append(RdmaPort(host.name, bond.rdma_device, bond.source, bond.speed_gbps * len(bond.members), leaves,
                              leaf.pair or "+".join(leaves), leaf.pod, None, index))
    for index, nic in enumerate(host.nics, start=len(host.bonds)):
        leaf = switches[nic.switch]
        ports.append(RdmaPort(host.name, nic.rdma_device, nic.source, nic.speed_gbps, (nic.switch,), nic.switch,
                              leaf.pod, nic.rail, index))
    return ports


def _planes(ports: list[RdmaPort]) -> dict[str, list[RdmaPort]]:
    planes: dict[str, list[RdmaPort]] = {}
    for port in ports:
        planes.setdefault("fabric" if port.rail is None else f"rail {port.rail}", []).append(port)
    return planes


def _ordered(ports: list[RdmaPort], rank: dict[str, int]) -> list[RdmaPort]:
    """The plane's ports group by group, the groups taken round-robin across pods so that neighbours (and so
    partners) sit in different pods wherever there are several; in a group, by host (`rank`: each host's place in
    natural order) and index."""
    groups: dict[str, list[RdmaPort]] = {}
    for port in ports:
        groups.setdefault(port.group, []).append(port)
    by_pod: dict[int, list[str]] = {}
    for name, members in groups.items():
        by_pod.setdefault(members[0].pod if members[0].pod is not None else -1, []).append(name)
    columns = [sorted(names, key=natural_key) for _, names in sorted(by_pod.items())]
    order = [name for row in zip_longest(*columns) for name in row if name is not None]
    return [p for name in order for p in sorted(groups[name], key=lambda p: (rank[p.host], p.index))]


def _same_plane(ports: list[RdmaPort], rank: dict[str, int]) -> list[tuple[RdmaPort, RdmaPort]]:
    ordered = _ordered(ports, rank)
    n = len(ordered)
    largest = max(Counter(p.group for p in ordered).values(), default=0)
    # With no group above half the plane a shift by the largest group never lands in the client's own group;
    # otherwise (one leaf pair, as in a lab) the partners share groups and only the leaves are tested.
    shift = largest if n >= 2 * largest else n // 2
    if shift == 0:
        return []
    return [(ordered[i], ordered[(i + shift) % n]) for i in range(n)]


def _cross_rail(same: dict[str, list[tuple[RdmaPort, RdmaPort]]],
                by_host: dict[str, list[RdmaPort]]) -> list[tuple[RdmaPort, RdmaPort]]:
    """One pair per leaf: its first client sends to the next rail's NIC of the host it already sends to."""
    rails = sorted({p.rail for ports in by_host.values() for p in ports if p.rail is not None})
    if len(rails) < 2:
        return []
    pairs: list[tuple[RdmaPort, RdmaPort]] = []
    for plane in same.values():
        seen: set[str] = set()
        for client, partner in plane:
            if client.group in seen or client.rail is None:
                continue
            seen.add(client.group)
            next_rail = rails[(rails.index(client.rail) + 1) % len(rails)]
            server = next((p for p in by_host[partner.host] if p.rail == next_rail), None)
            if server is not None:
                pairs.append((client, server))
    return pairs


def _uplinks(plan: FabricPlan) -> tuple[dict[str, int], dict[str, int]]:
    """Per leaf: how many fabric links it has, and the slowest one's speed (the links read by C loops: 294,912
    at 98,304 GPUs)."""
    fabric = fabric_links(plan.links)
    leaves = list(map(A_DEVICE, fabric))
    slowest: dict[str, int] = {}
    speeds = map(LINK_SPEED, fabric)
    for leaf, speed in dict.fromkeys(zip(leaves, speeds, strict=True)):  # each leaf's speeds, once each
        slowest[leaf] = min(slowest.get(leaf, speed), speed)
    return dict(Counter(leaves)), slowest



def _schedule(pairs: list[tuple[RdmaPort, RdmaPort, bool]]) -> list[int]:
    """First-fit rounds (from 0): a pair takes the first round in which none of its NICs, and for a pair
    through the spines none of its groups, is taken yet."""
    nics: dict[tuple[str, str], int] = {}  # a bit per round the NIC is taken in
    groups: dict[str, int] = {}  # the same per group
    rounds: list[int] = []
    for client, server, crosses in pairs:
        ends = (client.host, client.device), (server.host, server.device)
        busy = nics.get(ends[0], 0) | nics.get(ends[1], 0)
        if crosses:
            busy |= groups.get(client.group, 0) | groups.get(server.group, 0)
        r = (~busy & (busy + 1)).bit_length() - 1  # the lowest round free for every key
        bit = 1 << r
        for end in ends:
            nics[end] = nics.get(end, 0) | bit
        if crosses:
            for group in (client.group, server.group):
                groups[group] = groups.get(group, 0) | bit
        rounds.append(r)
    return rounds


def _scope(client: RdmaPort, server: RdmaPort, crosses: bool) -> str:
    if client.rail is not None and server.rail is not None:
        if client.rail != server.rail:
            return f"cross-rail {client.rail} -> {server.rail}: {client.group} -> spines -> {server.group}"
        return f"rail {client.rail}: {client.group} -> spines -> {server.group}"
    if not crosses:
        return f"within {client.group}: no spine between them"
    pods = "" if client.pod == server.pod else f" (pod {client.pod} -> pod {server.pod})"
    return f"{client.group} -> spines -> {server.group}{pods}"


def _cover_qps(flagged: list[tuple[RdmaPort, RdmaPort, bool]], uplinks: dict[str, int]) -> dict[str, int]:
    """Per group: the QPs each of its pairs needs for its uplinks to see QPS_PER_UPLINK each over the plan."""
    clients: Counter[str] = Counter(c.group for c, _, crosses in flagged if crosses)
    leaves = {p.group: p.leaves for c, s, _ in flagged for p in (c, s)}
    return {group: math.ceil(QPS_PER_UPLINK * sum(uplinks.get(leaf, 0) for leaf in members) / max(1, clients[group]))
            for group, members in leaves.items()}


def _qps(client: RdmaPort, server: RdmaPort, crosses: bool, slowest: dict[str, int], cover: dict[str, int]) -> int:
    if not crosses:
        return min(MAX_QPS, QPS_PER_LINK * max(1, len(client.leaves)))
    rate = min(client.line_rate_gbps, server.line_rate_gbps)
    link = min(slowest.get(leaf, rate) for leaf in client.leaves + server.leaves)
    return min(MAX_QPS, max(QPS_PER_LINK * math.ceil(rate / link), cover[client.group], cover[server.group]))


def bandwidth_plan(plan: FabricPlan) -> BandwidthPlan:
    ops = plan.operations
    switches = {sw.name: sw for sw in plan.switches}
    by_host = {h.name: _ports(switches, h) for h in plan.hosts}
    ports = [p for host_ports in by_host.values() for p in host_ports]
    rank = {name: i for i, name in enumerate(sorted(by_host, key=natural_key))}  # once, not per port and plane
    same = {name: _same_plane(members, rank) for name, members in sorted(_planes(ports).items(), key=lambda kv:
                                                                      natural_key(kv[0]))}
    candidates = [pair for plane in same.values() for pair in plane] + _cross_rail(same, by_host)
    flagged = [(c, s, not set(c.leaves) & set(s.leaves)) for c, s in candidates]
    uplinks, slowest = _uplinks(plan)
    cover = _cover_qps(flagged, uplinks)
    rounds = _schedule(flagged)
    order = sorted(range(len(flagged)), key=lambda i: (rounds[i], i))
    pairs = []
    # What a pair's scope, QPs and rates are made of is the same for the many pairs between two groups (a
    # 98,304-GPU fabric: 99,840 pairs of 3,072 kinds), so each kind is worked out once.
    kinds: dict[tuple[object, ...], tuple[str, int, int, float]] = {}
    for number, i in enumerate(order, start=1):
        client, server, crosses = flagged[i]
        kind = (client.group, client.leaves, client.pod, client.rail, client.line_rate_gbps,
                server.group, server.leaves, server.pod, server.rail, server.line_rate_gbps, crosses)
        made = kinds.get(kind)
        if made is None:
            rate = min(client.line_rate_gbps, server.line_rate_gbps)
            made = kinds[kind] = (_scope(client, server, crosses), _qps(client, server, crosses, slowest, cover),
                                  rate, round(rate * ops.perftest_percent_of_line_rate / 100, 1))
        scope, qps, rate, least = made
        pairs.append(PerftestPair(rounds[i] + 1, number, client, server, scope, crosses, qps,
                                  PERFTEST_BASE_PORT + server.index, rate, least))
    pinned = dict(plan.host_profile.nccl_env).get("NCCL_IB_GID_INDEX")
    return BandwidthPlan(tuple(pairs), max(rounds, default=-1) + 1, ops.perftest_percent_of_line_rate, DURATION_S,
                         plan.qos.roce_tos, int(pinned) if pinned is not None else None, _nccl(plan, by_host))


def _nccl(plan: FabricPlan, by_host: dict[str, list[RdmaPort]]) -> NcclRun | None:
    """nccl-tests' busbw is the bandwidth each rank's bottleneck link carries. Across nodes, NCCL spreads its
    channels over the node's NICs and each channel leaves the node through one of them, so a node's busbw
    tends to the sum of its NICs' line rates (8 x 400G: 400 GB/s) when NVLink is not the narrower part; the
    target is a percentage of that, for the slowest node."""
    if len(plan.hosts) < 2:
        return None
    node_rate = min(sum(p.line_rate_gbps for p in ports) for ports in by_host.values())
    pct = plan.operations.allreduce_busbw_percent_of_line_rate
    return NcclRun(tuple(sorted(by_host, key=natural_key)), node_rate, pct,
                   round(node_rate / 8 * pct / 100, 1), NCCL_MAX_BYTES)
