"""Resolve a checked intent into a `FabricPlan`: names, ports, links, addresses, ASNs, LAGs, BGP and QoS."""

from __future__ import annotations

from dataclasses import dataclass, replace
from ipaddress import IPv4Address, IPv4Network

from rocefab.models.catalogue import Multihoming, SwitchModel, lookup_model
from rocefab.models.findings import Finding, Path, Severity
from rocefab.models.intent import Clos, Intent, LeafPair, PortOverrides, Topology
from rocefab.models.naming import host_names_by_pair, spine_names
from rocefab.renderers.natural import natural_key
from rocefab.renderers.placement import Placed, place
from rocefab.renderers.plan import (
    Bgp,
    BgpNeighbor,
    Endpoint,
    FabricPlan,
    Host,
    HostBond,
    HostPort,
    HostProfile,
    Lag,
    Link,
    LinkKind,
    Management,
    Mlag,
    PortRole,
    Qos,
    Role,
    Source,
    Svi,
    Switch,
    SwitchPort,
    Vlan,
)
from rocefab.renderers.ports import AllocationError, Port, PortAllocator

ECT0 = 0b10  # ECN-capable transport (0): what ConnectX sends with DCQCN enabled
FIRST_HOST_OFFSET = 4  # in each VLAN slice: .1 gateway VIP, .2 leaf a, .3 leaf b, hosts from .4
PEER_LINK_LAG_NUMBER = 1000
MLAG_MAC_PREFIX = "44:38:39:ff"  # Cumulus reserved MLAG system-MAC range


# BGP peer group a neighbor of each tier belongs to.
_GROUP = {Role.SUPERSPINE: "SUPERSPINES", Role.SPINE: "SPINES", Role.LEAF: "LEAVES"}


class PlanningError(Exception):
    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


@dataclass(slots=True)
class _SwitchDraft:
    """Mutable working state for one switch while the planner fills it in."""

    name: str
    role: Role
    model: SwitchModel
    pair: str | None
    asn: int
    loopback: IPv4Address
    allocator: PortAllocator
    ports: list[SwitchPort]
    lags: list[Lag]
    svis: list[Svi]
    neighbors: list[BgpNeighbor]
    networks: list[str]
    mlag: Mlag | None = None
    management: Management | None = None
    pod: int | None = None
    rail: int | None = None


@dataclass(frozen=True, slots=True)
class PairSpec:
    """Everything one leaf pair's planning needs, whether the intent listed the pair or rocefab sized it."""

    index: int  # the pair's position in the fabric: VLAN slices, MLAG domain and MAC follow it
    name: str
    model: SwitchModel
    multihoming: Multihoming
    host_names: list[str]
    uplink_speed: int
    uplinks_per_spine: int
    peer_speed: int
    peer_links: int
    overrides: PortOverrides
    overrides_path: Path


def _address(net: IPv4Network, offset: int) -> IPv4Address:
    return net.network_address + offset


def _prefix_order(prefix: str) -> tuple[int, int]:
    """Sort key of an "a.b.c.d/len" prefix, as IPv4Network orders them, without building one.

    >>> sorted(["10.0.0.10/31", "10.0.0.2/31", "10.0.0.2/32"], key=_prefix_order)
    ['10.0.0.2/31', '10.0.0.2/32', '10.0.0.10/31']
    """
    address, length = prefix.split("/")
    a, b, c, d = address.split(".")
    return (int(a) << 24 | int(b) << 16 | int(c) << 8 | int(d), int(length))


def _slice(net: IPv4Network, prefix_length: int, index: int) -> IPv4Network:
    size = 2 ** (32 - prefix_length)
    return IPv4Network((int(net.network_address) + index * size, prefix_length))


