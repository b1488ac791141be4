"""Doctor's diagnoses that read across a switch's rows or from the plan itself: ECMP narrower than planned, and a
tier too thin for the hosts below it.

`ecmp-below-plan`: a switch whose routes to other switches' prefixes have fewer next hops than the plan's
sessions give it; one diagnosis per switch and set of missing next hops (a pulled uplink takes a path from every
remote prefix at once), naming the ports no path leaves by now and the oversubscription the leaf behind them runs
at. `tier-too-thin`: from the plan alone, a tier whose uplink bandwidth is below the bandwidth coming up into it
(oversubscription above 1:1) — what made the seed's job stop scaling at ~1,000 GPUs — with, when counters were
sampled, the uplinks that show it (ECN marking or pause above their thresholds).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rocefab.deploy.verify.checks import Row, Verdict
from rocefab.deploy.verify.diagnosis import Diagnosis
from rocefab.renderers.plan import FabricPlan, PortRole, Role, Switch

_MISSING = re.compile(r"missing (.*)$")


def _missing(row: Row) -> list[str]:
    found = _MISSING.search(row.observed)
    return [m.split(" (")[0] for m in found.group(1).split(", ")] if found else []


def _ratio(host: int, up: int) -> str:
    return f"{host / up:.3g}:1" if up else "cut off"


def _leaf_ratio(plan: FabricPlan, sw: Switch, lost: set[tuple[str, str]]) -> str:
    """A leaf's oversubscription with the uplinks in `lost` ((leaf, port) or (spine, port)) carrying nothing."""
    host = sum(p.speed_gbps for p in sw.ports if p.role is PortRole.HOST)
    up = [p for p in sw.ports if p.role is PortRole.UPLINK]
    left = sum(p.speed_gbps for p in up if (sw.name, p.name) not in lost and (p.peer.device, p.peer.port) not in lost)
    return f"{sw.name} now {_ratio(host, left)} (planned {_ratio(host, sum(p.speed_gbps for p in up))})"


def ecmp_below_plan(plan: FabricPlan, rows: Sequence[Row]) -> list[Diagnosis]:
    switches = {sw.name: sw for sw in plan.switches}
    grouped: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
    for row in rows:
        if row.check == "ecmp" and row.failed and row.device in switches:
            grouped.setdefault((row.device, tuple(_missing(row))), []).append(row)
    out = []
    for (device, missing), evidence in grouped.items():
        sw = switches[device]
        lost = {(device, port) for port in missing}
        leaves = [sw] if sw.role is Role.LEAF else \
            [switches[p.peer.device] for p in sw.ports if p.name in missing and p.peer.device in switches
             and switches[p.peer.device].role is Role.LEAF]
        ratios = "; ".join(dict.fromkeys(_leaf_ratio(plan, leaf, lost) for leaf in leaves)) or "fewer paths"
        named = ", ".join(missing) or "the next hops the device no longer lists"
        out.append(Diagnosis(
            "ecmp-below-plan", device, ",".join(missing), "fewer equal-cost paths than planned",
            tuple(f"{r.port}: planned {r.expected}, seen {r.observed}" for r in evidence),
            f"flows hash onto fewer links: oversubscription {ratios}; all-reduce slows by the lost share and "
            "collisions on the remaining paths stretch its tail",
            f"find the down link or BGP session behind {named} on {device} (`rocefab doctor` names a link-down or "
            "bgp-down there when it sees one; check the far end too)"))
    return out


def _tiers(plan: FabricPlan) -> list[tuple[str, list[Switch]]]:
    order = [(Role.LEAF, "leaf"), (Role.SPINE, "spine")]
    return [(name, [sw for sw in plan.switches if sw.role is role]) for role, name in order]


def tier_too_thin(plan: FabricPlan, rows: Sequence[Row]) -> list[Diagnosis]:
    """One diagnosis per tier whose planned uplink bandwidth is below what comes up into it."""
    congested = [r for r in rows if r.check in ("ecn-marking", "pfc-pause-rate") and r.verdict is not Verdict.PASS]
    out = []
    for tier, members in _tiers(plan):
        below_role = PortRole.HOST if tier == "leaf" else PortRole.DOWNLINK
        thin = []
        for sw in members:
            down = sum(p.speed_gbps for p in sw.ports if p.role is below_role)
            up_ports = [p for p in sw.ports if p.role is PortRole.UPLINK]
            up = sum(p.speed_gbps for p in up_ports)
            if up_ports and down > up:
                thin.append((sw, down, up_ports, up))
        if not thin:
            continue
        sw, down, up_ports, up = max(thin, key=lambda t: t[1] / t[3])
        parents = sorted({p.peer.device for p in up_ports})
        speeds = sorted({p.speed_gbps for p in up_ports})
        plural = "leaves" if tier == "leaf" else "spines"
        evidence = [f"{len(thin)} of {len(members)} {plural}: {down}G below each over {len(up_ports)} x "
                    f"{'/'.join(f'{s}G' for s in speeds)} uplinks into {len(parents)} "
                    f"{'spines' if tier == 'leaf' else 'super-spines'}: {_ratio(down, up)}"]
        uplinks = {(s.name, p.name) for s, *_ in thin for p in s.ports if p.role is PortRole.UPLINK}
        evidence += [f"{r.device} {r.port} {r.check}: {r.observed}" for r in congested if (r.device, r.port) in uplinks]
        out.append(Diagnosis(
            "tier-too-thin", sw.name, "", f"{tier} tier oversubscribed {_ratio(down, up)} by plan",
            tuple(evidence),
            "all-reduce across racks shares too little uplink: bus bandwidth falls as the job spans more leaves, "
            "and scaling stalls (the seed's collapse at ~1,000 GPUs); ECN marks and pause climb on the uplinks",
            "size the tier for 1:1 (`topology.sized.oversubscription: \"1:1\"`, more spines or uplinks per leaf), "
            "or keep jobs within a leaf's hosts"))
    return out
