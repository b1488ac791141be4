"""ECMP width: does each switch reach the other switches' prefixes over as many equal-cost next hops as the plan
gives it paths?

The expectation comes from the plan's BGP sessions alone. Each switch advertises its `bgp.advertised` prefixes
(loopback, a leaf pair's host subnet, a rail leaf's aggregate of its host /31s, which themselves stay on the leaf);
a switch reaches a prefix over every one of its sessions whose
peer lies one step nearer the prefix's originators, counted in eBGP hops over the planned sessions (what eBGP's
shortest AS path and multipath over equal-length paths from different ASes — `maximum-paths` with multipath
relax — install). A leaf so reaches a remote leaf over one path per uplink session, a spine reaches a leaf pair's
subnet over the sessions to both leaves. A prefix the switch originates itself is not asked about.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rocefab.deploy.verify.checks import Row, Verdict
from rocefab.deploy.verify.observation import NextHop
from rocefab.platforms import unit
from rocefab.renderers.plan import BgpNeighbor, FabricPlan, PortRole, Switch

MAX_PREFIXES = 24  # per switch: enough to see every uplink's paths, few enough to keep verify quick at scale


@dataclass(frozen=True, slots=True)
class PlannedRoute:
    prefix: str
    what: str  # "leaf2-a loopback", "leaf2 pair subnet"
    via: tuple[tuple[str, str], ...]  # the planned next hops: (local port or BGP key, the peer device)


class _Sessions:
    """The plan's BGP sessions and who originates what, computed once per plan."""

    def __init__(self, plan: FabricPlan) -> None:
        self.asn = {sw.name: sw.asn for sw in plan.switches}
        self.peers = {sw.name: sorted({n.peer_device for n in sw.bgp.neighbors} & set(self.asn))
                      for sw in plan.switches}
        self.origins: dict[str, set[str]] = {}
        for sw in plan.switches:
            for prefix in sw.bgp.advertised:
                self.origins.setdefault(prefix, set()).add(sw.name)
        self._distances: dict[frozenset[str], dict[str, int]] = {}
        # per switch: verify asks once for the prefixes to read and again to check them
        self.planned: dict[str, list[PlannedRoute]] = {}

    def distances(self, origin: frozenset[str]) -> dict[str, int]:
        """eBGP hops between every switch and the nearest originator, over the planned sessions. A switch takes
        a path only if its own AS is not on it yet (eBGP's loop check): spines sharing an AS never reach each
        other's loopbacks through a leaf."""
        if origin in self._distances:
            return self._distances[origin]
        dist = dict.fromkeys(origin, 0)
        path_asns = {o: frozenset({self.asn[o]}) for o in origin}
        frontier = sorted(origin)
        while frontier:
            nxt = []
            for name in frontier:
                for peer in self.peers.get(name, ()):
                    if peer not in dist and self.asn[peer] not in path_asns[name]:
                        dist[peer] = dist[name] + 1
                        path_asns[peer] = path_asns[name] | {self.asn[peer]}
                        nxt.append(peer)
            frontier = nxt
        self._distances[origin] = dist
        return dist


_CACHE: dict[int, tuple[FabricPlan, _Sessions]] = {}


def _sessions(plan: FabricPlan) -> _Sessions:
    found = _CACHE.get(id(plan))
    if found is None or found[0] is not plan:
        _CACHE.clear()  # one plan per run; the entry keeps the plan alive so its id is not reused meanwhile
        found = _CACHE[id(plan)] = (plan, _Sessions(plan))
    return found[1]


def local_port(sw: Switch, n: BgpNeighbor) -> str:
    """The interface a session runs over: its own (unnumbered), else the routed port or SVI whose subnet holds
    the peer's address."""
    if n.interface:
        return n.interface
    if n.address:
        peer = ipaddress.ip_address(n.address)
        for p in sw.ports:
            if p.ipv4 and peer in ipaddress.ip_interface(p.ipv4).network:
                return p.name
        spec = unit(sw.platform).spec
        for svi in sw.svis:
            if peer in ipaddress.ip_network(svi.prefix, strict=False):
                return (spec.svi_format if spec else "Vlan{vlan}").format(vlan=svi.vlan)
    return n.address or n.peer_device


def _what(plan: FabricPlan, prefix: str, origin: set[str]) -> str:
    switches = {sw.name: sw for sw in plan.switches}
    if prefix.endswith("/32") and len(origin) == 1:
        return f"{next(iter(origin))} loopback"
    pairs = {switches[o].pair for o in origin if switches[o].pair}
    return f"{pairs.pop()} pair subnet" if len(pairs) == 1 and len(origin) > 1 else f"{', '.join(sorted(origin))} " \
        "subnet"