def plan_qos(intent: Intent) -> Qos:
    q = intent.qos
    mapping = dict(q.dscp_map)
    mapping[q.roce.dscp] = q.roce.priority
    mapping[q.cnp.dscp] = q.cnp.priority
    wd = q.pfc.watchdog
    return Qos(
        trust=q.trust,
        roce_dscp=q.roce.dscp,
        roce_priority=q.roce.priority,
        cnp_dscp=q.cnp.dscp,
        cnp_priority=q.cnp.priority,
        dscp_to_priority=tuple(sorted(mapping.items())),
        lossless_priorities=q.lossless_priorities,
        ecn_min_kbytes=q.ecn.min_threshold_kbytes,
        ecn_max_kbytes=q.ecn.max_threshold_kbytes,
        ecn_max_mark_percent=q.ecn.max_mark_percent,
        ets_roce_percent=q.ets.roce_percent,
        ets_default_percent=q.ets.default_percent,
        watchdog_enabled=wd.enabled,
        watchdog_polling_interval_ms=wd.polling_interval_ms,
        watchdog_robustness=wd.robustness,
        watchdog_recovery_ms=wd.recovery_ms,
        cable_length_m=q.pfc.cable_length_m,
        roce_tos=(q.roce.dscp << 2) | ECT0,
    )


