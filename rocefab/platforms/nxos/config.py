"""Cisco NX-OS (Nexus 9000): plan -> structured config (`structured.NxosConfig`) -> running-config text.

`build` makes every decision (qos-group numbering, the eight queues in the order NX-OS prints them, vPC
roles and keepalive path); the templates in templates/nxos/ print the result section by section.
"""

from __future__ import annotations

from dataclasses import fields

from rocefab.platforms.nxos import SPEC
from rocefab.platforms.nxos import structured as s
from rocefab.platforms.nxos.services import NxosServices, build_services
from rocefab.platforms.unit import UnitFile
from rocefab.renderers.common import DEFAULT_PRIORITY, dscps_by_priority, egress_queues
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import FabricPlan, PortRole, Switch
from rocefab.renderers.templating import header_lines, render

STRICT_QOS_GROUP = SPEC.strict_qos_group or 7

CLASSIFY_POLICY = "ROCE-CLASSIFY"
QUEUING_POLICY = "ROCE-EGRESS"
NETWORK_POLICY = "ROCE-NETWORK"
INGRESS_POLICY = "ROCE-INGRESS"
MGMT_VRF = "management"  # the VRF mgmt0 is a member of (templates/nxos/management-interface.j2)
ROLE_PRIORITY = {True: 100, False: 200}  # vPC primary (leaf a) wins with the lower value


def qos_group(priority: int, cnp_priority: int) -> int:
    """The qos-group (= egress queue) of a fabric priority on NX-OS: CNP's priority and 7 trade places,
    every other priority keeps its number. Qos-groups are internal to the switch; hosts never see them."""
    if priority == cnp_priority:
        return STRICT_QOS_GROUP
    if priority == STRICT_QOS_GROUP:
        return cnp_priority
    return priority


def _queue_name(queue: int) -> str:
    return "c-out-8q-q-default" if queue == DEFAULT_PRIORITY else f"c-out-8q-q{queue}"


def _qos(plan: FabricPlan, switch: Switch) -> s.Qos:
    q = plan.qos
    classes = []
    for prio, dscps in dscps_by_priority(q):
        if prio == q.roce_priority:
            name = "ROCE"
        elif prio == q.cnp_priority:
            name = "CNP"
        else:
            name = f"DSCP-PRIO-{prio}"
        classes.append(s.QosClass(name, ",".join(map(str, dscps)), qos_group(prio, q.cnp_priority)))
    scheduled = {qos_group(queue.id, q.cnp_priority): queue for queue in egress_queues(q, switch.ecn)}
    # The 8-queue template is listed in full; queues rocefab leaves unused get no bandwidth. The order
    # (q6 down to q1, default, then q7) is the one NX-OS prints.
    queues = []
    for queue_id in (6, 5, 4, 3, 2, 1, 0, 7):
        sq = scheduled.get(queue_id)
        ecn = sq.ecn if sq else None
        assert ecn is None or ecn.unit == "kbytes", "Cloud Scale profiles and the intent's are in kbytes"
        queues.append(s.QueuingClass(
            _queue_name(queue_id), bool(sq and sq.strict), sq.bandwidth_percent if sq else 0,
            s.Ecn(ecn.min_threshold, ecn.max_threshold, ecn.max_mark_percent) if ecn else None,
        ))
    # The checks keep lossless priorities off group 7, so their groups keep their numbers and match pfc-cos.
    network_classes = [s.NetworkQosClass(f"c-8q-nq{qos_group(prio, q.cnp_priority)}", switch.mtu_bytes, prio)
                       for prio in q.lossless_priorities]
    network_classes.append(s.NetworkQosClass("c-8q-nq-default", switch.mtu_bytes, None))
    return s.Qos(CLASSIFY_POLICY, QUEUING_POLICY, NETWORK_POLICY, tuple(classes), tuple(queues),
                 tuple(network_classes), INGRESS_POLICY, _pause_buffers(plan, switch))


def _pause_buffers(plan: FabricPlan, switch: Switch) -> tuple[s.PauseBuffer, ...]:
    """Cisco makes the pause buffer of the no-drop class mandatory for cables over 100 m (NX-OS 10.5 QoS guide,
    "Configuring Priority Flow Control"), and it sits in the input queuing policy. Cisco gives no formula for
    the thresholds; rocefab pauses once the queue holds as much as the headroom (Cisco's own examples pause at
    about 45 % of the buffer), keeps the headroom above it, and resumes two frames below the pause point."""
    need = switch.pfc_headroom  # the port that needs most: the class's buffer is system-wide
    if need is None or switch.longest_cable_m <= SPEC.headroom_rendered_above_m:
        return ()
    pause = need.bytes
    resume = max(pause - 2 * need.mtu_bytes, 0)
    q = plan.qos
    return tuple(s.PauseBuffer(f"c-in-q{qos_group(prio, q.cnp_priority)}", pause + need.bytes, pause, resume,
                               need.formula) for prio in q.lossless_priorities)


def _bfd_timers(switch: Switch) -> tuple[int, int, int] | None:
    b = switch.bgp.bfd
    timers = None if b is None else (b.interval_ms, b.min_rx_ms, b.multiplier)
    return None if timers == SPEC.bfd_default_timers else timers


def _trunk_vlans(switch: Switch) -> str:
    vlans = list(switch.vlans)
    if switch.mlag is not None:
        vlans.append(switch.mlag.peer_vlan)
    return ",".join(str(v) for v in sorted(vlans))


