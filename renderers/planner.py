"""Plan a resolved fabric (`models.resolve`): every port, link, address, LAG, BGP session and host.

The steps live by job: `drafts` (switch drafts and the counters addresses follow), `links` (routed links
between tiers), `pairs` (ToR leaf pairs and their dual-homed servers), `rails` (rail-optimized servers).
This module runs them in order and freezes the result into a `FabricPlan`. Nothing here asks which shape
the intent had: the resolution already answered that.
"""

from __future__ import annotations

from dataclasses import replace

from rocefab.models.intent import Intent
from rocefab.models.resolve import ResolvedFabric
from rocefab.renderers.cable_lengths import Cables, End
from rocefab.renderers.common import adaptive_routing_port
from rocefab.renderers.drafts import PlanningError, PlanState, SwitchDraft
from rocefab.renderers.headroom import Headroom, headroom
from rocefab.renderers.links import uplinks
from rocefab.renderers.natural import natural_key, natural_order
from rocefab.renderers.pairs import plan_pair
from rocefab.renderers.placement import Placed, place
from rocefab.renderers.plan import (
    BfdTimers,
    Bgp,
    EcnMarking,
    FabricPlan,
    Host,
    HostProfile,
    LoadBalancing,
    Operations,
    PortRole,
    Qos,
    Role,
    Source,
    Switch,
    SwitchPort,
    Vlan,
)
from rocefab.renderers.ports import AllocationError
from rocefab.renderers.rails import rail_hosts, rail_pod
from rocefab.renderers.services import site_services

__all__ = ["PlanningError", "plan_fabric", "plan_qos"]

ECT0 = 0b10  # ECN-capable transport (0): what ConnectX sends with DCQCN enabled


def _prefix_order(prefix: str) -> tuple[int, int]:
    """Sort key of an "a.b.c.d/len" prefix, as IPv4Network orders them, without building one.

    >>> sorted(["10.0.0.10/31", "10.0.0.2/31", "10.0.0.2/32"], key=_prefix_order)
    ['10.0.0.2/31', '10.0.0.2/32', '10.0.0.10/31']
    """
    address, length = prefix.split("/")
    a, b, c, d = address.split(".")
    return (int(a) << 24 | int(b) << 16 | int(c) << 8 | int(d), int(length))


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
        ets_roce_percent=q.ets.roce_percent,
        ets_default_percent=q.ets.default_percent,
        watchdog_enabled=wd.enabled,
        watchdog_polling_interval_ms=wd.polling_interval_ms,
        watchdog_robustness=wd.robustness,
        watchdog_recovery_ms=wd.recovery_ms,
        measured_headroom_bytes=q.pfc.measured_headroom_bytes,
        roce_tos=(q.roce.dscp << 2) | ECT0,
    )


def plan_fabric(intent: Intent, fabric: ResolvedFabric, source: Source) -> FabricPlan:
    """Build the plan; raises `PlanningError` with findings when ports or addresses run out."""
    state = PlanState(intent, fabric, source)
    planes = [[state.draft(s) for s in plane] for plane in fabric.planes]
    pods = [[state.draft(s) for s in pod] for pod in fabric.pods]
    for leaf in fabric.leaves:
        state.draft(leaf)
    _place(state)
    hosts: list[Host] = []
    try:
        _check_spine_capacity(state, pods)
        if fabric.spine_uplinks is not None:
            # Spine k of every pod reaches super-spine plane k; those uplinks take the top cages first.
            up = fabric.spine_uplinks
            for row in pods:
                for k, spine in enumerate(row):
                    ports = spine.allocator.reserve_top(up.speed_gbps, up.count, "super-spine uplinks")
                    uplinks(state, spine, ports, planes[k], up.per_upper)
        if fabric.leaf_uplinks is not None:
            up = fabric.leaf_uplinks
            for slot in fabric.leaves:
                draft = state.drafts[slot.name]
                ports = draft.allocator.reserve_top(up.speed_gbps, up.count, "spine uplinks")
                uplinks(state, draft, ports, pods[slot.pod or 0], up.per_upper)
        if fabric.rails:
            hosts += rail_hosts(state)
    except AllocationError as exc:
        state.fail(exc, fabric.uplink_path)
        raise PlanningError(state.findings) from None
    for pair in fabric.pairs:
        try:
            hosts += plan_pair(state, pair, pods[pair.pod])
        except AllocationError as exc:
            state.fail(exc, pair.path)
    return _finish(state, hosts)


