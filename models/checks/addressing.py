"""Addressing: pools that overlap or run short, and VLANs the platforms cannot use."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network

from rocefab.models.checks.common import error, leaf_models_in_use
from rocefab.models.findings import Finding, Path, dotted
from rocefab.models.intent import Intent
from rocefab.models.resolve import Resolution

# Per leaf pair and VLAN slice: network, broadcast, gateway VIP and one address per leaf.
RESERVED_PER_SLICE = 5


def check(intent: Intent, resolution: Resolution) -> list[Finding]:
    return [*_pools(intent, resolution), *_vlans(intent, resolution)]


def _pools(intent: Intent, resolution: Resolution) -> list[Finding]:
    u = intent.underlay
    named: list[tuple[Path, IPv4Network | None]] = [
        (("underlay", "loopback_subnet"), u.loopback_subnet),
        (("underlay", "p2p_subnet"), u.p2p_subnet),
        (("underlay", "peer_link_subnet"), u.peer_link_subnet),
        (("underlay", "host_subnet"), u.host_subnet),
        *((("vlans", i, "subnet"), v.subnet) for i, v in enumerate(intent.vlans)),
        (("management", "subnet"), intent.management.subnet if intent.management else None),
    ]
    pools = [(path, net) for path, net in named if net is not None]
    found: list[Finding] = []
    for i, (path_a, net_a) in enumerate(pools):
        for path_b, net_b in pools[i + 1:]:
            if net_a.overlaps(net_b):
                found.append(error(
                    "address-pool-overlap", path_b,
                    f"{net_b} overlaps {net_a} ({dotted(path_a)})",
                    "every pool must be disjoint, or the same address is given out twice",
                ))

    fabric = resolution.fabric
    if fabric is None:
        return found  # the resolution reports why
    switches, pairs = len(fabric.switches), len(fabric.pairs)
    # Loopbacks start at the pool's second address: the first reads like a network address.
    if u.loopback_subnet.num_addresses - 1 < switches:
        found.append(error(
            "address-pool-too-small", ("underlay", "loopback_subnet"),
            f"{u.loopback_subnet} holds {u.loopback_subnet.num_addresses - 1} loopback address(es) for "
            f"{switches} switches",
            f"a /{_prefix_for(switches + 1)} or larger holds them",
        ))
    if fabric.uses_vlans:
        if u.peer_link_subnet is None:
            found.append(error(
                "missing-address-pool", ("underlay", "peer_link_subnet"),
                "leaf pairs need a peer_link_subnet for their peer SVI /31s",
            ))
        elif u.peer_link_subnet.num_addresses < 2 * pairs:
            found.append(error(
                "address-pool-too-small", ("underlay", "peer_link_subnet"),
                f"{u.peer_link_subnet} holds {u.peer_link_subnet.num_addresses // 2} /31 subnet(s) "
                f"for {pairs} leaf pair(s)",
                f"a /{_prefix_for(2 * pairs)} or larger holds them",
            ))
    mgmt = intent.management
    if mgmt is not None:
        found.extend(_management_gateway(mgmt.subnet, mgmt.gateway, mgmt.first_offset, switches))
        if mgmt.first_offset + switches > mgmt.subnet.num_addresses - 1:
            found.append(error(
                "address-pool-too-small", ("management", "subnet"),
                f"{mgmt.subnet} from offset {mgmt.first_offset} cannot address {switches} switches",
                f"a /{_prefix_for(mgmt.first_offset + switches + 1)} or larger holds them",
            ))
    return found


def _management_gateway(subnet: IPv4Network, gateway: IPv4Address, first_offset: int,
                        switches: int) -> list[Finding]:
    """The gateway must be a usable address of the subnet that no switch is given (switch i gets address
    number first_offset + i)."""
    path = ("management", "gateway")
    if gateway not in subnet:
        return [error("management-gateway-outside", path, f"gateway {gateway} is not inside {subnet}")]
    if subnet.prefixlen < 31 and gateway in (subnet.network_address, subnet.broadcast_address):
        which = "network" if gateway == subnet.network_address else "broadcast"
        return [error("management-gateway-unusable", path, f"gateway {gateway} is the {which} address of {subnet}")]
    number = int(gateway) - int(subnet.network_address)
    if first_offset <= number < first_offset + switches:
        return [error("management-gateway-is-device", path,
                      f"gateway {gateway} is the management address of switch {number - first_offset + 1} "
                      f"(switches take {subnet.network_address + first_offset} onwards)",
                      "move the gateway below management.first_offset, or raise first_offset")]
    return []


def _prefix_for(addresses: int) -> int:
    """The longest IPv4 prefix with at least this many addresses.

    >>> _prefix_for(1280), _prefix_for(1024), _prefix_for(1)
    (21, 22, 32)
    """
    return 32 - max(addresses - 1, 0).bit_length()


def _vlans(intent: Intent, resolution: Resolution) -> list[Finding]:
    found: list[Finding] = []
    seen_ids: set[int] = set()
    seen_names: set[str] = set()
    # VLANs live on the leaves only; a spine's reserved range does not matter.
    leaf_models = leaf_models_in_use(resolution)
    specs = {model.spec.key: model.spec for model in leaf_models}
    peer_vlans = {model.spec.peer_vlan_default for model in leaf_models}
    fabric = resolution.fabric
    pair_count = len(fabric.pairs) if fabric else 0
    hosts_most = fabric.most_hosts_per_pair if fabric else 0

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
        if slices < pair_count:
            found.append(error(
                "address-pool-too-small", (*path, "subnet"),
                f"{vlan.subnet} yields {slices} /{vlan.pair_prefix_length} slices for {pair_count} leaf pairs",
            ))
        capacity = 2 ** (32 - vlan.pair_prefix_length) - RESERVED_PER_SLICE
        if hosts_most > capacity:
            found.append(error(
                "address-pool-too-small", (*path, "pair_prefix_length"),
                f"a /{vlan.pair_prefix_length} slice addresses {capacity} hosts; a leaf pair here has {hosts_most}",
                "use a shorter pair_prefix_length",
            ))
    return found