def _queues(plan: FabricPlan, sw: Switch) -> dict[frozenset[str], list[str]]:
    """The prefixes `sw` is asked about, by the switches that originate them (its own left out)."""
    own = set(sw.bgp.networks) | set(sw.bgp.advertised)
    queues: dict[frozenset[str], list[str]] = {}
    for prefix, origins in _sessions(plan).origins.items():
        if prefix not in own and sw.name not in origins:
            queues.setdefault(frozenset(origins), []).append(prefix)
    return queues


Via = tuple[tuple[str, str], ...]  # (local port, peer device) of each planned next hop


def _via(plan: FabricPlan, sw: Switch, origin: frozenset[str], ports: Sequence[str]) -> Via | None:
    """`sw`'s planned next hops (local port, peer) towards `origin`'s prefixes; None when it cannot reach them by
    design (an AS of its own on every path)."""
    dist = _sessions(plan).distances(origin)
    mine = dist.get(sw.name)
    if not mine:
        return None
    return tuple((ports[i], n.peer_device) for i, n in enumerate(sw.bgp.neighbors)
                 if dist.get(n.peer_device) == mine - 1)


def planned_routes(plan: FabricPlan, sw: Switch) -> list[PlannedRoute]:
    """The prefixes `sw` is checked for, each with its planned next hops: one prefix per originator in turn (its
    loopback, then its subnets), up to MAX_PREFIXES."""
    sessions = _sessions(plan)
    known = sessions.planned.get(sw.name)
    if known is not None:
        return list(known)
    # Interleave originators so a capped list still covers each neighbour's paths.
    queues = _queues(plan, sw)
    picked: list[PlannedRoute] = []
    ports = [local_port(sw, n) for n in sw.bgp.neighbors]
    while len(picked) < MAX_PREFIXES and any(queues.values()):
        for origin, prefixes in queues.items():
            if not prefixes or len(picked) >= MAX_PREFIXES:
                continue
            prefix = prefixes.pop(0)
            via = _via(plan, sw, origin, ports)
            if via is None:
                prefixes.clear()  # unreachable by design: none of its prefixes
                continue
            picked.append(PlannedRoute(prefix, _what(plan, prefix, set(origin)), via))
    sessions.planned[sw.name] = picked
    return list(picked)


def routes_through(plan: FabricPlan, sw: Switch, devices: set[str], limit: int = MAX_PREFIXES) -> list[PlannedRoute]:
    """`sw`'s planned routes with a next hop through one of `devices` (what draining them moves), up to two
    prefixes per originator set, up to `limit`: unlike `planned_routes`, not capped before it finds them."""
    ports = [local_port(sw, n) for n in sw.bgp.neighbors]
    picked: list[PlannedRoute] = []
    for origin, prefixes in _queues(plan, sw).items():
        via = _via(plan, sw, origin, ports)
        if via is not None and any(peer in devices for _, peer in via):
            picked += [PlannedRoute(prefix, _what(plan, prefix, set(origin)), via) for prefix in prefixes[:2]]
        if len(picked) >= limit:
            break
    return picked[:limit]


def ecmp_rows(plan: FabricPlan, sw: Switch, routes: Mapping[str, tuple[NextHop, ...]]) -> list[Row]:
    """One `ecmp` row per planned route: fewer next hops than planned fails (and names the planned ports no
    next hop leaves by, when the device says which interface each uses); more than planned is a warning."""
    rows = []
    for route in planned_routes(plan, sw):
        hops = routes.get(route.prefix, ())
        seen = {h.interface for h in hops if h.interface}
        missing = [f"{port} ({peer})" for port, peer in route.via if seen and port not in seen] if hops else \
            [f"{port} ({peer})" for port, peer in route.via]
        planned = len(route.via)
        observed = f"{len(hops)} paths" + (f"; missing {', '.join(missing)}" if missing else "")
        verdict = Verdict.FAIL if len(hops) < planned or missing else Verdict.WARN if len(hops) > planned \
            else Verdict.PASS
        rows.append(Row(sw.name, route.prefix, "ecmp", f"{planned} paths ({route.what})", observed, verdict))
    return rows


def host_gbps(sw: Switch) -> int:
    return sum(p.speed_gbps for p in sw.ports if p.role is PortRole.HOST)
