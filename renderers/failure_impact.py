"""What a failure costs the fabric, from the plan alone: `rocefab what-if`, and the limit on what apply drains.

The routing model is the plan's: eBGP in a folded Clos where every switch of a tier above the leaves shares its
tier's AS (per pod for spines), so a path never goes down and up again (AS-path loop prevention), and BGP
multipath spreads over every uplink that still leads somewhere. From that:

- a switch's **ECMP width up** is the number of its uplinks whose link is up and whose upper switch is alive and
  itself still reaches the tier above it (a spine that lost every uplink withdraws what it learnt from above);
  the top tier has none and is described by its downlinks instead;
- its **ECMP width down** is, over the lower switches it still reaches, the fewest parallel links to one of them:
  what one of its destinations is left with;
- its **oversubscription** is the capacity facing down (hosts and lower switches still attached) over the
  capacity of the uplinks that still count;
- a host path is a bond (one path per member) or a rail NIC (one path); a member whose leaf is gone, whose
  cable is gone, or whose leaf has no uplink to a surviving switch left is lost — except a bond member whose
  leaf still has its MLAG/vPC peer over a live peer link, as the pair carries its traffic across (a leaf whose
  spines lost only the tier above them still reaches its pod: its hosts keep their paths, its ECMP width up
  toward the rest of the fabric is 0);
- **PFC-storm risk**: Juniper's validated AI data center designs recommend at least four spines per fabric
  because with two "under certain dual failure scenarios, combined with congestion, the fabric becomes
  susceptible to PFC storms (not vendor-unique)"
  (https://www.juniper.net/documentation/us/en/software/jvd/jvd-ai-dc-apstra-nvidia-weka/recommendations.html).
  rocefab applies it as: a switch that the failure leaves both oversubscribed beyond its plan and beyond 1:1
  (congestion: a collective at line rate no longer fits its uplinks, so pauses reach its hosts) and reaching
  fewer than four switches of the tier above is flagged.

Only what the failure changes is computed: a single-device failure touches its neighbours and the hosts below
them, so every single failure of a 4,096-switch fabric is evaluated in seconds (bench/bench.py, `what-if`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rocefab.renderers.plan import FabricPlan, LinkKind, Role

JVD_MIN_SPINES = 4  # Juniper AI DC JVD recommendation (see the module's docstring)
_RANK = {Role.SUPERSPINE: 0, Role.SPINE: 1, Role.LEAF: 2}


class FailureSpecError(ValueError):
    """A --fail that names nothing in the plan."""


@dataclass(frozen=True, slots=True)
class _Upper:
    links: tuple[int, ...]  # indexes into plan.links, in the plan's order
    gbps: int  # their capacity together


@dataclass(slots=True)
class _SwitchIndex:
    role: Role
    pod: int | None
    rail: int | None
    partner: str | None
    ups: dict[str, _Upper] = field(default_factory=dict)  # upper switch -> the links to it
    downs: dict[str, _Upper] = field(default_factory=dict)  # lower switch -> the links to it
    host_links: list[int] = field(default_factory=list)
    peer_links: list[int] = field(default_factory=list)
    up_links: int = 0
    up_gbps: int = 0
    down_gbps: int = 0  # hosts and lower switches
    down_widths: Counter[int] = field(default_factory=Counter)  # parallel links to a lower switch -> how many


@dataclass(frozen=True, slots=True)
class _HostPath:
    label: str  # "bond0" or "rail 3"
    members: tuple[tuple[str, int], ...]  # (switch, host link index)
    bond: bool


class FabricIndex:
    """The plan as a graph for failure questions; built once (about a second for the 98,304-GPU fabric)."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self.switches: dict[str, _SwitchIndex] = {
            s.name: _SwitchIndex(s.role, s.pod, s.rail, s.mlag.peer if s.mlag else None) for s in plan.switches}
        self.hosts = {h.name for h in plan.hosts}
        self.endpoint: dict[tuple[str, str], int] = {}
        self.link_ends: list[tuple[str, str]] = []
        self.host_of_link: dict[int, str] = {}
        ups: dict[str, dict[str, list[int]]] = {name: {} for name in self.switches}
        downs: dict[str, dict[str, list[int]]] = {name: {} for name in self.switches}
        for i, link in enumerate(plan.links):
            a, b = link.a.device, link.b.device
            self.link_ends.append((a, b))
            self.endpoint[(a, link.a.port)] = i
            self.endpoint[(b, link.b.port)] = i
            if link.kind is LinkKind.HOST:
                sw = self.switches[a]
                sw.host_links.append(i)
                sw.down_gbps += link.speed_gbps
                self.host_of_link[i] = b
            elif link.kind is LinkKind.PEER_LINK:
                self.switches[a].peer_links.append(i)
                self.switches[b].peer_links.append(i)
            else:  # fabric: a is the lower end
                ups[a].setdefault(b, []).append(i)
                downs[b].setdefault(a, []).append(i)
        for name, sw in self.switches.items():
            sw.ups = {u: _Upper(tuple(ls), sum(plan.links[i].speed_gbps for i in ls)) for u, ls in ups[name].items()}
            sw.downs = {d: _Upper(tuple(ls), sum(plan.links[i].speed_gbps for i in ls))
                        for d, ls in downs[name].items()}
            sw.up_links = sum(len(u.links) for u in sw.ups.values())
            sw.up_gbps = sum(u.gbps for u in sw.ups.values())
            sw.down_gbps += sum(d.gbps for d in sw.downs.values())
            sw.down_widths = Counter(len(d.links) for d in sw.downs.values())
        self.host_paths: dict[str, tuple[_HostPath, ...]] = {}
        for host in plan.hosts:
            paths = [_HostPath(b.name, tuple((m.switch, self.endpoint[(m.switch, m.port)]) for m in b.members), True)
                     for b in host.bonds]
            paths += [_HostPath(f"rail {n.rail}", ((n.switch, self.endpoint[(n.switch, n.port)]),), False)
                      for n in host.nics]
            self.host_paths[host.name] = tuple(paths)
        self.hosts_of_switch: dict[str, set[str]] = {name: set() for name in self.switches}
        for i, host_name in self.host_of_link.items():
            self.hosts_of_switch[self.link_ends[i][0]].add(host_name)

    def resolve(self, specs: Iterable[str]) -> tuple[frozenset[str], frozenset[int]]:
        """The devices and links that `--fail` names: a device, `device:port` (either end of a cable, a host's
        NIC included), `rail:N` (every leaf serving rail N) or `pod:N` (every switch of pod N)."""
        devices: set[str] = set()
        links: set[int] = set()
        for spec in specs:
            kind, _, value = spec.partition(":")
            if spec in self.switches or spec in self.hosts:
                devices.add(spec)
            elif kind in ("rail", "pod") and value.isdigit():
                attribute = "rail" if kind == "rail" else "pod"
                found = {n for n, s in self.switches.items() if getattr(s, attribute) == int(value)}
                if not found:
                    raise FailureSpecError(f"{spec}: no switch of the plan serves {kind} {value}")
                devices |= found
            elif (kind, value) in self.endpoint:
                links.add(self.endpoint[(kind, value)])
            elif kind in self.switches or kind in self.hosts:
                raise FailureSpecError(f"{spec}: {kind} has no cabled port {value!r} in the plan")
            else:
                raise FailureSpecError(f"{spec}: not a device, device:port, rail:N or pod:N of the plan")
        return frozenset(devices), frozenset(links)