def _port_channels(switch: Switch) -> tuple[s.PortChannelInterface, ...]:
    rows = []
    for lag in switch.lags:
        peer_link = lag.role is PortRole.PEER_LINK
        rows.append(s.PortChannelInterface(
            name=lag.name, description=lag.description, access_vlan=lag.access_vlan,
            trunk_vlans=_trunk_vlans(switch) if peer_link else None, edge=lag.role is PortRole.HOST,
            peer_link=peer_link, mtu=switch.mtu_bytes, vpc=lag.mlag_id, classify_policy=CLASSIFY_POLICY,
        ))
    return tuple(rows)


def _ethernets(plan: FabricPlan, switch: Switch) -> tuple[s.EthernetInterface, ...]:
    lags = {lag.name: lag for lag in switch.lags}
    rows = []
    for port in switch.ports:
        lag = lags.get(port.lag) if port.lag else None
        bfd_port = switch.bgp.bfd is not None and (port.ipv4 is not None or port.unnumbered)  # a BGP session
        rows.append(s.EthernetInterface(
            name=port.name, description=port.description, routed=port.ipv4 is not None or port.unnumbered,
            # Members repeat their port-channel's switchport settings, as NX-OS keeps them in step.
            access_vlan=lag.access_vlan if lag else None,
            trunk_vlans=_trunk_vlans(switch) if lag and lag.role is PortRole.PEER_LINK else None,
            mtu=switch.port_mtu(port), channel_group=lag.number if lag else None, ipv4=port.ipv4,
            classify_policy=CLASSIFY_POLICY, pfc_watchdog=plan.qos.watchdog_enabled,
            bfd=bfd_port, bfd_timers=_bfd_timers(switch) if bfd_port else None,
        ))
    return tuple(sorted(rows, key=lambda r: natural_key(r.name)))


def _vpc(switch: Switch) -> s.VpcDomain | None:
    mlag = switch.mlag
    if mlag is None:
        return None
    out_of_band = mlag.keepalive_source is not None and mlag.keepalive_destination is not None
    return s.VpcDomain(
        domain_id=mlag.domain_id,
        role_priority=ROLE_PRIORITY[mlag.primary],
        keepalive_source=(mlag.keepalive_source if out_of_band else switch.loopback_ipv4.split("/")[0]) or "",
        keepalive_destination=(mlag.keepalive_destination if out_of_band else mlag.peer_loopback_ipv4) or "",
        keepalive_vrf="management" if out_of_band else "default",
    )


def _dlb(switch: Switch) -> s.Dlb | None:
    lb = switch.load_balancing
    if lb is None or lb.dynamic is None or lb.dlb_mac is None:
        return None
    return s.Dlb(lb.dynamic, tuple(sorted(lb.dynamic_ports, key=natural_key)), lb.dlb_mac)


def build(plan: FabricPlan, switch: Switch, target: str) -> s.NxosConfig:
    """Every decision about one NX-OS switch, as structured config."""
    mlag = switch.mlag
    vlan_rows = [(v.id, v.name) for v in plan.vlans if v.id in switch.vlans]
    if mlag is not None:
        vlan_rows.append((mlag.peer_vlan, "mlag-peer"))
    mgmt = switch.management
    return s.NxosConfig(
        header=tuple(header_lines(plan.source, target, switch.name)),
        hostname=switch.name,
        features=s.Features(vpc_pair=mlag is not None, bfd=switch.bgp.bfd is not None,
                            grpc=SPEC.gnmi_port is not None),
        load_sharing_rotate=switch.load_balancing.rotate if switch.load_balancing else None,
        dlb=_dlb(switch),
        breakouts=tuple(s.Breakout(b.cage, f"{b.child_speed_gbps}g-{b.factor}x") for b in switch.breakouts),
        qos=_qos(plan, switch),
        pfc_watchdog=plan.qos.watchdog_enabled,
        vlans=tuple(s.Vlan(i, name) for i, name in sorted(vlan_rows)),
        vrf_management=s.VrfManagement(mgmt.gateway) if mgmt else None,
        vpc_domain=_vpc(switch),
        vlan_interfaces=tuple(s.VlanInterface(svi.vlan, svi.name, switch.mtu_bytes, svi.ipv4, svi.virtual_ipv4)
                              for svi in switch.svis),
        port_channel_interfaces=_port_channels(switch),
        ethernet_interfaces=_ethernets(plan, switch),
        management_interface=s.ManagementInterface(mgmt.ipv4) if mgmt else None,
        loopback_interfaces=(s.LoopbackInterface(switch.loopback_ipv4),),
        router_bgp=s.RouterBgp(
            asn=switch.bgp.asn, router_id=switch.bgp.router_id, max_paths=switch.bgp.max_paths,
            networks=switch.bgp.networks,
            # The network statements stay as the aggregate's contributors (nothing else puts the host /31s in BGP).
            # `aggregate-address <prefix> summary-only` under address-family ipv4 unicast, as NX-OS's running config
            # shows it in the cisco.nxos nxos_bgp_address_family examples; Cisco's own guide was not stored.
            aggregates=switch.bgp.aggregates,
            neighbors=tuple(s.Neighbor(n.address or "", n.remote_asn, n.description, switch.bgp.bfd is not None)
                            for n in sorted(
                switch.bgp.neighbors, key=lambda n: tuple(int(o) for o in (n.address or "0.0.0.0").split(".")))),
        ),
    )


def render_config(config: s.NxosConfig, services: NxosServices | None = None, raw_lines: tuple[str, ...] = ()) -> str:
    return render("nxos/nxos.j2", **{f.name: getattr(config, f.name) for f in fields(config)}, services=services,
                  raw_lines=raw_lines)


def render_switch(plan: FabricPlan, switch: Switch, target: str) -> list[UnitFile]:
    site = plan.services
    services = build_services(site, MGMT_VRF if switch.management else None)
    raw_lines = site.raw(SPEC.key, switch.role.value) if site else ()
    return [UnitFile(".cfg", "nxos-config", render_config(build(plan, switch, target), services, raw_lines))]