class _PlannerBase:
    """Building blocks every planner shares: switches, fabric links, leaf pairs, hosts and the final plan."""

    def __init__(self, intent: Intent, source: Source) -> None:
        self.intent = intent
        self.source = source
        self.findings: list[Finding] = []
        self.links: list[Link] = []
        self.p2p_next = 0
        self.switch_index = 0  # loopback and management addresses follow the order switches are created

    def fail(self, exc: AllocationError, path: Path) -> None:
        self.findings.append(Finding(exc.code, Severity.ERROR, exc.path or path, exc.message, exc.hint))

    # --- devices ------------------------------------------------------------------------------------------

    def _draft(self, name: str, role: Role, model: SwitchModel, asn: int, *, pair: str | None = None,
               pod: int | None = None, rail: int | None = None) -> _SwitchDraft:
        index = self.switch_index
        self.switch_index += 1
        lo = _address(self.intent.underlay.loopback_subnet, index + 1)
        mgmt = None
        m = self.intent.management
        if m is not None:
            mgmt = Management(
                model.spec.mgmt_interface,
                f"{_address(m.subnet, m.first_offset + index)}/{m.subnet.prefixlen}",
                str(m.gateway),
            )
        return _SwitchDraft(
            name, role, model, pair, asn, lo, PortAllocator(model, name), [], [], [], [], [f"{lo}/32"],
            management=mgmt, pod=pod, rail=rail,
        )

    # --- one leaf pair ------------------------------------------------------------------------------------

    def _plan_pair(self, pair: PairSpec, leaves: list[_SwitchDraft], spines: list[_SwitchDraft]) -> list[Host]:
        intent = self.intent
        overrides, path = pair.overrides, pair.overrides_path
        uplink_count = len(spines) * pair.uplinks_per_spine
        # Both leaves of a pair are the same model and take the same requests, so they get identical ports.
        allocations = []
        for leaf in leaves:
            alloc = leaf.allocator
            if overrides.peer_link_cages is not None:
                peer = _explicit(alloc, pair.peer_speed, pair.peer_links, overrides.peer_link_cages,
                                 "the peer link", (*path, "peer_link_cages"))
            else:
                peer = alloc.reserve_top(pair.peer_speed, pair.peer_links, "the peer link")
            if overrides.uplink_cages is not None:
                up = _explicit(alloc, pair.uplink_speed, uplink_count, overrides.uplink_cages, "spine uplinks",
                               (*path, "uplink_cages"))
            else:
                up = alloc.reserve_top(pair.uplink_speed, uplink_count, "spine uplinks")
            first = overrides.host_cages_from or 1
            host_ports: list[list[Port]] = []
            for host in pair.host_names:
                host_ports.append([
                    alloc.next_port(bond.speed_gbps, f"host {host} {bond.name}", first)
                    for bond in intent.hosts.bonds
                ])
            allocations.append((peer, up, host_ports))

        self._peer_link(pair, leaves, [a[0] for a in allocations])
        for leaf, (_, up, _) in zip(leaves, allocations, strict=True):
            self._uplinks(leaf, up, spines, pair.uplinks_per_spine)
        return self._hosts(pair, leaves, [a[2] for a in allocations])

    def _common_speed(self, leaf: SwitchModel, spine: SwitchModel) -> int:
        common = set(leaf.speeds_gbps()) & set(spine.speeds_gbps())
        if not common:
            raise AllocationError(
                "link-speed-mismatch",
                f"{leaf.name} and {spine.name} share no port speed for uplinks",
                "set topology.leaf.uplink_speed_gbps or choose compatible models",
            )
        return max(common)

    def _peer_link(self, pair: PairSpec, leaves: list[_SwitchDraft], ports: list[list[Port]]) -> None:
        spec = leaves[0].model.spec
        p, kind = pair.index, pair.multihoming
        net = self.intent.underlay.peer_link_subnet
        assert net is not None, "the addressing checks require a peer_link_subnet for leaf pairs"
        addresses = [_address(net, 2 * p), _address(net, 2 * p + 1)]
        mgmt = [leaf.management.ipv4.split("/")[0] if leaf.management else None for leaf in leaves]
        for side, leaf in enumerate(leaves):
            other = 1 - side
            peer = leaves[other]
            members = []
            for mine, theirs in zip(ports[side], ports[other], strict=True):
                leaf.ports.append(SwitchPort(
                    mine.name, mine.cage, PortRole.PEER_LINK, mine.speed_gbps, mine.lanes, mine.broken_out,
                    Endpoint(peer.name, theirs.name), f"{peer.name} {theirs.name} peer-link",
                    lag=spec.peer_link_lag,
                ))
                members.append(mine.name)
                if side == 0:
                    self.links.append(Link(LinkKind.PEER_LINK, Endpoint(leaf.name, mine.name),
                                           Endpoint(peer.name, theirs.name), mine.speed_gbps))
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

    def _uplinks(self, leaf: _SwitchDraft, ports: list[Port], spines: list[_SwitchDraft], per_spine: int) -> None:
        """Uplink i of a leaf (or spine) goes to the (i // per_spine)-th switch of the tier above."""
        for i, mine in enumerate(ports):
            upper = spines[i // per_spine]
            theirs = upper.allocator.next_port(mine.speed_gbps, f"downlink to {leaf.name}")
            self._connect(leaf, mine, upper, theirs)

    def _connect(self, lower: _SwitchDraft, mine: Port, upper: _SwitchDraft, theirs: Port) -> None:
        """A routed fabric link: BGP unnumbered where both ends support it, a /31 otherwise."""
        unnumbered = (
            self.intent.underlay.unnumbered == "auto"
            and lower.model.spec.bgp_unnumbered
            and upper.model.spec.bgp_unnumbered
        )
        lower_ip = upper_ip = None
        if not unnumbered:
            net = self.intent.underlay.p2p_subnet
            if 2 * self.p2p_next + 1 >= net.num_addresses:
                raise AllocationError("address-pool-too-small",
                                      f"underlay.p2p_subnet {net} ran out of /31s", "use a larger p2p_subnet")
            upper_addr, lower_addr = _address(net, 2 * self.p2p_next), _address(net, 2 * self.p2p_next + 1)
            self.p2p_next += 1
            upper_ip, lower_ip = f"{upper_addr}/31", f"{lower_addr}/31"
        lower.ports.append(SwitchPort(
            mine.name, mine.cage, PortRole.UPLINK, mine.speed_gbps, mine.lanes, mine.broken_out,
            Endpoint(upper.name, theirs.name), f"{upper.name} {theirs.name}", lower_ip, unnumbered,
        ))
        upper.ports.append(SwitchPort(
            theirs.name, theirs.cage, PortRole.DOWNLINK, theirs.speed_gbps, theirs.lanes, theirs.broken_out,
            Endpoint(lower.name, mine.name), f"{lower.name} {mine.name}", upper_ip, unnumbered,
        ))
        lower.neighbors.append(BgpNeighbor(
            upper.name, upper.asn, f"{upper.name} {theirs.name}", _GROUP[upper.role],
            interface=mine.name if unnumbered else None,
            address=upper_ip.split("/")[0] if upper_ip else None,
        ))
        upper.neighbors.append(BgpNeighbor(
            lower.name, lower.asn, f"{lower.name} {mine.name}", _GROUP[lower.role],
            interface=theirs.name if unnumbered else None,
            address=lower_ip.split("/")[0] if lower_ip else None,
        ))
        self.links.append(Link(LinkKind.FABRIC, Endpoint(lower.name, mine.name),
                               Endpoint(upper.name, theirs.name), mine.speed_gbps))

    def _hosts(self, pair: PairSpec, leaves: list[_SwitchDraft], ports: list[list[list[Port]]]) -> list[Host]:
        intent = self.intent
        p, names = pair.index, pair.host_names
        spec = leaves[0].model.spec
        bonds = intent.hosts.bonds
        vlans = {v.id: v for v in intent.vlans}
        slices = {v.id: _slice(v.subnet, v.pair_prefix_length, p) for v in intent.vlans}
        for side, leaf in enumerate(leaves):
            for vlan in sorted(vlans.values(), key=lambda v: v.id):
                net = slices[vlan.id]
                leaf.svis.append(Svi(
                    vlan.id, vlan.name, f"{_address(net, 2 + side)}/{net.prefixlen}",
                    str(_address(net, 1)), str(net),
                ))
                leaf.networks.append(str(net))
        if len(names) * len(bonds) >= PEER_LINK_LAG_NUMBER:
            raise AllocationError("ports-exhausted", f"{pair.name}: more than {PEER_LINK_LAG_NUMBER - 1} host LAGs")
        hosts = []
        for j, host in enumerate(names):
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
                    leaf.lags.append(Lag(
                        lag_name, number, PortRole.HOST, (port.name,), f"{host} {bond.name}",
                        access_vlan=bond.vlan, mlag_id=number, host=host, host_bond=bond.name,
                    ))
                    members.append(HostPort(netdev, leaf.name, port.name))
                    self.links.append(Link(LinkKind.HOST, Endpoint(leaf.name, port.name), Endpoint(host, netdev),
                                           port.speed_gbps))
                net = slices[bond.vlan]
                host_bonds.append(HostBond(
                    bond.name, (members[0], members[1]), bond.rdma_device, bond.speed_gbps, bond.vlan,
                    f"{_address(net, FIRST_HOST_OFFSET + j)}/{net.prefixlen}", str(_address(net, 1)),
                    (str(vlans[bond.vlan].subnet),),
                ))
            hosts.append(Host(host, pair.name, None, tuple(host_bonds)))
        return hosts

    # --- finishing ----------------------------------------------------------------------------------------

    def _finish(self, switches: list[_SwitchDraft], hosts: list[Host]) -> FabricPlan:
        if self.findings:
            raise PlanningError(self.findings)
        intent = self.intent
        racks = place([Placed(d.name, d.role, d.pod, d.pair) for d in switches],
                      [Placed(h.name, None, h.pod, h.pair) for h in hosts],
                      intent.racks.nodes_per_rack, intent.racks.switches_per_network_rack)
        return FabricPlan(
            source=self.source,
            qos=plan_qos(intent),
            vlans=tuple(Vlan(v.id, v.name, str(v.subnet)) for v in sorted(intent.vlans, key=lambda v: v.id)),
            switches=tuple(self._freeze(d, racks[d.name]) for d in switches),
            hosts=tuple(replace(h, rack=racks[h.name]) for h in hosts),
            links=tuple(self.links),
            host_profile=self._host_profile(),
        )

    def _freeze(self, d: _SwitchDraft, rack: str) -> Switch:
        spec = d.model.spec
        ports = tuple(sorted(d.ports, key=lambda sp: natural_key(sp.name)))
        vlans = tuple(sorted(v.id for v in self.intent.vlans)) if d.pair is not None else ()
        return Switch(
            name=d.name,
            role=d.role,
            model=d.model.name,
            platform=spec.key,
            release=spec.release,
            pair=d.pair,
            pod=d.pod,
            rail=d.rail,
            asn=d.asn,
            loopback_ipv4=f"{d.loopback}/32",
            mtu_bytes=min(self.intent.mtu.switch_bytes, spec.mtu_max_bytes),
            queue_keyword=d.model.queue_keyword,
            breakouts=tuple(sorted(d.allocator.breakouts, key=lambda b: b.cage)),
            ports=ports,
            lags=tuple(sorted(d.lags, key=lambda lag: lag.number)),
            vlans=vlans,
            svis=tuple(sorted(d.svis, key=lambda s: s.vlan)),
            bgp=Bgp(
                asn=d.asn,
                router_id=str(d.loopback),
                max_paths=self.intent.underlay.ecmp_max_paths,
                networks=tuple(sorted(set(d.networks), key=_prefix_order)),
                neighbors=tuple(d.neighbors),
                uses_unnumbered=any(n.interface for n in d.neighbors),
            ),
            mlag=d.mlag,
            management=d.management,
            rack=rack,
        )

    def _host_profile(self) -> HostProfile:
        h = self.intent.hosts
        qos = self.intent.qos
        env: dict[str, str] = {
            "NCCL_IB_HCA": "=" + ",".join(f"{d}:1" for d in [b.rdma_device for b in h.bonds]
                                          + [n.rdma_device for n in h.nics]),
            "NCCL_IB_TC": str((qos.roce.dscp << 2) | ECT0),
            "NCCL_SOCKET_IFNAME": h.nccl.socket_ifname,
            "NCCL_IB_QPS_PER_CONNECTION": str(h.nccl.qps_per_connection),
            "NCCL_IB_TIMEOUT": str(h.nccl.ib_timeout),
            "NCCL_IB_RETRY_CNT": str(h.nccl.ib_retry_cnt),
        }
        if h.nccl.gid_index is not None:
            env["NCCL_IB_GID_INDEX"] = str(h.nccl.gid_index)
        env.update(h.nccl.extra_env)
        return HostProfile(
            mtu_bytes=self.intent.mtu.host_bytes,
            rx_ring=h.ethtool.rx_ring,
            tx_ring=h.ethtool.tx_ring,
            nccl_env=tuple(sorted(env.items())),
        )


class _ExplicitPlanner(_PlannerBase):
    """Every leaf pair and spine as the intent lists them."""

    def build(self) -> FabricPlan:
        intent = self.intent
        topo = intent.topology
        assert isinstance(topo, Topology)
        spine_model = lookup_model(topo.spines.model)
        assert spine_model is not None, "check_intent reports unknown models before planning"
        spines = [self._draft(name, Role.SPINE, spine_model, intent.underlay.asn.spine)
                  for name in spine_names(intent)]
        try:
            self._check_spine_capacity(spine_model)
        except AllocationError as exc:
            self.fail(exc, ("topology", "leaf", "uplinks_per_spine"))
            raise PlanningError(self.findings) from None
        hosts_by_pair = host_names_by_pair(intent)
        leaves: list[_SwitchDraft] = []
        hosts: list[Host] = []
        for p, pair in enumerate(topo.leaf_pairs):
            model = lookup_model(pair.model)
            assert model is not None
            pair_leaves = [
                self._draft(leaf_name, Role.LEAF, model, intent.underlay.asn.leaf_first + 2 * p + side,
                            pair=pair.name)
                for side, leaf_name in enumerate(pair.leaf_names)
            ]
            leaves += pair_leaves
            try:
                hosts += self._plan_pair(self._pair_spec(p, pair, model, spine_model, hosts_by_pair[pair.name]),
                                         pair_leaves, spines)
            except AllocationError as exc:
                self.fail(exc, ("topology", "leaf_pairs", p))
        return self._finish([*spines, *leaves], hosts)

    def _pair_spec(self, p: int, pair: LeafPair, model: SwitchModel, spine: SwitchModel,
                   host_names: list[str]) -> PairSpec:
        topo = self.intent.topology
        assert isinstance(topo, Topology)
        defaults = topo.leaf
        return PairSpec(
            index=p,
            name=pair.name,
            model=model,
            multihoming=pair.multihoming or model.spec.multihoming[0],
            host_names=host_names,
            uplink_speed=defaults.uplink_speed_gbps or self._common_speed(model, spine),
            uplinks_per_spine=defaults.uplinks_per_spine,
            peer_speed=defaults.peer_link_speed_gbps or max(g.speed_gbps for g in model.cage_groups),
            peer_links=defaults.peer_link_links,
            overrides=pair.ports or defaults.ports,
            overrides_path=("topology", "leaf_pairs", p, "ports") if pair.ports else ("topology", "leaf", "ports"),
        )

    def _check_spine_capacity(self, spine: SwitchModel) -> None:
        """Every leaf connects to every spine, so each spine needs leaves x uplinks_per_spine downlinks,
        however many spines there are. Say so once, with what would fit, instead of failing leaf by leaf."""
        topo = self.intent.topology
        assert isinstance(topo, Topology)
        per_spine = topo.leaf.uplinks_per_spine
        demand: dict[int, int] = {}
        for pair in topo.leaf_pairs:
            leaf = lookup_model(pair.model)
            assert leaf is not None
            speed = topo.leaf.uplink_speed_gbps or self._common_speed(leaf, spine)
            demand[speed] = demand.get(speed, 0) + 2 * per_spine
        if len(demand) != 1:
            return  # mixed uplink speeds share cages; the port allocator judges those
        ((speed, needed),) = demand.items()
        capacity = spine.port_capacity(speed)
        if needed <= capacity:
            return
        if capacity == 0:
            raise AllocationError(
                "speed-unsupported",
                f"{spine.name} spines cannot run {speed}G ports",
                "speeds it offers: " + ", ".join(f"{s}G" for s in spine.speeds_gbps()),
                path=("topology", "leaf", "uplink_speed_gbps"),
            )
        leaves = 2 * len(topo.leaf_pairs)
        options = []
        if capacity >= leaves:
            fewer = capacity // leaves
            spines_needed = -(-topo.spines.count * per_spine // fewer)
            options.append(f"uplinks_per_spine {fewer} with {spines_needed} spines keeps the uplink bandwidth")
        options += [f"{s}G uplinks ({spine.port_capacity(s)} ports)" for s in spine.speeds_gbps()
                    if s < speed and spine.port_capacity(s) >= needed]
        options.append("a spine model with more ports, or a three-tier (super-spine) design")
        raise AllocationError(
            "spine-ports-exhausted",
            f"each spine needs {needed} x {speed}G downlinks ({leaves} leaves x {per_spine} uplinks per spine), "
            f"but a {spine.name} offers {capacity}",
            "what would fit: " + "; ".join(options),
        )



def _explicit(
    alloc: PortAllocator, speed: int, count: int, cages: tuple[int, ...], purpose: str, path: Path
) -> list[Port]:
    """Allocate from cages the intent lists, so errors point at that list."""
    try:
        return alloc.take(speed, count, cages, purpose, explicit=True)
    except AllocationError as exc:
        exc.path = path
        raise


def plan_fabric(intent: Intent, source: Source) -> FabricPlan:
    """Build the plan; raises `PlanningError` with findings when ports or addresses run out."""
    if isinstance(intent.topology, Clos):
        from rocefab.renderers.clos_planner import plan_clos

        return plan_clos(intent, source)
    return _ExplicitPlanner(intent, source).build()
