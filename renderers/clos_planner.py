"""Plan a sized Clos fabric: super-spine planes, pods of spines, rail-optimized leaves or ToR leaf pairs,
and every server, from the counts `models.sizing` derives."""

from __future__ import annotations

import math
from ipaddress import IPv4Network

from rocefab.models.intent import Clos, Intent, PortOverrides
from rocefab.models.naming import format_name
from rocefab.models.sizing import ClosSize, size_clos
from rocefab.renderers.plan import (
    Endpoint,
    FabricPlan,
    Host,
    HostNic,
    Link,
    LinkKind,
    PortRole,
    Role,
    Source,
    SwitchPort,
)
from rocefab.renderers.planner import PairSpec, PlanningError, _address, _PlannerBase, _SwitchDraft
from rocefab.renderers.ports import AllocationError

FIRST_NIC_TABLE = 100  # routing table of rail 0's NIC; rail r uses FIRST_NIC_TABLE + r


class _ClosPlanner(_PlannerBase):
    def build(self) -> FabricPlan:
        intent = self.intent
        topo = intent.topology
        assert isinstance(topo, Clos)
        size = size_clos(intent)  # the design checks ran first: it sizes
        asn = intent.underlay.asn
        three = size.tiers == 3

        planes: list[list[_SwitchDraft]] = []
        if three:
            assert asn.superspine is not None and size.superspine is not None
            n = 0
            for _plane in range(size.spines_per_pod):
                row = []
                for _ in range(size.superspines_per_plane):
                    n += 1
                    row.append(self._draft(format_name(topo.names.superspine, n), Role.SUPERSPINE, size.superspine,
                                           asn.superspine))
                planes.append(row)
        pods: list[list[_SwitchDraft]] = []
        n = 0
        for p in range(size.pods):
            row = []
            for _ in range(size.spines_per_pod):
                n += 1
                row.append(self._draft(format_name(topo.names.spine, n), Role.SPINE, size.spine,
                                       asn.spine + p if three else asn.spine, pod=p if three else None))
            pods.append(row)
        try:
            if three:
                # Spine k of every pod reaches super-spine plane k; those uplinks take the top cages first.
                for row in pods:
                    for k, spine in enumerate(row):
                        ups = spine.allocator.reserve_top(size.uplink_speed_gbps, size.spine_uplinks,
                                                          "super-spine uplinks")
                        self._uplinks(spine, ups, planes[k], size.spine_links_per_superspine)
            if topo.design == "rail-optimized":
                leaves, hosts = self._rails(size, pods)
            else:
                leaves, hosts = self._pairs(size, pods)
        except AllocationError as exc:
            self.fail(exc, ("topology",))
            raise PlanningError(self.findings) from None
        switches = [*(s for row in planes for s in row), *(s for row in pods for s in row), *leaves]
        return self._finish(switches, hosts)

    def _leaf_uplinks(self, size: ClosSize, leaf: _SwitchDraft, spines: list[_SwitchDraft]) -> None:
        ups = leaf.allocator.reserve_top(size.uplink_speed_gbps, size.uplinks_per_leaf, "spine uplinks")
        self._uplinks(leaf, ups, spines, size.leaf_links_per_spine)

    def _rails(self, size: ClosSize, pods: list[list[_SwitchDraft]]) -> tuple[list[_SwitchDraft], list[Host]]:
        intent = self.intent
        topo = intent.topology
        assert isinstance(topo, Clos)
        three = size.tiers == 3
        per_rail = size.leaves_per_pod // size.rails
        leaves: list[_SwitchDraft] = []
        grid: list[list[list[_SwitchDraft]]] = []  # [pod][rail][j]
        for p, spines in enumerate(pods):
            by_rail = []
            for r in range(size.rails):
                row = []
                for _ in range(per_rail):
                    index = len(leaves)
                    leaf = self._draft(format_name(topo.names.leaf, index + 1), Role.LEAF, size.leaf,
                                       intent.underlay.asn.leaf_first + index, pod=p if three else None, rail=r)
                    self._leaf_uplinks(size, leaf, spines)
                    row.append(leaf)
                    leaves.append(leaf)
                by_rail.append(row)
            grid.append(by_rail)

        fabric = intent.underlay.host_subnet
        assert fabric is not None, "the host checks require underlay.host_subnet for rail-optimized fabrics"
        rail_prefix = fabric.prefixlen + math.ceil(math.log2(size.rails)) if size.rails > 1 else fabric.prefixlen
        capacity = size.pods * size.nodes_per_pod
        if rail_prefix > 31 or 2 ** (32 - rail_prefix) < 2 * capacity:
            raise AllocationError(
                "address-pool-too-small",
                f"underlay.host_subnet {fabric} cannot give {size.rails} rails a /31 for each of {capacity} servers",
                "use a larger host_subnet",
            )
        rails = [IPv4Network((int(fabric.network_address) + r * 2 ** (32 - rail_prefix), rail_prefix))
                 for r in range(size.rails)]
        rail_routes = [(str(net),) for net in rails]
        fabric_route = (str(fabric),)
        hosts = []
        for k in range(topo.nodes):
            p, within = divmod(k, size.nodes_per_pod)
            j = within // size.nodes_per_leaf
            name = format_name(intent.hosts.name_format, k + 1)
            nics = []
            for r, nic in enumerate(intent.hosts.nics):
                leaf = grid[p][r][j]
                port = leaf.allocator.next_port(size.nic_speed_gbps, f"host {name} {nic.netdev}")
                gateway, address = str(_address(rails[r], 2 * k)), str(_address(rails[r], 2 * k + 1))
                leaf_side = f"{gateway}/31"
                leaf.ports.append(SwitchPort(
                    port.name, port.cage, PortRole.HOST, port.speed_gbps, port.lanes, port.broken_out,
                    Endpoint(name, nic.netdev), f"{name} {nic.netdev}", ipv4=leaf_side,
                ))
                leaf.networks.append(leaf_side)
                self.links.append(Link(LinkKind.HOST, Endpoint(leaf.name, port.name), Endpoint(name, nic.netdev),
                                       port.speed_gbps))
                nics.append(HostNic(
                    nic.netdev, nic.rdma_device, size.nic_speed_gbps, r, leaf.name, port.name, f"{address}/31",
                    gateway, rail_routes[r], FIRST_NIC_TABLE + r, fabric_route,
                ))
            hosts.append(Host(name, None, p if size.tiers == 3 else None, (), tuple(nics)))
        return leaves, hosts

    def _pairs(self, size: ClosSize, pods: list[list[_SwitchDraft]]) -> tuple[list[_SwitchDraft], list[Host]]:
        intent = self.intent
        topo = intent.topology
        assert isinstance(topo, Clos)
        three = size.tiers == 3
        native = max(g.speed_gbps for g in size.leaf.cage_groups)
        pairs_per_pod = size.leaves_per_pod // 2
        leaves: list[_SwitchDraft] = []
        hosts: list[Host] = []
        for p, spines in enumerate(pods):
            # Pod p holds servers [p * nodes_per_pod, ...), filling its pairs in order.
            node = p * size.nodes_per_pod
            pod_end = min(topo.nodes, node + size.nodes_per_pod)
            for _ in range(pairs_per_pod):
                g = len(leaves) // 2
                name = format_name(topo.names.pair, g + 1)
                pair_leaves = [
                    self._draft(f"{name}-{side}", Role.LEAF, size.leaf, intent.underlay.asn.leaf_first + 2 * g + i,
                                pair=name, pod=p if three else None)
                    for i, side in enumerate("ab")
                ]
                leaves += pair_leaves
                count = max(0, min(size.nodes_per_leaf, pod_end - node))
                names = [format_name(intent.hosts.name_format, node + i + 1) for i in range(count)]
                node += count
                spec = PairSpec(
                    index=g, name=name, model=size.leaf, multihoming=size.leaf.spec.multihoming[0],
                    host_names=names, uplink_speed=size.uplink_speed_gbps,
                    uplinks_per_spine=size.leaf_links_per_spine, peer_speed=native, peer_links=2,
                    overrides=PortOverrides(), overrides_path=("topology",),
                )
                hosts += self._plan_pair(spec, pair_leaves, spines)
        return leaves, hosts


def plan_clos(intent: Intent, source: Source) -> FabricPlan:
    return _ClosPlanner(intent, source).build()