@dataclass(frozen=True, slots=True)
class SwitchImpact:
    name: str
    role: str
    ecmp_up: tuple[int, int] | None  # (planned, now); None for the top tier
    uppers: tuple[int, int] | None  # distinct switches of the tier above it reaches (planned, now)
    ecmp_down_min: tuple[int, int] | None  # fewest parallel links to a lower switch it still reaches
    lowers_lost: tuple[str, ...]  # lower switches it no longer reaches
    oversubscription: tuple[float | None, float | None]  # down:up capacity (planned, now); None: no uplinks
    peer_lost: bool  # its MLAG/vPC peer or the peer link is down
    cut_off: bool  # no uplink to an alive switch is left (a spine cut only from above still serves its pod)
    pfc_storm_risk: tuple[str, ...]  # why it is flagged; empty when not


@dataclass(frozen=True, slots=True)
class HostImpact:
    host: str
    path: str  # "bond0", "rail 3"
    paths: tuple[int, int]  # (planned, now)


@dataclass(frozen=True, slots=True)
class Impact:
    failed_devices: tuple[str, ...]
    failed_links: tuple[str, ...]  # "device:port - device:port"
    switches: tuple[SwitchImpact, ...]  # the surviving switches whose figures change, by tier then name
    hosts: tuple[HostImpact, ...]  # the surviving hosts' paths that lose a member, by host then path
    unchanged_switches: int

    @property
    def hosts_cut_off(self) -> tuple[str, ...]:
        """Hosts with a bond or NIC left without any path."""
        return tuple(sorted({h.host for h in self.hosts if h.paths[1] == 0}))

    @property
    def hosts_degraded(self) -> tuple[str, ...]:
        """Hosts that keep every bond and NIC, on fewer members."""
        cut = set(self.hosts_cut_off)
        return tuple(sorted({h.host for h in self.hosts if h.host not in cut}))

    @property
    def rails_hit(self) -> dict[str, int]:
        """Per rail (NIC index), the hosts whose NIC on it lost its path."""
        counts = Counter(h.path for h in self.hosts if h.path.startswith("rail ") and h.paths[1] == 0)
        return dict(sorted(counts.items(), key=lambda kv: int(kv[0].split()[1])))

    @property
    def storm_risk(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.switches if s.pfc_storm_risk)


