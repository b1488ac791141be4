"""Which devices a lab cut keeps: a small, representative, connected subset of the plan (a leaf pair or two
rails' leaves, the spines and super-spines above them, two hosts) with the links between them, parallel links
capped. renderers/containerlab.py writes the cut as a topology."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable

from rocefab.renderers.plan import FabricPlan, Host, Link, LinkKind, Role, Switch
from rocefab.renderers.record import record

MAX_SUPERSPINES = 2
MAX_SPINES = 2
MAX_RAILS = 2  # rail-optimized fabrics: the first two rails of the first pod
LEAVES_PER_RAIL = 2  # two leaves per rail, so same-rail traffic between hosts crosses a spine
MAX_HOSTS = 2
# Parallel links between two switches beyond this many add container ports (and VM NICs) without showing
# anything new: two still exercise ECMP, parallel BGP sessions and a two-member peer-link.
MAX_PARALLEL_LINKS = 2


@record
class LabCut:
    """The devices and links a lab keeps, each tuple in plan order."""

    superspines: tuple[Switch, ...]
    spines: tuple[Switch, ...]
    leaves: tuple[Switch, ...]
    hosts: tuple[Host, ...]
    links: tuple[Link, ...]

    @property
    def switches(self) -> tuple[Switch, ...]:
        return (*self.superspines, *self.spines, *self.leaves)

    @property
    def device_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.switches) + tuple(h.name for h in self.hosts)


def _switch_link_counts(links: Iterable[Link], touching: Collection[str]) -> dict[str, dict[str, int]]:
    """Links between each two switches one of which is in `touching`, both directions; host links (a third of a
    rail fabric's) are left out, as the spines and super-spines are chosen by their links to switches."""
    pairs = Counter((link.a.device, link.b.device) for link in links
                    if (link.a.device in touching or link.b.device in touching) and link.kind is not LinkKind.HOST)
    counts: dict[str, dict[str, int]] = {}
    for (a, b), n in pairs.items():
        towards_b, towards_a = counts.setdefault(a, {}), counts.setdefault(b, {})
        towards_b[b] = towards_b.get(b, 0) + n
        towards_a[a] = towards_a.get(a, 0) + n
    return counts


def _pick_leaves(plan: FabricPlan) -> list[Switch]:
    leaves = [s for s in plan.switches if s.role is Role.LEAF]
    if not leaves:
        return []
    first = leaves[0]
    if first.pair is not None:
        return [s for s in leaves if s.pair == first.pair]
    if first.rail is not None:
        in_pod = [s for s in leaves if s.pod == first.pod and s.rail is not None]
        rails = sorted({s.rail for s in in_pod if s.rail is not None})[:MAX_RAILS]
        kept = {s.name for r in rails for s in [x for x in in_pod if x.rail == r][:LEAVES_PER_RAIL]}
        return [s for s in leaves if s.name in kept]
    return leaves[:2]


def _pick_covering(
    candidates: list[Switch], targets: list[str], counts: dict[str, dict[str, int]], limit: int
) -> list[Switch]:
    """Up to `limit` candidates linked to the targets: first greedily covering targets none reaches yet, then
    those with the most links to them; ties go to plan order. Returned in plan order."""
    linked = [c for c in candidates if any(counts.get(c.name, {}).get(t) for t in targets)]
    chosen: list[Switch] = []
    uncovered = set(targets)
    while len(chosen) < limit and uncovered:
        taken = {c.name for c in chosen}
        # max() keeps the first of equals, so ties go to plan order.
        best = max(
            (c for c in linked if c.name not in taken),
            key=lambda c: len(uncovered & counts.get(c.name, {}).keys()),
            default=None,
        )
        if best is None or not uncovered & counts.get(best.name, {}).keys():
            break
        chosen.append(best)
        uncovered -= counts.get(best.name, {}).keys()
    taken = {c.name for c in chosen}
    rest = sorted(  # stable: ties stay in plan order
        (c for c in linked if c.name not in taken),
        key=lambda c: -sum(counts.get(c.name, {}).get(t, 0) for t in targets),
    )
    chosen.extend(rest[: limit - len(chosen)])
    order = {c.name: i for i, c in enumerate(candidates)}
    return sorted(chosen, key=lambda c: order[c.name])


def _pick_superspines(
    superspines: list[Switch], spines: list[Switch], counts: dict[str, dict[str, int]]
) -> list[Switch]:
    """One super-spine above each kept spine (each spine reaches its own plane), then others above them."""
    chosen: list[str] = []
    for spine in spines:
        above = [s.name for s in superspines if counts.get(spine.name, {}).get(s.name) and s.name not in chosen]
        if above and len(chosen) < MAX_SUPERSPINES:
            chosen.append(above[0])
    for s in superspines:
        if len(chosen) >= MAX_SUPERSPINES:
            break
        if s.name not in chosen and any(counts.get(s.name, {}).get(sp.name) for sp in spines):
            chosen.append(s.name)
    return [s for s in superspines if s.name in chosen]


def _pick_hosts(plan: FabricPlan, leaves: list[Switch]) -> list[Host]:
    """Up to MAX_HOSTS hosts cabled to the kept leaves, preferring hosts that reach a kept leaf no chosen host
    reaches yet (on rail-optimized fabrics: hosts under different leaves of the same rail)."""
    kept = {s.name for s in leaves}
    reach: dict[str, set[str]] = {}
    for link in plan.links:
        if link.kind is LinkKind.HOST and link.a.device in kept:
            reach.setdefault(link.b.device, set()).add(link.a.device)
    attached = [h for h in plan.hosts if h.name in reach]
    chosen: list[str] = []
    covered: set[str] = set()
    for host in attached:
        if len(chosen) < MAX_HOSTS and reach[host.name] - covered:
            chosen.append(host.name)
            covered |= reach[host.name]
    for host in attached:
        if len(chosen) < MAX_HOSTS and host.name not in chosen:
            chosen.append(host.name)
    return [h for h in plan.hosts if h.name in chosen]


def select_lab_cut(plan: FabricPlan) -> LabCut:
    """Choose a small, connected, representative subset of the plan for a lab.

    - leaves: the first leaf pair (ToR dual-homed designs), or the first LEAVES_PER_RAIL leaves of each of the
      first MAX_RAILS rails of the first pod (rail-optimized designs), or else the first two leaves;
    - spines: up to MAX_SPINES spines chosen by their links, so that together they reach every kept leaf (in
      three-tier fabrics these are spines of the kept leaves' pod);
    - super-spines: for each kept spine the first super-spine it is cabled to (its plane), up to MAX_SUPERSPINES;
    - hosts: up to MAX_HOSTS hosts cabled to kept leaves, preferring hosts under different leaves;
    - links: plan links whose both ends are kept; host links all (every NIC of a kept host that reaches a kept
      leaf), switch-to-switch links at most MAX_PARALLEL_LINKS between the same two switches, first in plan order.

    The choice is deterministic and reads only the plan.
    """
    leaves = _pick_leaves(plan)
    leaf_names = [s.name for s in leaves]
    # links counted only where the choice reads them: to the kept leaves, then to the kept spines
    spines = _pick_covering([s for s in plan.switches if s.role is Role.SPINE], leaf_names,
                            _switch_link_counts(plan.links, set(leaf_names)), MAX_SPINES)
    superspines = _pick_superspines([s for s in plan.switches if s.role is Role.SUPERSPINE], spines,
                                    _switch_link_counts(plan.links, {s.name for s in spines}))
    hosts = _pick_hosts(plan, leaves)

    kept = {s.name for s in (*superspines, *spines, *leaves)} | {h.name for h in hosts}
    parallel: dict[frozenset[str], int] = {}
    links: list[Link] = []
    for link in plan.links:
        if link.a.device not in kept or link.b.device not in kept:
            continue
        if link.kind is not LinkKind.HOST:
            pair = frozenset((link.a.device, link.b.device))
            if parallel.get(pair, 0) >= MAX_PARALLEL_LINKS:
                continue
            parallel[pair] = parallel.get(pair, 0) + 1
        links.append(link)
    return LabCut(tuple(superspines), tuple(spines), tuple(leaves), tuple(hosts), tuple(links))