def _check_spine_capacity(state: PlanState, pods: list[list[SwitchDraft]]) -> None:
    """Every leaf pair connects to every spine of its pod, so each spine needs (its pod's leaves) x
    uplinks_per_spine downlinks, however many spines there are. Say so once, with what would fit, instead
    of failing leaf by leaf."""
    for p, spines in enumerate(pods):
        pairs = [pair for pair in state.fabric.pairs if pair.pod == p]
        if not pairs or not spines:
            continue
        spine = spines[0].model
        demand: dict[int, int] = {}
        for pair in pairs:
            demand[pair.uplink_speed_gbps] = demand.get(pair.uplink_speed_gbps, 0) + 2 * pair.uplinks_per_spine
        if len(demand) != 1:
            continue  # mixed uplink speeds share cages; the port allocator judges those
        ((speed, needed),) = demand.items()
        per_spine = pairs[0].uplinks_per_spine
        capacity = spine.port_capacity(speed)
        if needed <= capacity:
            continue
        if capacity == 0:
            raise AllocationError(
                "speed-unsupported",
                f"{spine.name} spines cannot run {speed}G ports",
                "speeds it offers: " + ", ".join(f"{s}G" for s in spine.speeds_gbps()),
                path=("topology", "leaf", "uplink_speed_gbps"),
            )
        leaves = 2 * len(pairs)
        options = []
        if capacity >= leaves:
            fewer = capacity // leaves
            spines_needed = -(-len(spines) * per_spine // fewer)
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


def _place(state: PlanState) -> None:
    """Every switch and server in its rack, before any link is made, so that each link is made with its cable's
    medium and length (and each host port with its cable's length) instead of being made again once placed.
    The servers are those the steps will make, in the order they make them: the rail groups', then the pairs'."""
    fabric, intent = state.fabric, state.intent
    servers = [Placed(slot.name, None, rail_pod(state, group.pod), None) for group in fabric.rails
               for slot in group.hosts]
    servers += [Placed(slot.name, None, None, pair.name) for pair in fabric.pairs for slot in pair.hosts]
    switches = [Placed(d.name, d.role, d.pod, d.pair) for d in state.drafts.values()]
    state.racks = place(switches, servers, intent.racks.nodes_per_rack, intent.racks.switches_per_network_rack)
    state.cables = Cables({p.name: End(state.racks[p.name], p.role, p.pod) for p in (*switches, *servers)},
                          intent.cabling)


def _finish(state: PlanState, hosts: list[Host]) -> FabricPlan:
    if state.findings:
        raise PlanningError(state.findings)
    intent = state.intent
    switches = list(state.drafts.values())
    assert state.cables is not None
    findings = state.cables.all_findings()
    if findings:
        raise PlanningError(findings)
    links = state.links
    racks = state.racks
    worst: dict[str, Headroom] = {}
    longest: dict[str, int] = {}
    measured = intent.qos.pfc.measured_headroom_bytes
    mtu = {d.name: min(intent.mtu.switch_bytes, d.model.spec.mtu_max_bytes) for d in switches}
    needs: dict[tuple[int, int, int], Headroom] = {}  # a few distinct (speed, length, MTU) among 500,000 ends
    # each end's (device, speed, length) once, in link order as before (a tie keeps the first): a switch has a few
    # distinct ones among its hundred ports
    ends = dict.fromkeys((device, link.speed_gbps, link.length_m) for link in links
                         for device in (link.a.device, link.b.device))
    for device, speed, length in ends:
        device_mtu = mtu.get(device)
        if device_mtu is not None:
            longest[device] = max(longest.get(device, 0), length)
            key = (speed, length, device_mtu)
            need = needs.get(key)
            if need is None:
                need = needs[key] = headroom(*key, measured)
            if device not in worst or (need.bytes, need.cable_m) > (worst[device].bytes, worst[device].cable_m):
                worst[device] = need
    names: dict[str, set[str]] = {}
    for d in switches:
        names.setdefault(d.model.name, set()).update([p.name for p in d.ports])
    orders = {model: natural_order(used) for model, used in names.items()}
    return FabricPlan(
        source=state.source,
        qos=plan_qos(intent),
        vlans=tuple(Vlan(v.id, v.name, str(v.subnet)) for v in sorted(intent.vlans, key=lambda v: v.id)),
        switches=tuple(_freeze(intent, d, racks[d.name], worst.get(d.name), longest.get(d.name, 0), mtu,
                               orders[d.model.name]) for d in switches),
        hosts=tuple(hosts),
        links=tuple(links),
        host_profile=_host_profile(intent),
        operations=Operations(**intent.monitoring.model_dump(), **intent.acceptance.model_dump()),
        services=site_services(intent.services),
    )


def _in_port_order(ports: list[SwitchPort], order: tuple[str, ...] | None) -> tuple[SwitchPort, ...]:
    """`ports` sorted by the natural order of their names: picked in `order` (every port name of the switch's
    model in the plan, natural_order's) when no name is taken twice, a lookup per name instead of a sort key
    made in Python per port (half a million at 98,304 GPUs, before any worker starts). A name taken twice, or
    names `order` could not order (None), take the sort, which keeps both for the plan's checks to report."""
    if order is not None:
        by_name = {p.name: p for p in ports}
        if len(by_name) == len(ports):
            return tuple([p for p in map(by_name.get, order) if p is not None])
    return tuple(sorted(ports, key=lambda sp: natural_key(sp.name)))


def _freeze(intent: Intent, d: SwitchDraft, rack: str, pfc_headroom: Headroom | None, longest_cable_m: int,
            mtu: dict[str, int], order: tuple[str, ...] | None) -> Switch:
    spec = d.model.spec
    own = mtu[d.name]
    # One IP MTU per routed link: the smaller end's (the other end would accept packets it cannot send back)
    ports = _in_port_order([p if p.role not in FABRIC_ROLES or mtu.get(p.peer.device, own) >= own else
                            replace(p, mtu_bytes=mtu[p.peer.device]) for p in d.ports], order)
    vlans = tuple(sorted(v.id for v in intent.vlans)) if d.pair is not None else ()
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
        mtu_bytes=own,
        queue_keyword=d.model.queue_keyword,
        breakouts=tuple(sorted(d.allocator.breakouts, key=lambda b: b.cage)),
        ports=ports,
        lags=tuple(sorted(d.lags, key=lambda lag: lag.number)),
        vlans=vlans,
        svis=tuple(sorted(d.svis, key=lambda s: s.vlan)),
        bgp=Bgp(
            asn=d.asn,
            router_id=str(d.loopback),
            max_paths=intent.underlay.ecmp_max_paths,
            networks=tuple(sorted(set(d.networks), key=_prefix_order)),
            neighbors=tuple(d.neighbors),
            uses_unnumbered=any(n.interface for n in d.neighbors),
            bfd=_bfd(intent),
            aggregates=tuple(sorted(d.aggregates, key=_prefix_order)),
        ),
        mlag=d.mlag,
        management=d.management,
        rack=rack,
        pfc_headroom=pfc_headroom,
        longest_cable_m=longest_cable_m,
        load_balancing=_load_balancing(intent, d),
        ecn=_ecn(intent, d),
    )