def _ratio(down: int, up: int) -> float | None:
    return None if up == 0 else round(down / up, 3)


def evaluate(index: FabricIndex, devices: frozenset[str], links: frozenset[int]) -> Impact:
    """What failing `devices` and `links` changes, against the plan."""
    sw = index.switches
    dead_switches = {d for d in devices if d in sw}
    dead_hosts = set(devices - dead_switches)
    ends = index.link_ends
    # Links that are gone with their device or on their own; a fabric link's upper and lower end.
    dead_fabric = [i for i in links if index.plan.links[i].kind is LinkKind.FABRIC]
    # Tier by tier, top down: which alive switches lose uplinks, and which lose them all (they then lead nowhere
    # for the tier below: a cascade).
    bad = set(dead_switches)  # switches that lead nowhere: dead, or alive without an uplink that counts
    lost_up: dict[str, tuple[int, int, int]] = {}  # switch -> (uplinks lost, their capacity, uppers lost)
    # alive switches with no uplink to an alive switch left: cut off from the tier above (a spine that only lost
    # the tier above it still joins its pod's leaves, so its leaves are not cut off, only narrowed to their pod)
    cut: set[str] = set()
    dead_up_by_lower: dict[str, set[int]] = {}
    for i in dead_fabric:
        dead_up_by_lower.setdefault(ends[i][0], set()).add(i)
    by_tier = sorted({*(lower for b in dead_switches for lower in sw[b].downs), *dead_up_by_lower},
                     key=lambda n: _RANK[sw[n].role])
    queue = [n for n in by_tier if n not in dead_switches]
    seen = set(queue)
    while queue:
        queue.sort(key=lambda n: _RANK[sw[n].role])
        name = queue.pop(0)
        s = sw[name]
        lost = gbps = uppers = physical = 0
        dead_own = dead_up_by_lower.get(name, set())
        for upper, group in s.ups.items():
            if upper in bad:
                lost, gbps, uppers = lost + len(group.links), gbps + group.gbps, uppers + 1
                physical += len(group.links) if upper in dead_switches else sum(i in dead_own for i in group.links)
            elif dead_own:
                gone = [i for i in group.links if i in dead_own]
                lost += len(gone)
                physical += len(gone)
                gbps += sum(index.plan.links[i].speed_gbps for i in gone)
                uppers += len(gone) == len(group.links)
        if physical == s.up_links:
            cut.add(name)
        if not lost:
            continue
        lost_up[name] = (lost, gbps, uppers)
        if lost == s.up_links and name not in bad:
            bad.add(name)
            for lower in s.downs:
                if lower not in seen and lower not in dead_switches:
                    seen.add(lower)
                    queue.append(lower)
    # The upper ends: switches whose lower switches or downlinks are gone.
    lower_gone: dict[str, set[str]] = {}
    for b in dead_switches:
        for upper in sw[b].ups:
            lower_gone.setdefault(upper, set()).add(b)
    dead_down: dict[str, list[int]] = {}
    for i in dead_fabric:
        dead_down.setdefault(ends[i][1], []).append(i)
    # Host-facing capacity gone: cables and hosts.
    host_gone: dict[str, int] = {}
    dead_host_links = {i for i in links if i in index.host_of_link}
    for i in dead_host_links:
        host_gone[ends[i][0]] = host_gone.get(ends[i][0], 0) + index.plan.links[i].speed_gbps
    for h in dead_hosts:
        for path in index.host_paths[h]:
            for switch, i in path.members:
                if i not in dead_host_links:
                    host_gone[switch] = host_gone.get(switch, 0) + index.plan.links[i].speed_gbps
    dead_peer = {i for i in links if index.plan.links[i].kind is LinkKind.PEER_LINK}
    peer_lost = {p for b in dead_switches if (p := sw[b].partner) is not None} | {
        end for i in dead_peer for end in ends[i]}
    touched = (set(lost_up) | set(lower_gone) | set(dead_down) | set(host_gone) | peer_lost) - dead_switches
    impacts = [_switch_impact(index, name, lost_up.get(name), lower_gone.get(name, set()),
                              dead_down.get(name, []), host_gone.get(name, 0), name in peer_lost, name in cut)
               for name in sorted(touched, key=lambda n: (_RANK[sw[n].role], n))]
    hosts = _host_impacts(index, dead_switches, dead_hosts, cut, dead_host_links, dead_peer)
    return Impact(
        failed_devices=tuple(sorted(devices)),
        failed_links=tuple(sorted(_link_name(index, i) for i in links)),
        switches=tuple(impacts), hosts=hosts, unchanged_switches=len(sw) - len(dead_switches) - len(impacts))


