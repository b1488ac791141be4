"""Topology: ECMP width per platform and per leaf, one namespace for every name, and ASNs."""

from __future__ import annotations

from rocefab.models.checks.common import error, warning
from rocefab.models.findings import Finding, Path, dotted
from rocefab.models.intent import Intent
from rocefab.models.resolve import Resolution, ResolvedFabric

_ASN_MAX = 4_294_967_294


def check(intent: Intent, resolution: Resolution) -> list[Finding]:
    found: list[Finding] = []
    for spec in sorted({m.spec for _, m in resolution.models}, key=lambda s: s.key):
        if intent.underlay.ecmp_max_paths > spec.ecmp_max_paths:
            found.append(error(
                "ecmp-exceeds-platform", ("underlay", "ecmp_max_paths"),
                f"{spec.display_name} installs at most {spec.ecmp_max_paths} ECMP paths, "
                f"{intent.underlay.ecmp_max_paths} asked",
                f"set ecmp_max_paths to {spec.ecmp_max_paths} or less",
            ))
    fabric = resolution.fabric
    if fabric is None:
        return found
    uplinks = _uplinks_per_leaf(fabric)
    if uplinks > intent.underlay.ecmp_max_paths:
        found.append(warning(
            "ecmp-narrower-than-uplinks", ("underlay", "ecmp_max_paths"),
            f"each leaf has {uplinks} uplinks but ECMP uses at most {intent.underlay.ecmp_max_paths}",
            "the remaining uplinks carry no traffic until another fails",
        ))
    found.extend(_names(fabric))
    found.extend(_asns(intent, fabric))
    return found


def _uplinks_per_leaf(fabric: ResolvedFabric) -> int:
    counts = [len(fabric.pods[pair.pod]) * pair.uplinks_per_spine for pair in fabric.pairs]
    if fabric.leaf_uplinks is not None:
        counts.append(fabric.leaf_uplinks.count)
    return max(counts, default=0)


def _names(fabric: ResolvedFabric) -> list[Finding]:
    """Pairs, leaves, spines, super-spines and hosts share one namespace (file names, BGP descriptions)."""
    upper = (*(s for plane in fabric.planes for s in plane), *(s for pod in fabric.pods for s in pod))
    owners: list[tuple[str, str, Path]] = [(s.name, s.role.value, s.path) for s in upper]
    leaves = {s.name: s for s in fabric.leaves}
    for pair in fabric.pairs:
        owners.append((pair.name, "leaf pair", pair.name_path))
        owners += [(leaf.name, "leaf", leaf.path) for leaf in pair.leaves]
        owners += [(host.name, "host", host.path) for host in pair.hosts]
    paired = {leaf.name for pair in fabric.pairs for leaf in pair.leaves}
    owners += [(name, "leaf", leaf.path) for name, leaf in leaves.items() if name not in paired]
    owners += [(host.name, "host", host.path) for group in fabric.rails for host in group.hosts]
    found: list[Finding] = []
    first_seen: dict[str, tuple[str, Path]] = {}
    for name, kind, path in owners:
        if name not in first_seen:
            first_seen[name] = (kind, path)
            continue
        other_kind, other_path = first_seen[name]
        found.append(error(
            "duplicate-name", path,
            f"the {kind} name '{name}' is already used by a {other_kind} ({dotted(other_path)})",
            "pairs, leaves, spines and hosts share one namespace; every one needs its own name",
        ))
    return found


def _asns(intent: Intent, fabric: ResolvedFabric) -> list[Finding]:
    asn = intent.underlay.asn
    leaves, pods = len(fabric.leaves), len(fabric.pods) if fabric.tiers == 3 else 0
    last = asn.leaf_first + leaves - 1
    found = []
    spine_asns = range(asn.spine, asn.spine + max(pods, 1))
    if any(asn.leaf_first <= a <= last for a in spine_asns):
        spine_text = f"ASN {asn.spine}" if len(spine_asns) == 1 else f"ASNs {asn.spine}-{spine_asns[-1]}"
        found.append(error(
            "duplicate-asn", ("underlay", "asn", "spine"),
            f"spine {spine_text} falls inside the leaf ASN range {asn.leaf_first}-{last}",
            "leaves would drop routes through the spines as AS-path loops",
        ))
    if pods:
        if asn.superspine is None:
            found.append(error(
                "missing-asn", ("underlay", "asn"),
                "a three-tier fabric needs underlay.asn.superspine for its super-spines",
            ))
        elif asn.superspine in spine_asns or asn.leaf_first <= asn.superspine <= last:
            found.append(error(
                "duplicate-asn", ("underlay", "asn", "superspine"),
                f"super-spine ASN {asn.superspine} is also a spine or leaf ASN",
            ))
    if last > _ASN_MAX:
        found.append(error(
            "asn-range-overflow", ("underlay", "asn", "leaf_first"),
            f"{leaves} leaves starting at {asn.leaf_first} run past the largest ASN {_ASN_MAX}",
        ))
    return found
