"""Checks on the resolved plan: what only shows once every port, link and address is assigned."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rocefab.models.checks.qos import L2_OVERHEAD_BYTES
from rocefab.models.findings import Finding, Severity
from rocefab.platforms import unit
from rocefab.renderers.common import adaptive_routing_port
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import (
    A_DEVICE,
    B_DEVICE,
    FabricPlan,
    Link,
    LinkKind,
    PortRole,
    Role,
    SwitchPort,
    fabric_links,
)


def _error(code: str, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.ERROR, ("topology",), message, hint)


def check_plan(plan: FabricPlan) -> list[Finding]:
    found: list[Finding] = []

    # Both ends of every cable must run the same speed: a host NIC port, or a switch port. Per device, its ports'
    # speeds by name (one dict per device, not a tuple key per port: 590,000 link ends at 98,304 GPUs).
    speed_of: dict[str, dict[str, int]] = {}
    for sw in plan.switches:
        speeds = speed_of[sw.name] = {p.name: p.speed_gbps for p in sw.ports}
        if len(speeds) < len(sw.ports):
            for name, count in Counter(p.name for p in sw.ports).items():
                if count > 1:
                    found.append(_error("port-used-twice", f"{sw.name} {name} is cabled {count} times"))
    for h in plan.hosts:
        speeds = speed_of.setdefault(h.name, {})
        speeds.update({m.netdev: b.speed_gbps for b in h.bonds for m in b.members})
        speeds.update({n.netdev: n.speed_gbps for n in h.nics})
    found.extend(_speed_mismatches(plan.links, speed_of))

    pairs: dict[str, list[str]] = {}
    for sw in plan.switches:
        if sw.pair:
            pairs.setdefault(sw.pair, []).append(sw.name)
    for host in plan.hosts:
        if host.pair is None:
            continue
        for bond in host.bonds:
            leaves = [m.switch for m in bond.members]
            if len(set(leaves)) != 2 or sorted(leaves) != sorted(pairs.get(host.pair, [])):
                found.append(_error(
                    "dual-homing-split",
                    f"{host.name} {bond.name} lands on {', '.join(leaves)}, not on both leaves of pair {host.pair}",
                ))

    names = Counter([s.name for s in plan.switches] + [h.name for h in plan.hosts])
    found += [_error("duplicate-name", f"device name {n} is used {c} times") for n, c in names.items() if c > 1]
    assigned = [s.loopback_ipv4 for s in plan.switches]
    assigned += [p.ipv4 for s in plan.switches for p in s.ports if p.ipv4]
    assigned += [b.ipv4 for h in plan.hosts for b in h.bonds]
    assigned += [n.ipv4 for h in plan.hosts for n in h.nics]
    addresses = Counter([a.partition("/")[0] for a in assigned])  # the address, whatever its prefix
    found += [_error("duplicate-address", f"address {a} is assigned {c} times")
              for a, c in addresses.items() if c > 1]
    leaf_asns = Counter(s.asn for s in plan.switches if s.role is Role.LEAF)
    found += [_error("duplicate-asn", f"ASN {a} is used by {c} leaves") for a, c in leaf_asns.items() if c > 1]

    host_mtu = plan.host_profile.mtu_bytes
    too_small = {sw.name: sw for sw in plan.switches if host_mtu + L2_OVERHEAD_BYTES > sw.mtu_bytes}
    for link in plan.links if too_small else ():  # their host ports, in link order
        if link.kind is LinkKind.HOST and (leaf := too_small.get(link.a.device)) is not None:
            found.append(_error("mtu-too-small", f"{leaf.name} {link.a.port}: MTU {leaf.mtu_bytes} cannot carry "
                                                 f"host frames of {host_mtu} + {L2_OVERHEAD_BYTES} bytes"))

    found.extend(_platform_limits(plan))
    found.extend(_headroom_not_rendered(plan))
    found.extend(_adaptive_routing_not_rendered(plan))
    found.extend(_adaptive_routing_mixed(plan))
    found.extend(_reach(plan))
    return found


def _speed_mismatches(links: Sequence[Link], speed_of: dict[str, dict[str, int]]) -> list[Finding]:
    """Link ends whose port runs at another speed than the link, or is no port of its device."""
    nothing: dict[str, int] = {}
    found: list[Finding] = []
    for link in links:
        a, b, speed = link.a, link.b, link.speed_gbps
        if speed_of.get(a.device, nothing).get(a.port) == speed == speed_of.get(b.device, nothing).get(b.port):
            continue  # all but a broken plan's links: both ends read once, no tuple made
        for end in (a, b):
            found_speed = speed_of.get(end.device, nothing).get(end.port)
            if found_speed != speed:
                found.append(_error(
                    "link-speed-mismatch",
                    f"{a.device} {a.port} <-> {b.device} {b.port}: {end.device} {end.port} "
                    f"runs at {found_speed} Gb/s, the link at {speed} Gb/s",
                ))
    return found


def _adaptive_routing_not_rendered(plan: FabricPlan) -> list[Finding]:
    without = sorted({f"{sw.model} ({sw.platform})" for sw in plan.switches
                      if sw.load_balancing and sw.load_balancing.adaptive_routing_requested
                      and not sw.load_balancing.adaptive_routing})
    if not without:
        return []
    return [Finding(
        "adaptive-routing-unsupported", Severity.WARNING, ("underlay", "load_balancing", "adaptive_routing"),
        f"adaptive routing needs a Spectrum-4 Cumulus switch with 200G/400G routed fabric ports; "
        f"{', '.join(without)} keep five-tuple ECMP",
        "mixing adaptive and hashed next hops in one ECMP group gives uneven paths: enable it where every "
        "switch of a tier has it",
    )]


def _adaptive_routing_mixed(plan: FabricPlan) -> list[Finding]:
    """A switch running adaptive routing whose ECMP set (its uplinks; its downlinks to one leaf pair or leaf) holds
    ports it runs adaptive routing on and ports it cannot (another speed, a bond member): NVIDIA's guide warns that
    mixing them in one ECMP set gives unexpected route hashing."""
    by_name = {sw.name: sw for sw in plan.switches}
    mixed: list[str] = []
    for sw in plan.switches:
        spec = unit(sw.platform).spec
        if spec is None or not (sw.load_balancing and sw.load_balancing.adaptive_routing):
            continue
        sets: dict[str, list[SwitchPort]] = {}
        for port in sw.ports:
            if port.role is PortRole.UPLINK:
                sets.setdefault("uplinks", []).append(port)
            elif port.role is PortRole.DOWNLINK:
                peer = by_name.get(port.peer.device)
                sets.setdefault(f"downlinks to {(peer.pair if peer else None) or port.peer.device}", []).append(port)
        for name, ports in sorted(sets.items()):
            kinds = {adaptive_routing_port(p, spec) for p in ports}
            if len(kinds) == 2:
                odd = sorted({f"{p.speed_gbps}G" + (" bond member" if p.lag else "") for p in ports
                              if not adaptive_routing_port(p, spec)})
                mixed.append(f"{sw.name} {name} ({', '.join(odd)} without it)")
    if not mixed:
        return []
    return [Finding(
        "adaptive-routing-mixed-ecmp", Severity.WARNING, ("underlay", "load_balancing", "adaptive_routing"),
        f"adaptive and hashed next hops in one ECMP set: {'; '.join(mixed[:5])}"
        + (f"; and {len(mixed) - 5} more" if len(mixed) > 5 else ""),
        "NVIDIA's guide warns of unexpected route hashing: give the set one speed the ASIC runs adaptive routing "
        "at (200G or 400G on Spectrum-4), or turn adaptive routing off",
    )]


def _headroom_not_rendered(plan: FabricPlan) -> list[Finding]:
    """Switches whose platform takes no headroom input while their longest cable needs more than the
    default allowance: one finding per platform, naming the switches and the headroom the plan computes."""
    long: dict[str, list[str]] = {}
    for sw in plan.switches:
        spec = unit(sw.platform).spec
        need = sw.pfc_headroom
        if spec and spec.headroom_by == "none" and need and sw.longest_cable_m > spec.headroom_rendered_above_m:
            long.setdefault(spec.display_name, []).append(f"{sw.name} ({sw.longest_cable_m} m, needs {need.bytes} B)")
    return [Finding(
        "pfc-headroom-not-rendered", Severity.WARNING, ("cabling", "lengths"),
        f"{platform} documents no PFC headroom setting rocefab can render, and {len(names)} switches have "
        f"cables over 100 m: {', '.join(names[:4])}{' ...' if len(names) > 4 else ''}",
        "size the no-drop headroom on those switches by hand (plan/: each switch's pfc_headroom), or keep "
        "their cables within 100 m",
    ) for platform, names in sorted(long.items())]


def _reach(plan: FabricPlan) -> list[Finding]:
    """Every leaf reaches every other leaf over fabric links within the Clos bound: up to the top tier and
    down again, 2 x (tiers - 1) links, so any two hosts are at most 2 x tiers - 1 switches apart.

    Leaves cabled to the same upper switches reach the same leaves, so one search per such group does."""
    tiers = len({s.role for s in plan.switches})
    leaves = [s.name for s in plan.switches if s.role is Role.LEAF]
    if tiers < 2 or len(leaves) < 2:
        return []
    adjacent: dict[str, set[str]] = {s.name: set() for s in plan.switches}
    fabric = fabric_links(plan.links)
    for a, b in zip(map(A_DEVICE, fabric), map(B_DEVICE, fabric), strict=True):
        adjacent[a].add(b)
        adjacent[b].add(a)
    limit = 2 * (tiers - 1)
    groups: dict[frozenset[str], list[str]] = {}
    for leaf in leaves:
        groups.setdefault(frozenset(adjacent[leaf]), []).append(leaf)
    everyone = set(leaves)
    found: list[Finding] = []
    for members in groups.values():
        seen = {members[0]}
        frontier = {members[0]}
        for _ in range(limit):
            frontier = set().union(*map(adjacent.__getitem__, frontier)) - seen
            seen |= frontier
        missing = sorted(everyone - seen, key=natural_key)
        if missing:
            found.append(_error(
                "leaves-out-of-reach",
                f"{', '.join(members[:3])}{' ...' if len(members) > 3 else ''} cannot reach {len(missing)} "
                f"leaves (e.g. {', '.join(missing[:3])}) within {limit} fabric links "
                f"({2 * tiers - 1} switch hops)",
                "every leaf needs uplinks into the spines (and super-spines) that the others use",
            ))
    return found


def _platform_limits(plan: FabricPlan) -> list[Finding]:
    found: list[Finding] = []
    q = plan.qos
    specs = sorted({spec for s in plan.switches if (spec := unit(s.platform).spec)}, key=lambda s: s.key)
    defaults = q.watchdog_polling_interval_ms == 100 and q.watchdog_robustness == 3
    without = [s.display_name for s in specs if not s.pfc_watchdog_timers]
    if without and q.watchdog_enabled and not defaults:
        others = [s.display_name for s in specs if s.pfc_watchdog_timers]
        found.append(Finding(
            "watchdog-timers-not-rendered", Severity.WARNING, ("qos", "pfc", "watchdog"),
            f"{', '.join(without)} switches get the PFC watchdog with their default 100 ms interval; the custom "
            f"timers apply to {' and '.join(others) or 'no switch of this fabric'} only",
        ))
    for sw in plan.switches:
        spec = unit(sw.platform).spec
        if sw.mlag and spec and spec.keepalive_out_of_band and sw.mlag.keepalive_source is None and sw.mlag.primary:
            found.append(Finding(
                "vpc-keepalive-inband", Severity.WARNING, ("management",),
                f"vPC pair {sw.pair}: peer-keepalive runs between loopbacks over the fabric",
                "give management addressing so the keepalive uses mgmt0 in VRF management",
            ))
    return found
