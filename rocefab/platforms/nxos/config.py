"""Cisco NX-OS (Nexus 9000): plan -> running-config text."""

from __future__ import annotations

from typing import Any

from rocefab.platforms.nxos import SPEC
from rocefab.platforms.unit import UnitFile
from rocefab.renderers.common import DEFAULT_PRIORITY, dscps_by_priority, egress_queues
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import FabricPlan, PortRole, Switch
from rocefab.renderers.templating import header_lines, render

STRICT_QOS_GROUP = SPEC.strict_qos_group or 7

CLASSIFY_POLICY = "ROCE-CLASSIFY"
QUEUING_POLICY = "ROCE-EGRESS"
NETWORK_POLICY = "ROCE-NETWORK"
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


def _qos(plan: FabricPlan, switch: Switch) -> dict[str, Any]:
    q = plan.qos
    classes = []
    for prio, dscps in dscps_by_priority(q):
        if prio == q.roce_priority:
            name = "ROCE"
        elif prio == q.cnp_priority:
            name = "CNP"
        else:
            name = f"DSCP-PRIO-{prio}"
        classes.append({"name": name, "dscps": ",".join(map(str, dscps)), "qos_group": qos_group(prio, q.cnp_priority)})
    scheduled = {qos_group(queue.id, q.cnp_priority): queue for queue in egress_queues(q)}
    # The 8-queue template is listed in full; queues rocefab leaves unused get no bandwidth. The order
    # (q6 down to q1, default, then q7) is the one NX-OS prints.
    queues = []
    for queue_id in (6, 5, 4, 3, 2, 1, 0, 7):
        s = scheduled.get(queue_id)
        queues.append({
            "name": _queue_name(queue_id),
            "strict": bool(s and s.strict),
            "bandwidth_percent": s.bandwidth_percent if s else 0,
            "ecn": s.ecn if s else None,
        })
    # The checks keep lossless priorities off group 7, so their groups keep their numbers and match pfc-cos.
    network_classes = [
        {"name": f"c-8q-nq{qos_group(prio, q.cnp_priority)}", "mtu": switch.mtu_bytes, "pause_cos": prio}
        for prio in q.lossless_priorities
    ]
    network_classes.append({"name": "c-8q-nq-default", "mtu": switch.mtu_bytes, "pause_cos": None})
    return {
        "classify_policy": CLASSIFY_POLICY,
        "queuing_policy": QUEUING_POLICY,
        "network_policy": NETWORK_POLICY,
        "classes": classes,
        "queues": queues,
        "network_classes": network_classes,
    }


def _trunk_vlans(switch: Switch) -> str:
    vlans = list(switch.vlans)
    if switch.mlag is not None:
        vlans.append(switch.mlag.peer_vlan)
    return ",".join(str(v) for v in sorted(vlans))


def _port_channels(switch: Switch) -> list[dict[str, Any]]:
    rows = []
    for lag in switch.lags:
        peer_link = lag.role is PortRole.PEER_LINK
        rows.append({
            "name": lag.name,
            "description": lag.description,
            "access_vlan": lag.access_vlan,
            "trunk_vlans": _trunk_vlans(switch) if peer_link else None,
            "edge": lag.role is PortRole.HOST,
            "peer_link": peer_link,
            "mtu": switch.mtu_bytes,
            "vpc": lag.mlag_id,
        })
    return rows


def _ethernets(switch: Switch) -> list[dict[str, Any]]:
    lags = {lag.name: lag for lag in switch.lags}
    rows = []
    for port in switch.ports:
        lag = lags.get(port.lag) if port.lag else None
        rows.append({
            "name": port.name,
            "description": port.description,
            "routed": port.ipv4 is not None or port.unnumbered,
            # Members repeat their port-channel's switchport settings, as NX-OS keeps them in step.
            "access_vlan": lag.access_vlan if lag else None,
            "trunk_vlans": _trunk_vlans(switch) if lag and lag.role is PortRole.PEER_LINK else None,
            "mtu": switch.mtu_bytes,
            "channel_group": lag.number if lag else None,
            "ipv4": port.ipv4,
        })
    return sorted(rows, key=lambda r: natural_key(r["name"]))


def render_switch(plan: FabricPlan, switch: Switch, target: str) -> list[UnitFile]:
    return [UnitFile(".cfg", "nxos-config", render_config(plan, switch, target))]


def render_config(plan: FabricPlan, switch: Switch, target: str) -> str:
    mlag = switch.mlag
    vpc = None
    if mlag is not None:
        out_of_band = mlag.keepalive_source is not None and mlag.keepalive_destination is not None
        vpc = {
            "domain_id": mlag.domain_id,
            "role_priority": ROLE_PRIORITY[mlag.primary],
            "keepalive_source": mlag.keepalive_source if out_of_band else switch.loopback_ipv4.split("/")[0],
            "keepalive_destination": mlag.keepalive_destination if out_of_band else mlag.peer_loopback_ipv4,
            "keepalive_vrf": "management" if out_of_band else "default",
        }
    vlan_rows = [(v.id, v.name) for v in plan.vlans if v.id in switch.vlans]
    if mlag is not None:
        vlan_rows.append((mlag.peer_vlan, "mlag-peer"))
    vlans = [{"id": i, "name": name} for i, name in sorted(vlan_rows)]
    return render(
        "nxos/nxos.j2",
        header=header_lines(plan.source, target, switch.name),
        hostname=switch.name,
        mlag_pair=switch.mlag is not None,
        breakouts=[{"cage": b.cage, "map": f"{b.child_speed_gbps}g-{b.factor}x"} for b in switch.breakouts],
        qos=_qos(plan, switch),
        pfc_watchdog=plan.qos.watchdog_enabled,
        vlans=vlans,
        mgmt=switch.management,
        vpc=vpc,
        svis=[
            {"vlan": s.vlan, "description": s.name, "mtu": switch.mtu_bytes, "ipv4": s.ipv4,
             "virtual_ipv4": s.virtual_ipv4}
            for s in switch.svis
        ],
        port_channels=_port_channels(switch),
        ethernets=_ethernets(switch),
        loopback=switch.loopback_ipv4,
        bgp={
            "asn": switch.bgp.asn,
            "router_id": switch.bgp.router_id,
            "max_paths": switch.bgp.max_paths,
            "networks": switch.bgp.networks,
            "neighbors": sorted(
                switch.bgp.neighbors, key=lambda n: tuple(int(o) for o in (n.address or "0.0.0.0").split("."))
            ),
        },
    )
