"""A rail-optimized fabric's servers: NIC r of every server on a leaf of rail r, as a routed /31, with a
routing table of its own on the host. Each leaf's /31s come from one aligned block of its rail's slice
(renderers/rail_blocks.py), and the leaf advertises one summary-only aggregate of them."""

from __future__ import annotations

import math
from ipaddress import IPv4Network

from rocefab.renderers.drafts import PlanState, dotted
from rocefab.renderers.plan import Endpoint, Host, HostNic, LinkKind, PortRole, SwitchPort
from rocefab.renderers.ports import AllocationError
from rocefab.renderers.rail_blocks import aggregate, block_size, leaf_block

FIRST_NIC_TABLE = 100  # routing table of rail 0's NIC; rail r uses FIRST_NIC_TABLE + r


def rail_pod(state: PlanState, pod: int | None) -> int | None:
    """The pod a rail host is placed in: its group's in a three-tier fabric, none in a two-tier one."""
    return pod if state.fabric.tiers == 3 else None


def rail_hosts(state: PlanState) -> list[Host]:
    intent, fabric = state.intent, state.fabric
    size = fabric.size
    assert size is not None, "rail-optimized fabrics are sized"
    host_subnet = intent.underlay.host_subnet
    assert host_subnet is not None, "the host checks require underlay.host_subnet for rail-optimized fabrics"
    rails = size.rails
    rail_prefix = host_subnet.prefixlen + math.ceil(math.log2(rails)) if rails > 1 else host_subnet.prefixlen
    blocks = size.pods * (size.leaves_per_pod // rails)  # leaves per rail
    per_leaf = block_size(size.nodes_per_leaf)
    if rail_prefix > 31 or 2 ** (32 - rail_prefix) < blocks * per_leaf:
        raise AllocationError(
            "address-pool-too-small",
            f"underlay.host_subnet {host_subnet} cannot give {rails} rails an aligned block of {per_leaf} addresses "
            f"(a /31 for each of {size.nodes_per_leaf} servers) for each of their {blocks} leaves",
            "use a larger host_subnet",
        )
    nets = [IPv4Network((int(host_subnet.network_address) + r * 2 ** (32 - rail_prefix), rail_prefix))
            for r in range(rails)]
    rail_routes = [(str(net),) for net in nets]
    fabric_route = (str(host_subnet),)
    hosts = []
    for group in fabric.rails:
        leaves = [state.drafts[leaf.name] for leaf in group.leaves]
        owned = [leaf_block(nets[r], group.block, size.nodes_per_leaf) for r in range(rails)]
        firsts = [int(block.network_address) for block in owned]  # server i takes the /31 at 2i of its block
        for i, slot in enumerate(group.hosts):
            name = slot.name
            nics = []
            for r, nic in enumerate(intent.hosts.nics):
                leaf = leaves[r]
                described = f"{name} {nic.netdev}"
                port = leaf.allocator.next_port(fabric.nic_speed_gbps, f"host {described}")
                gateway, host_address = dotted(firsts[r] + 2 * i), dotted(firsts[r] + 2 * i + 1)
                leaf_side = f"{gateway}/31"
                host_end = Endpoint(name, nic.netdev)  # one record for the port's peer and the link's end
                leaf.ports.append(SwitchPort(
                    port.name, port.cage, PortRole.HOST, port.speed_gbps, port.lanes, port.broken_out,
                    host_end, described, ipv4=leaf_side,
                ))
                leaf.networks.append(leaf_side)
                cable = state.link(LinkKind.HOST, Endpoint(leaf.name, port.name), host_end, port.speed_gbps)
                nics.append(HostNic(
                    nic.netdev, nic.rdma_device, fabric.nic_speed_gbps, r, leaf.name, port.name, f"{host_address}/31",
                    gateway, rail_routes[r], FIRST_NIC_TABLE + r, fabric_route, cable.length_m,
                ))
            hosts.append(Host(name, None, rail_pod(state, group.pod), (), tuple(nics), state.racks[name]))
        # One server's /31 is its own summary: an aggregate needs contributors longer than itself.
        if len(group.hosts) > 1:
            for r, leaf in enumerate(leaves):
                leaf.aggregates.append(str(aggregate(owned[r], len(group.hosts))))
    return hosts
