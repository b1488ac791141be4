"""Figures about a plan that operators ask for first: bandwidth per tier and oversubscription."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from rocefab.renderers.jsontext import dumps_outline
from rocefab.renderers.plan import FabricPlan, LinkKind, PortRole, Switch
from rocefab.renderers.record import record


@record
class Bandwidth:
    down_gbps: int  # towards hosts (leaves) or leaves (spines)
    up_gbps: int  # towards spines (leaves)

    @property
    def oversubscription(self) -> str:
        """Down:up bandwidth: 1:1 when uplinks carry all host traffic, 2:1 when half, "-" without uplinks.

        >>> Bandwidth(3200, 3200).oversubscription, Bandwidth(6400, 3200).oversubscription
        ('1:1', '2:1')
        """
        if not self.up_gbps:
            return "-"
        ratio = Fraction(self.down_gbps, self.up_gbps)
        return f"{ratio.numerator}:{ratio.denominator}" if ratio.denominator != 1 else f"{ratio.numerator}:1"


def bandwidth(switch: Switch) -> Bandwidth:
    return _tally(switch).bandwidth


_DOWN = (PortRole.HOST, PortRole.DOWNLINK)


@record
class _PortTally:
    bandwidth: Bandwidth
    down: int  # ports towards hosts or the tier below
    up: int
    peer: int


def _tally(switch: Switch) -> _PortTally:
    """A switch's ports counted and summed in one walk (a 98,304-GPU fabric has half a million)."""
    down_gbps = up_gbps = down = up = peer = 0
    for port in switch.ports:
        role = port.role
        if role in _DOWN:
            down_gbps += port.speed_gbps
            down += 1
        elif role is PortRole.UPLINK:
            up_gbps += port.speed_gbps
            up += 1
        elif role is PortRole.PEER_LINK:
            peer += 1
    return _PortTally(Bandwidth(down_gbps, up_gbps), down, up, peer)


@record
class TierSummary:
    role: str
    models: tuple[str, ...]
    count: int
    ports_down: int  # towards hosts or the tier below, all switches of the tier
    ports_up: int
    ports_peer: int
    oversubscription: str  # the worst switch of the tier


@record
class CableCount:
    kind: str
    speed_gbps: int
    count: int


@record
class FabricSummary:
    fabric: str
    hosts: int
    gpu_nics: int  # host NIC ports into the fabric
    tiers: tuple[TierSummary, ...]  # top tier first
    pods: int
    rails: int
    cables: tuple[CableCount, ...]
    bisection_gbps: int
    max_switch_hops: int


_TIER_ORDER = ("superspine", "spine", "leaf")


def fabric_summary(plan: FabricPlan) -> FabricSummary:
    tiers = []
    top_down_gbps = 0
    for role in _TIER_ORDER:
        switches = [s for s in plan.switches if s.role.value == role]
        if not switches:
            continue
        tallies = [_tally(s) for s in switches]
        worst = max((t.bandwidth for t in tallies),
                    key=lambda b: Fraction(b.down_gbps, b.up_gbps) if b.up_gbps else Fraction(0))
        tiers.append(TierSummary(
            role, tuple(sorted({s.model for s in switches})), len(switches),
            sum(t.down for t in tallies), sum(t.up for t in tallies), sum(t.peer for t in tallies),
            worst.oversubscription,
        ))
        if len(tiers) == 1:
            top_down_gbps = sum(t.bandwidth.down_gbps for t in tallies)
    counts = Counter((link.kind, link.speed_gbps) for link in plan.links)
    by_kind = sorted(((kind.value, speed), n) for (kind, speed), n in counts.items())
    return FabricSummary(
        fabric=plan.source.fabric,
        hosts=len(plan.hosts),
        gpu_nics=sum(n for (kind, _speed), n in counts.items() if kind is LinkKind.HOST),
        tiers=tuple(tiers),
        pods=len({s.pod for s in plan.switches if s.pod is not None}) or 1,
        rails=len({s.rail for s in plan.switches if s.rail is not None}),
        cables=tuple(CableCount(k, sp, n) for (k, sp), n in by_kind),
        # Half of what the top tier can take from below crosses any cut through the middle.
        bisection_gbps=top_down_gbps // 2,
        max_switch_hops=2 * len(tiers) - 1,
    )


def summary_to_json(summary: FabricSummary) -> str:
    return dumps_outline(summary)


def ecn_profiles(plan: FabricPlan) -> str:
    """The ECN marking profiles in use, e.g. `150-1500 kbytes @ 100% on 4, 950-3000 kbytes @ 7% on 2`."""
    counts = Counter((e.min_threshold, e.max_threshold, e.unit, e.max_mark_percent)
                     for sw in plan.switches if (e := sw.ecn) is not None)
    return ", ".join(f"{lo}-{hi} {unit} @ {pct}% on {n}" for (lo, hi, unit, pct), n in sorted(counts.items()))
