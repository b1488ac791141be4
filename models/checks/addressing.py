"""Addressing: pools that overlap or run short, and VLANs the platforms cannot use."""

from __future__ import annotations

from ipaddress import IPv4Network

from models.catalogue import lookup_model
from models.checks.common import error, models_in_use
from models.findings import Finding, Path
from models.intent import Intent

# Per leaf pair and VLAN slice: network, broadcast, gateway VIP and one address per leaf.
RESERVED_PER_SLICE = 5


def check(intent: Intent) -> list[Finding]:
    return [*_pools(intent), *_vlans(intent)]


def _pools(intent: Intent) -> list[Finding]:
    u = intent.underlay
    pools: list[tuple[Path, IPv4Network]] = [
        (("underlay", "loopback_subnet"), u.loopback_subnet),
        (("underlay", "p2p_subnet"), u.p2p_subnet),
        (("underlay", "peer_link_subnet"), u.peer_link_subnet),
        *((("vlans", i, "subnet"), v.subnet) for i, v in enumerate(intent.vlans)),
    ]
    if intent.management is not None:
        pools.append((("management", "subnet"), intent.management.subnet))
    found: list[Finding] = []
    for i, (path_a, net_a) in enumerate(pools):
        for path_b, net_b in pools[i + 1:]:
            if net_a.overlaps(net_b):
                found.append(error(
                    "address-pool-overlap", path_b,
                    f"{net_b} overlaps {net_a} ({'.'.join(map(str, path_a))})",
                    "every pool must be disjoint, or the same address is given out twice",
                ))

    pairs = len(intent.topology.leaf_pairs)
    switches = intent.topology.spines.count + 2 * pairs
    # Loopbacks start at the pool's second address: the first reads like a network address.
    if u.loopback_subnet.num_addresses - 1 < switches:
        found.append(error(
            "address-pool-too-small", ("underlay", "loopback_subnet"),
            f"{u.loopback_subnet} holds {u.loopback_subnet.num_addresses - 1} loopback address(es) for "
            f"{switches} switches",
        ))
    if u.peer_link_subnet.num_addresses < 2 * pairs:
        found.append(error(
            "address-pool-too-small", ("underlay", "peer_link_subnet"),
            f"{u.peer_link_subnet} holds {u.peer_link_subnet.num_addresses // 2} /31 subnet(s) "
            f"for {pairs} leaf pair(s)",
        ))
    mgmt = intent.management
    if mgmt is not None:
        if mgmt.gateway not in mgmt.subnet:
            found.append(error(
                "management-gateway-outside", ("management", "gateway"),
                f"gateway {mgmt.gateway} is not inside {mgmt.subnet}",
            ))
        if mgmt.first_offset + switches > mgmt.subnet.num_addresses - 1:
            found.append(error(
                "address-pool-too-small", ("management", "subnet"),
                f"{mgmt.subnet} from offset {mgmt.first_offset} cannot address {switches} switches",
            ))
    return found


def _vlans(intent: Intent) -> list[Finding]:
    found: list[Finding] = []
    seen_ids: set[int] = set()
    seen_names: set[str] = set()
    # VLANs live on the leaves only; a spine's reserved range does not matter.
    specs = {
        model.spec.key: model.spec for path, model in models_in_use(intent) if path[:2] == ("topology", "leaf_pairs")
    }
    peer_vlans = _peer_vlans(intent)
    pairs = intent.topology.leaf_pairs
    hosts_most = max((p.host_count for p in pairs), default=0)

    for i, vlan in enumerate(intent.vlans):
        path = ("vlans", i)
        if vlan.id in seen_ids:
            found.append(error("duplicate-vlan", (*path, "id"), f"VLAN {vlan.id} is already defined above"))
        if vlan.name in seen_names:
            found.append(error("duplicate-vlan", (*path, "name"), f"VLAN name '{vlan.name}' is already used above"))
        seen_ids.add(vlan.id)
        seen_names.add(vlan.name)
        if vlan.id == 1:
            found.append(error(
                "vlan-reserved", (*path, "id"), "VLAN 1 is every switch's default VLAN",
                "carry training traffic in a dedicated VLAN of its own",
            ))
        for spec in sorted(specs.values(), key=lambda s: s.key):
            if spec.is_reserved_vlan(vlan.id):
                found.append(error(
                    "vlan-reserved", (*path, "id"),
                    f"VLAN {vlan.id} is reserved for internal use on {spec.display_name}",
                    "pick an id outside " + ", ".join(f"{lo}-{hi}" for lo, hi in spec.reserved_vlans),
                ))
        if vlan.id in peer_vlans:
            found.append(error(
                "vlan-reserved", (*path, "id"),
                f"VLAN {vlan.id} is the peer-link VLAN of a leaf pair",
                "choose another training VLAN id",
            ))
        if vlan.pair_prefix_length < vlan.subnet.prefixlen:
            found.append(error(
                "vlan-slice-invalid", (*path, "pair_prefix_length"),
                f"/{vlan.pair_prefix_length} slices cannot be cut from {vlan.subnet}",
            ))
            continue
        slices = 2 ** (vlan.pair_prefix_length - vlan.subnet.prefixlen)
        if slices < len(pairs):
            found.append(error(
                "address-pool-too-small", (*path, "subnet"),
                f"{vlan.subnet} yields {slices} /{vlan.pair_prefix_length} slices for {len(pairs)} leaf pairs",
            ))
        capacity = 2 ** (32 - vlan.pair_prefix_length) - RESERVED_PER_SLICE
        if hosts_most > capacity:
            found.append(error(
                "address-pool-too-small", (*path, "pair_prefix_length"),
                f"a /{vlan.pair_prefix_length} slice addresses {capacity} hosts; a leaf pair here has {hosts_most}",
                "use a shorter pair_prefix_length",
            ))
    return found


def _peer_vlans(intent: Intent) -> set[int]:
    found = set()
    for pair in intent.topology.leaf_pairs:
        model = lookup_model(pair.model)
        if model is not None:
            found.add(model.spec.peer_vlan_default)
    return found
