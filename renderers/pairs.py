"""A ToR leaf pair: its ports, its peer link (MLAG or vPC), its uplinks, and its dual-homed servers."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network

from rocefab.models.findings import Path
from rocefab.models.resolve import PairGroup
from rocefab.platforms.spec import Multihoming
from rocefab.renderers.drafts import PlanState, SwitchDraft, address
from rocefab.renderers.links import uplinks
from rocefab.renderers.plan import (
    BgpNeighbor,
    Endpoint,
    Host,
    HostBond,
    HostPort,
    Lag,
    LinkKind,
    Mlag,
    PortRole,
    Svi,
    SwitchPort,
)
from rocefab.renderers.port_paths import SharedAllocator
from rocefab.renderers.ports import AllocationError, Port

FIRST_HOST_OFFSET = 4  # in each VLAN slice: .1 gateway VIP, .2 leaf a, .3 leaf b, hosts from .4
PEER_LINK_LAG_NUMBER = 1000
FIRST_BOND_TABLE = 200  # routing table of bond 0 when a host has several; bond b uses FIRST_BOND_TABLE + b
MLAG_MAC_PREFIX = "44:38:39:ff"  # Cumulus reserved MLAG system-MAC range


def _slice(net: IPv4Network, prefix_length: int, index: int) -> IPv4Network:
    size = 2 ** (32 - prefix_length)
    return IPv4Network((int(net.network_address) + index * size, prefix_length))


def _explicit(alloc: SharedAllocator, speed: int, count: int, cages: tuple[int, ...], purpose: str,
              path: Path) -> list[Port]:
    """Allocate from cages the intent lists, so errors point at that list."""
    try:
        return alloc.take(speed, count, cages, purpose, explicit=True)
    except AllocationError as exc:
        exc.path = path
        raise


def plan_pair(state: PlanState, pair: PairGroup, spines: Sequence[SwitchDraft]) -> list[Host]:
    intent = state.intent
    leaves = [state.drafts[leaf.name] for leaf in pair.leaves]
    overrides, path = pair.overrides, pair.overrides_path
    uplink_count = len(spines) * pair.uplinks_per_spine
    # Both leaves of a pair are the same model and take the same requests, so they get identical ports.
    allocations = []
    for leaf in leaves:
        alloc = leaf.allocator
        if overrides.peer_link_cages is not None:
            peer = _explicit(alloc, pair.peer_speed_gbps, pair.peer_links, overrides.peer_link_cages,
                             "the peer link", (*path, "peer_link_cages"))
        else:
            peer = alloc.reserve_top(pair.peer_speed_gbps, pair.peer_links, "the peer link")
        if overrides.uplink_cages is not None:
            up = _explicit(alloc, pair.uplink_speed_gbps, uplink_count, overrides.uplink_cages, "spine uplinks",
                           (*path, "uplink_cages"))
        else:
            up = alloc.reserve_top(pair.uplink_speed_gbps, uplink_count, "spine uplinks")
        first = overrides.host_cages_from or 1
        host_ports: list[list[Port]] = []
        for host in pair.hosts:
            host_ports.append([alloc.next_port(bond.speed_gbps, f"host {host.name} {bond.name}", first)
                               for bond in intent.hosts.bonds])
        allocations.append((peer, up, host_ports))

    _peer_link(state, pair, leaves, [a[0] for a in allocations])
    for leaf, (_, up, _) in zip(leaves, allocations, strict=True):
        uplinks(state, leaf, up, spines, pair.uplinks_per_spine)
    return _hosts(state, pair, leaves, [a[2] for a in allocations])


def _peer_link(state: PlanState, pair: PairGroup, leaves: list[SwitchDraft], ports: list[list[Port]]) -> None:
    spec = leaves[0].model.spec
    p, kind = pair.index, pair.multihoming
    net = state.intent.underlay.peer_link_subnet
    assert net is not None, "the addressing checks require a peer_link_subnet for leaf pairs"
    addresses = [address(net, 2 * p), address(net, 2 * p + 1)]
    mgmt = [leaf.management.ipv4.split("/")[0] if leaf.management else None for leaf in leaves]
    for side, leaf in enumerate(leaves):
        other = 1 - side
        peer = leaves[other]
        members = []
        for mine, theirs in zip(ports[side], ports[other], strict=True):
            leaf.ports.append(SwitchPort(
                mine.name, mine.cage, PortRole.PEER_LINK, mine.speed_gbps, mine.lanes, mine.broken_out,
                Endpoint(peer.name, theirs.name), f"{peer.name} {theirs.name} peer-link", lag=spec.peer_link_lag,
            ))
            members.append(mine.name)
            if side == 0:
                state.link(LinkKind.PEER_LINK, Endpoint(leaf.name, mine.name), Endpoint(peer.name, theirs.name),
                           mine.speed_gbps)
        leaf.lags.append(Lag(spec.peer_link_lag, PEER_LINK_LAG_NUMBER, PortRole.PEER_LINK, tuple(members),
                             f"{peer.name} peer-link"))
        leaf.mlag = Mlag(
            kind="vpc" if kind is Multihoming.VPC else "mlag",
            domain_id=p + 1,
            domain_name=pair.name,
            peer=peer.name,
            primary=side == 0,
            peer_link=spec.peer_link_lag,
            peer_vlan=spec.peer_vlan_default,
            local_ipv4=f"{addresses[side]}/31",
            peer_ipv4=str(addresses[other]),
            system_mac=f"{MLAG_MAC_PREFIX}:{(p >> 8) & 0xFF:02x}:{p & 0xFF:02x}",
            peer_loopback_ipv4=str(peer.loopback),
            keepalive_source=mgmt[side],
            keepalive_destination=mgmt[other],
        )
        session_interface = spec.peer_session_interface
        leaf.neighbors.append(BgpNeighbor(
            peer.name, peer.asn, f"{peer.name} mlag-peer", "MLAG-PEER",
            interface=session_interface, address=None if session_interface else str(addresses[other]),
        ))
        if session_interface is None:
            leaf.svis.append(Svi(
                spec.peer_vlan_default, "mlag-peer", f"{addresses[side]}/31", None,
                str(IPv4Network(f"{addresses[side]}/31", strict=False)), peer_link=True,
            ))


def _hosts(state: PlanState, pair: PairGroup, leaves: list[SwitchDraft], ports: list[list[list[Port]]]) -> list[Host]:
    intent = state.intent
    p = pair.index
    spec = leaves[0].model.spec
    bonds = intent.hosts.bonds
    vlans = {v.id: v for v in intent.vlans}
    slices = {v.id: _slice(v.subnet, v.pair_prefix_length, p) for v in intent.vlans}
    for side, leaf in enumerate(leaves):
        for vlan in sorted(vlans.values(), key=lambda v: v.id):
            net = slices[vlan.id]
            leaf.svis.append(Svi(vlan.id, vlan.name, f"{address(net, 2 + side)}/{net.prefixlen}",
                                 str(address(net, 1)), str(net)))
            leaf.networks.append(str(net))
    if len(pair.hosts) * len(bonds) >= PEER_LINK_LAG_NUMBER:
        raise AllocationError("ports-exhausted", f"{pair.name}: more than {PEER_LINK_LAG_NUMBER - 1} host LAGs")
    training_subnets = tuple(str(vlans[v].subnet) for v in sorted({b.vlan for b in bonds}))
    hosts = []
    for j, slot in enumerate(pair.hosts):
        host = slot.name
        host_bonds = []
        for b, bond in enumerate(bonds):
            number = 1 + j * len(bonds) + b
            lag_name = spec.lag_format.format(n=number)
            members = []
            for side, leaf in enumerate(leaves):
                port = ports[side][j][b]
                netdev = bond.members[side]
                leaf.ports.append(SwitchPort(
                    port.name, port.cage, PortRole.HOST, port.speed_gbps, port.lanes, port.broken_out,
                    Endpoint(host, netdev), f"{host} {netdev}", lag=lag_name,
                ))
                leaf.lags.append(Lag(lag_name, number, PortRole.HOST, (port.name,), f"{host} {bond.name}",
                                     access_vlan=bond.vlan, mlag_id=number, host=host, host_bond=bond.name))
                cable = state.link(LinkKind.HOST, Endpoint(leaf.name, port.name), Endpoint(host, netdev),
                                   port.speed_gbps)
                members.append(HostPort(netdev, leaf.name, port.name, cable.length_m))
            net = slices[bond.vlan]
            host_bonds.append(HostBond(
                bond.name, (members[0], members[1]), bond.rdma_device, bond.speed_gbps, bond.vlan,
                f"{address(net, FIRST_HOST_OFFSET + j)}/{net.prefixlen}", str(address(net, 1)),
                (str(vlans[bond.vlan].subnet),),
                FIRST_BOND_TABLE + b if len(bonds) > 1 else None,
                training_subnets if len(bonds) > 1 else (),
            ))
        hosts.append(Host(host, pair.name, None, tuple(host_bonds), rack=state.racks[host]))
    return hosts
