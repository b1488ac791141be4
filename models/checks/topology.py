"""Topology: known models, multihoming per platform, names, ASNs and ECMP width."""

from __future__ import annotations

from rocefab.models.catalogue import MODELS, lookup_model
from rocefab.models.checks.common import error, fabric_counts, warning
from rocefab.models.findings import Finding, Path, dotted
from rocefab.models.intent import Clos, Intent, Topology
from rocefab.models.naming import host_names_by_pair, spine_names
from rocefab.models.sizing import size_clos

_ASN_MAX = 4_294_967_294


def check(intent: Intent) -> list[Finding]:
    topo = intent.topology
    if not isinstance(topo, Topology):
        return _asns(intent)  # a sized fabric's tiers are judged by the design checks
    found: list[Finding] = []
    known = ", ".join(MODELS)

    spine_model = lookup_model(topo.spines.model)
    if spine_model is None:
        found.append(error(
            "unknown-switch-model", ("topology", "spines", "model"),
            f"no switch model '{topo.spines.model}' in the catalogue", f"known models: {known}",
        ))
    platforms = set()
    for i, pair in enumerate(topo.leaf_pairs):
        model = lookup_model(pair.model)
        if model is None:
            found.append(error(
                "unknown-switch-model", ("topology", "leaf_pairs", i, "model"),
                f"no switch model '{pair.model}' in the catalogue", f"known models: {known}",
            ))
            continue
        platforms.add(model.spec)
        if pair.multihoming is not None and pair.multihoming not in model.spec.multihoming:
            offered = ", ".join(m.value for m in model.spec.multihoming)
            found.append(error(
                "multihoming-unsupported", ("topology", "leaf_pairs", i, "multihoming"),
                f"{model.spec.display_name} leaf pairs cannot use {pair.multihoming.value}",
                f"supported here: {offered}",
            ))
    if spine_model is not None:
        platforms.add(spine_model.spec)

    for spec in sorted(platforms, key=lambda s: s.key):
        if intent.underlay.ecmp_max_paths > spec.ecmp_max_paths:
            found.append(error(
                "ecmp-exceeds-platform", ("underlay", "ecmp_max_paths"),
                f"{spec.display_name} installs at most {spec.ecmp_max_paths} ECMP paths, "
                f"{intent.underlay.ecmp_max_paths} asked",
                f"set ecmp_max_paths to {spec.ecmp_max_paths} or less",
            ))
    uplinks = topo.spines.count * topo.leaf.uplinks_per_spine
    if uplinks > intent.underlay.ecmp_max_paths:
        found.append(warning(
            "ecmp-narrower-than-uplinks", ("underlay", "ecmp_max_paths"),
            f"each leaf has {uplinks} uplinks but ECMP uses at most {intent.underlay.ecmp_max_paths}",
            "the remaining uplinks carry no traffic until another fails",
        ))

    found.extend(_names(intent))
    found.extend(_asns(intent))
    return found


def _names(intent: Intent) -> list[Finding]:
    found: list[Finding] = []
    topo = intent.topology
    assert isinstance(topo, Topology)
    spines = spine_names(intent)
    hosts = host_names_by_pair(intent)
    if topo.spines.names is not None and len(topo.spines.names) != topo.spines.count:
        found.append(error(
            "spine-names-count", ("topology", "spines", "names"),
            f"{len(topo.spines.names)} name(s) given for {topo.spines.count} spine(s)",
        ))
    # Every name with the intent field that produced it: the explicit list entry, or the name format.
    owners: list[tuple[str, str, Path]] = []
    for k, name in enumerate(spines):
        path: Path = ("topology", "spines", "names", k) if topo.spines.names else ("topology", "spines", "name_format")
        owners.append((name, "spine", path))
    for i, pair in enumerate(topo.leaf_pairs):
        pair_path: Path = ("topology", "leaf_pairs", i)
        owners.append((pair.name, "leaf pair", (*pair_path, "name")))
        for side, leaf in enumerate(pair.leaf_names):
            owners.append((leaf, "leaf", (*pair_path, "leaves", side) if pair.leaves else (*pair_path, "name")))
        for j, host in enumerate(hosts[pair.name]):
            host_path: Path = (*pair_path, "host_names", j) if pair.host_names else ("hosts", "name_format")
            owners.append((host, "host", host_path))
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


def _asns(intent: Intent) -> list[Finding]:
    asn = intent.underlay.asn
    counts = fabric_counts(intent)
    if counts is None:
        return []
    topo = intent.topology
    if isinstance(topo, Clos):
        size = size_clos(intent)  # it sizes: fabric_counts said so
        leaves, pods = size.leaves, size.pods if size.tiers == 3 else 0
    else:
        leaves, pods = 2 * len(topo.leaf_pairs), 0
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
