"""Arista EOS: plan -> structured config (`structured.EosConfig`) -> running-config text.

`build` makes every decision (what EOS needs that the plan does not say: its DSCP map, its queue keyword, the
VARP MAC, reload delays); the templates in templates/eos/ print the result section by section.
"""

from __future__ import annotations

from dataclasses import fields

from rocefab.platforms.eos import SPEC
from rocefab.platforms.eos import structured as s
from rocefab.platforms.eos.services import EosServices, build_services
from rocefab.platforms.unit import UnitFile
from rocefab.renderers.common import egress_queues, seconds, unused_children
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import FabricPlan, PortRole, Qos, Switch
from rocefab.renderers.templating import header_lines, render

QOS_PROFILE = "ROCE-LOSSLESS"
MGMT_VRF = "MGMT"
GNMI_TRANSPORT = "GNMI"  # the name is the operator's choice; EOS gives it no meaning
MLAG_TRUNK_GROUP = "MLAG"
VARP_MAC = "00:1c:73:00:00:01"  # shared virtual-router MAC of every leaf pair's anycast gateway


def _speed(speed_gbps: int, lanes: int) -> str:
    return f"{speed_gbps}g-{lanes}"


DSCPS_PER_LINE = 8  # as EOS prints its map; the longest list any source shows on one line


def _dscp_maps(q: Qos) -> tuple[s.DscpMap, ...]:
    """`qos map dscp` lines for all 64 DSCPs, grouped by class, eight to a line: the switch's map is the fabric's
    whatever the release's built-in map is (no source gives the whole built-in table; see SPEC)."""
    by_class: dict[int, list[int]] = {}
    for dscp in range(64):
        by_class.setdefault(q.dscp_classes[dscp], []).append(dscp)
    return tuple(s.DscpMap(" ".join(map(str, dscps[i:i + DSCPS_PER_LINE])), tc)
                 for tc, dscps in sorted(by_class.items()) for i in range(0, len(dscps), DSCPS_PER_LINE))


def _qos_profile(plan: FabricPlan, switch: Switch) -> s.QosProfile:
    q = plan.qos
    queues = tuple(
        s.TxQueue(queue.id, queue.strict, queue.bandwidth_percent,
                  s.Ecn(queue.ecn.unit, queue.ecn.min_threshold, queue.ecn.max_threshold, queue.ecn.max_mark_percent)
                  if queue.ecn else None)
        for queue in egress_queues(q, switch.ecn)
    )
    return s.QosProfile(QOS_PROFILE, q.lossless_priorities, q.watchdog_enabled, switch.queue_keyword or "tx-queue",
                        queues)


def _qos(plan: FabricPlan) -> s.Qos:
    q = plan.qos
    watchdog = None
    if q.watchdog_enabled:
        watchdog = s.PfcWatchdogDefaults(
            timeout_s=seconds(q.watchdog_polling_interval_ms * q.watchdog_robustness),
            recovery_s=seconds(q.watchdog_recovery_ms),
            polling_s=seconds(q.watchdog_polling_interval_ms),
        )
    return s.Qos(_dscp_maps(q), watchdog)


def _ethernets(switch: Switch) -> tuple[s.EthernetInterface, ...]:
    lags = {lag.name: lag.number for lag in switch.lags}
    rows = []
    for port in switch.ports:
        routed = port.ipv4 is not None or port.unnumbered
        rows.append(s.EthernetInterface(
            name=port.name, description=port.description, shutdown=False,
            mtu=switch.port_mtu(port) if routed else None,
            speed=_speed(port.speed_gbps, port.lanes) if port.broken_out else None,
            channel_group=lags[port.lag] if port.lag else None, routed=routed, ipv4=port.ipv4,
            ipv6_enable=port.unnumbered, service_profile=QOS_PROFILE,
        ))
    for name, speed, lanes in unused_children(switch):
        rows.append(s.EthernetInterface(
            name=name, description="unused breakout lane", shutdown=True, mtu=None, speed=_speed(speed, lanes),
            channel_group=None, routed=False, ipv4=None, ipv6_enable=False, service_profile=None,
        ))
    return tuple(sorted(rows, key=lambda r: natural_key(r.name)))


def _port_channels(switch: Switch) -> tuple[s.PortChannelInterface, ...]:
    return tuple(
        s.PortChannelInterface(
            name=lag.name, description=lag.description, access_vlan=lag.access_vlan,
            trunk_group=MLAG_TRUNK_GROUP if lag.role is PortRole.PEER_LINK else None,
            mlag=lag.mlag_id, edge=lag.role is PortRole.HOST,
        )
        for lag in switch.lags
    )