FABRIC_ROLES = (PortRole.UPLINK, PortRole.DOWNLINK)

FIVE_TUPLE = ("source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port")
# Hash rotations per tier, all different and none NX-OS's default 32 (range 1-63), so each tier picks other
# bits of the same hash.
TIER_ROTATE = {Role.LEAF: 13, Role.SPINE: 29, Role.SUPERSPINE: 43}


def _load_balancing(intent: Intent, d: SwitchDraft) -> LoadBalancing:
    """The switch's share of the intent's load balancing. The checks have refused what its ASIC cannot do, so
    what is asked is what runs (adaptive routing excepted: honoured where the ASIC has it, a warning elsewhere)."""
    lb = intent.underlay.load_balancing
    spec = d.model.spec
    capable = d.model.asic in spec.adaptive_routing_asics and any(adaptive_routing_port(p, spec) for p in d.ports)
    ecmp_hash, dynamic = lb.for_platform(d.model.platform)
    support = spec.load_balancing_of(d.model.asic)
    dynamic_on = dynamic != "none" and support is not None and dynamic in support.dynamic
    return LoadBalancing(
        FIVE_TUPLE, TIER_ROTATE[d.role] if lb.rotate_per_tier and spec.hash_rotation else None,
        lb.adaptive_routing and capable,
        lb.adaptive_routing,
        roce_qp_hash=ecmp_hash == "roce-qp" and support is not None and support.roce_qp_hash,
        dynamic=dynamic if dynamic_on else None,
        dynamic_ports=tuple(p.name for p in d.ports if p.role in FABRIC_ROLES and p.lag is None)
        if dynamic_on and spec.dlb_lists_ports else (),
        dlb_mac=lb.dlb_mac if dynamic_on and spec.dlb_mac else None,
        flow_set_size=lb.dlb_flow_set_size if dynamic_on and spec.dlb_flow_set_size else None,
        reload_sections=spec.dlb_reload_sections if dynamic_on else (),
    )