def _link_name(index: FabricIndex, i: int) -> str:
    link = index.plan.links[i]
    return f"{link.a.device}:{link.a.port} - {link.b.device}:{link.b.port}"


def _switch_impact(index: FabricIndex, name: str, lost: tuple[int, int, int] | None, lowers_dead: set[str],
                   downlinks_dead: list[int], host_gbps_gone: int, peer_lost: bool, cut: bool) -> SwitchImpact:
    s = index.switches[name]
    lost_links, lost_gbps, lost_uppers = lost or (0, 0, 0)
    widths = Counter(s.down_widths)
    down_gbps = s.down_gbps - host_gbps_gone
    for lower in lowers_dead:
        group = s.downs[lower]
        widths[len(group.links)] -= 1
        down_gbps -= group.gbps
    gone_per_lower = Counter(index.link_ends[i][0] for i in downlinks_dead if index.link_ends[i][0] not in lowers_dead)
    lowers_lost = set(lowers_dead)
    for lower, gone in gone_per_lower.items():
        planned = len(s.downs[lower].links)
        widths[planned] -= 1
        down_gbps -= sum(index.plan.links[i].speed_gbps for i in downlinks_dead if index.link_ends[i][0] == lower)
        if planned - gone:
            widths[planned - gone] += 1
        else:
            lowers_lost.add(lower)
    left = [w for w, n in widths.items() if n > 0]
    planned_min = min(s.down_widths) if s.down_widths else None
    ecmp_down = None if planned_min is None else (planned_min, min(left) if left else 0)
    up_now = s.up_gbps - lost_gbps
    planned_ratio, ratio = _ratio(s.down_gbps, s.up_gbps), _ratio(down_gbps, up_now)
    uppers = None if not s.ups else (len(s.ups), len(s.ups) - lost_uppers)
    risk: list[str] = []
    if (s.ups and ratio is not None and planned_ratio is not None and ratio > planned_ratio and ratio > 1
            and uppers is not None and uppers[1] < JVD_MIN_SPINES):
        risk.append(f"oversubscribed {ratio:g}:1 (planned {planned_ratio:g}:1) with {uppers[1]} switch(es) of the "
                    f"tier above left (fewer than {JVD_MIN_SPINES}): congestion then pauses its hosts")
    return SwitchImpact(
        name=name, role=s.role.value,
        ecmp_up=None if not s.ups else (s.up_links, s.up_links - lost_links), uppers=uppers,
        ecmp_down_min=ecmp_down, lowers_lost=tuple(sorted(lowers_lost)),
        oversubscription=(planned_ratio, ratio),
        peer_lost=peer_lost, cut_off=cut, pfc_storm_risk=tuple(risk))


def _host_impacts(index: FabricIndex, dead_switches: set[str], dead_hosts: set[str], cut: set[str],
                  dead_host_links: set[int], dead_peer: set[int]) -> tuple[HostImpact, ...]:
    candidates: set[str] = set()
    for name in dead_switches | cut:
        candidates |= index.hosts_of_switch.get(name, set())
    candidates |= {index.host_of_link[i] for i in dead_host_links}
    candidates -= dead_hosts
    out: list[HostImpact] = []
    for host in sorted(candidates):
        for path in index.host_paths[host]:
            alive = sum(_member_alive(index, switch, i, path.bond, dead_switches, cut, dead_host_links, dead_peer)
                        for switch, i in path.members)
            if alive < len(path.members):
                out.append(HostImpact(host, path.label, (len(path.members), alive)))
    return tuple(out)


def _member_alive(index: FabricIndex, switch: str, link: int, bond: bool, dead_switches: set[str], cut: set[str],
                  dead_host_links: set[int], dead_peer: set[int]) -> bool:
    if switch in dead_switches or link in dead_host_links:
        return False
    if switch not in cut:
        return True
    # The leaf is cut off from above; a bond member still gets across its MLAG/vPC peer over a live peer link.
    partner = index.switches[switch].partner
    return (bond and partner is not None and partner not in cut and partner not in dead_switches
            and any(i not in dead_peer for i in index.switches[switch].peer_links))


def each_single_failure(index: FabricIndex, names: Sequence[str] | None = None) -> list[tuple[str, Impact]]:
    """Every switch's failure on its own (or those of `names`), in the plan's order."""
    chosen = list(index.switches) if names is None else list(names)
    return [(name, evaluate(index, frozenset({name}), frozenset())) for name in chosen]