def _router_bgp(switch: Switch) -> s.RouterBgp:
    numbered = sorted(
        (n for n in switch.bgp.neighbors if n.address),
        key=lambda n: tuple(int(o) for o in n.address.split(".")),  # type: ignore[union-attr]
    )
    unnumbered = sorted((n for n in switch.bgp.neighbors if n.interface), key=lambda n: natural_key(n.interface or ""))
    return s.RouterBgp(
        asn=switch.bgp.asn,
        router_id=switch.bgp.router_id,
        max_paths=switch.bgp.max_paths,
        groups=tuple(sorted({n.group for n in switch.bgp.neighbors})),
        numbered=tuple(s.NumberedNeighbor(n.address or "", n.group, n.remote_asn, n.description) for n in numbered),
        unnumbered=tuple(s.InterfaceNeighbor(n.interface or "", n.group, n.remote_asn) for n in unnumbered),
        ipv6_next_hop_groups=tuple(sorted({n.group for n in unnumbered})),
        networks=switch.bgp.networks,
        # The host /31 network statements stay: they put the contributors in BGP, without which an aggregate is
        # never originated; summary-only keeps them from the peers. `aggregate-address <prefix> summary-only` sits at
        # router bgp level, after the neighbours (AVD eos_cli_config_gen router-bgp.j2; arista.eos.eos_bgp_global
        # aggregate_address); Arista's own manual page was not among the stored docs.
        aggregates=switch.bgp.aggregates,
        bfd_groups=tuple(sorted({n.group for n in switch.bgp.neighbors})) if switch.bgp.bfd else (),
    )


def _router_bfd(switch: Switch) -> s.RouterBfd | None:
    b = switch.bgp.bfd
    if b is None or (b.interval_ms, b.min_rx_ms, b.multiplier) == SPEC.bfd_default_timers:
        return None
    return s.RouterBfd(b.interval_ms, b.min_rx_ms, b.multiplier)


# The RoCE destination queue pair: bytes 5-7 of the BTH, which follows the 8-byte UDP header, so outer L4 bytes 13-15.
ROCE_QP_UDF_OFFSETS = (13, 14, 15)


def _load_balance(switch: Switch) -> s.LoadBalance | None:
    lb = switch.load_balancing
    if lb is None or not (lb.roce_qp_hash or lb.dynamic):
        return None
    return s.LoadBalance(ROCE_QP_UDF_OFFSETS if lb.roce_qp_hash else (), lb.dynamic is not None,
                         lb.flow_set_size if lb.dynamic else None)


def build(plan: FabricPlan, switch: Switch, target: str) -> s.EosConfig:
    """Every decision about one EOS switch, as structured config."""
    mlag = switch.mlag
    mgmt = switch.management
    vlan_rows: list[tuple[int, str, str | None]] = [(v.id, v.name, None) for v in plan.vlans if v.id in switch.vlans]
    if mlag is not None:
        vlan_rows.append((mlag.peer_vlan, "mlag-peer", MLAG_TRUNK_GROUP))
    mlag_configuration = None
    if mlag is not None:
        mlag_configuration = s.MlagConfiguration(
            domain_id=mlag.domain_name, peer_vlan=mlag.peer_vlan, peer_address=mlag.peer_ipv4,
            heartbeat=mlag.keepalive_destination, heartbeat_vrf=MGMT_VRF if mgmt else None,
            peer_link=mlag.peer_link, reload_delay_mlag_s=SPEC.mlag_reload_delay_s or 0,
            reload_delay_non_mlag_s=SPEC.non_mlag_reload_delay_s or 0,
        )
    return s.EosConfig(
        header=tuple(header_lines(plan.source, target, switch.name)),
        management_api=s.ManagementApi(MGMT_VRF if mgmt else None),
        # gNMI answers where eAPI does: in the management VRF when the intent gives one, else the default VRF.
        management_api_gnmi=s.ManagementApiGnmi(GNMI_TRANSPORT, MGMT_VRF if mgmt else None)
        if SPEC.gnmi_port is not None else None,
        hostname=switch.name,
        qos_profiles=(_qos_profile(plan, switch),),
        spanning_tree=s.SpanningTree(mlag.peer_vlan) if mlag else None,
        load_balance=_load_balance(switch),
        vlans=tuple(s.Vlan(i, name, group) for i, name, group in sorted(vlan_rows)),
        vrfs=(MGMT_VRF,) if mgmt else (),
        port_channel_interfaces=_port_channels(switch),
        ethernet_interfaces=_ethernets(switch),
        loopback_interfaces=(s.LoopbackInterface(switch.loopback_ipv4),),
        management_interfaces=(s.ManagementInterface(mgmt.interface, MGMT_VRF, mgmt.ipv4),) if mgmt else (),
        vlan_interfaces=tuple(
            s.VlanInterface(svi.vlan, svi.name, switch.mtu_bytes, svi.peer_link, svi.ipv4, svi.virtual_ipv4)
            for svi in switch.svis
        ),
        ip_virtual_router_mac=VARP_MAC if any(svi.virtual_ipv4 for svi in switch.svis) else None,
        ip_routing=s.IpRouting(switch.bgp.uses_unnumbered, MGMT_VRF if mgmt else None),
        mlag_configuration=mlag_configuration,
        static_routes=(s.StaticRoute(MGMT_VRF, "0.0.0.0/0", mgmt.gateway),) if mgmt else (),
        qos=_qos(plan),
        router_bfd=_router_bfd(switch),
        router_bgp=_router_bgp(switch),
    )


def render_config(config: s.EosConfig, services: EosServices | None = None, raw_lines: tuple[str, ...] = ()) -> str:
    return render("eos/eos.j2", **{f.name: getattr(config, f.name) for f in fields(config)}, services=services,
                  raw_lines=raw_lines)


def render_switch(plan: FabricPlan, switch: Switch, target: str) -> list[UnitFile]:
    site = plan.services
    services = build_services(site, MGMT_VRF if switch.management else None)
    raw_lines = site.raw(SPEC.key, switch.role.value) if site else ()
    return [UnitFile(".cfg", "eos-config", render_config(build(plan, switch, target), services, raw_lines))]