def _ecn(intent: Intent, d: SwitchDraft) -> EcnMarking:
    e = intent.qos.ecn
    if e is not None:
        return EcnMarking(e.min_threshold_kbytes, e.max_threshold_kbytes, "kbytes", e.max_mark_percent, "the intent")
    p = d.model.ecn_profile
    return EcnMarking(p.min_threshold, p.max_threshold, p.unit, p.max_mark_percent, p.source)


def _bfd(intent: Intent) -> BfdTimers | None:
    b = intent.underlay.bfd
    return BfdTimers(b.interval_ms, b.min_rx_ms, b.multiplier) if b.enabled else None


def exact_ifname(value: str) -> str:
    """NCCL_SOCKET_IFNAME matches names as prefixes (eno3 would also take eno30); '=' makes it exact.
    An exclusion list ('^...') is the user's own NCCL expression and is kept as written."""
    return value if value.startswith(("=", "^")) else "=" + value


def _host_profile(intent: Intent) -> HostProfile:
    h = intent.hosts
    qos = intent.qos
    env: dict[str, str] = {
        "NCCL_IB_HCA": "=" + ",".join(f"{d}:1" for d in [b.rdma_device for b in h.bonds]
                                      + [n.rdma_device for n in h.nics]),
        "NCCL_IB_TC": str((qos.roce.dscp << 2) | ECT0),
        "NCCL_SOCKET_IFNAME": exact_ifname(h.nccl.socket_ifname),
        "NCCL_IB_QPS_PER_CONNECTION": str(h.nccl.qps_per_connection),
        "NCCL_IB_TIMEOUT": str(h.nccl.ib_timeout),
        "NCCL_IB_RETRY_CNT": str(h.nccl.ib_retry_cnt),
    }
    if h.nccl.gid_index is not None:
        env["NCCL_IB_GID_INDEX"] = str(h.nccl.gid_index)
    env.update(h.nccl.extra_env)
    return HostProfile(
        mtu_bytes=intent.mtu.host_bytes,
        rx_ring=h.ethtool.rx_ring,
        tx_ring=h.ethtool.tx_ring,
        nccl_env=tuple(sorted(env.items())),
    )


