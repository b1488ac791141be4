"""Arista EOS: plan -> running-config text."""

from __future__ import annotations

from typing import Any

from rocefab.platforms.unit import UnitFile
from rocefab.renderers.common import egress_queues, seconds, unused_children
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import FabricPlan, PortRole, Qos, Switch
from rocefab.renderers.templating import header_lines, render

QOS_PROFILE = "ROCE-LOSSLESS"
MGMT_VRF = "MGMT"
MLAG_TRUNK_GROUP = "MLAG"
VARP_MAC = "00:1c:73:00:00:01"  # shared virtual-router MAC of every leaf pair's anycast gateway


def _speed(speed_gbps: int, lanes: int) -> str:
    return f"{speed_gbps}g-{lanes}"


# EOS's built-in DSCP -> traffic-class map swaps the two lowest classes: DSCP 0-7 (unmarked traffic) go to
# class 1 and DSCP 8-15 to class 0, where hosts and the other platforms use priority DSCP >> 3. rocefab
# schedules the default class as queue 0, so both blocks are mapped explicitly; DSCPs the intent maps keep
# their own class. The reference confirms only CS3 -> TC3 of that default map; the full table comes from a
# secondary source (an EOS RoCE configuration write-up), and mapping explicitly is right either way.
_SWAPPED_DEFAULT_BLOCKS = ((range(8), 0), (range(8, 16), 1))


def _dscp_maps(q: Qos) -> list[dict[str, Any]]:
    explicit = dict(q.dscp_to_priority)
    by_class: dict[int, list[int]] = {}
    for block, traffic_class in _SWAPPED_DEFAULT_BLOCKS:
        by_class.setdefault(traffic_class, []).extend(d for d in block if d not in explicit)
    for dscp, prio in explicit.items():
        by_class.setdefault(prio, []).append(dscp)
    return [{"dscps": " ".join(map(str, sorted(dscps))), "traffic_class": tc}
            for tc, dscps in sorted(by_class.items()) if dscps]


def _qos(plan: FabricPlan, switch: Switch) -> dict[str, Any]:
    q = plan.qos
    watchdog = None
    if q.watchdog_enabled:
        watchdog = {
            "timeout_s": seconds(q.watchdog_polling_interval_ms * q.watchdog_robustness),
            "polling_s": seconds(q.watchdog_polling_interval_ms),
            "recovery_s": seconds(q.watchdog_recovery_ms),
        }
    return {
        "profile": QOS_PROFILE,
        "pfc_priorities": q.lossless_priorities,
        "watchdog": watchdog,
        "queue_keyword": switch.queue_keyword or "tx-queue",
        "queues": egress_queues(q),
        "dscp_maps": _dscp_maps(q),
    }


def _ethernets(switch: Switch) -> list[dict[str, Any]]:
    lags = {lag.name: lag.number for lag in switch.lags}
    rows = []
    for port in switch.ports:
        routed = port.ipv4 is not None or port.unnumbered
        rows.append({
            "name": port.name,
            "description": port.description,
            "shutdown": False,
            "mtu": switch.mtu_bytes if routed else None,
            "speed": _speed(port.speed_gbps, port.lanes) if port.broken_out else None,
            "channel_group": lags[port.lag] if port.lag else None,
            "routed": routed,
            "ipv4": port.ipv4,
            "ipv6_enable": port.unnumbered,
            "service_profile": QOS_PROFILE,
        })
    for name, speed, lanes in unused_children(switch):
        rows.append({
            "name": name, "description": "unused breakout lane", "shutdown": True, "mtu": None,
            "speed": _speed(speed, lanes), "channel_group": None, "routed": False, "ipv4": None,
            "ipv6_enable": False, "service_profile": None,
        })
    return sorted(rows, key=lambda r: natural_key(r["name"]))


def _port_channels(switch: Switch) -> list[dict[str, Any]]:
    return [
        {
            "name": lag.name,
            "description": lag.description,
            "access_vlan": lag.access_vlan,
            "trunk_group": MLAG_TRUNK_GROUP if lag.role is PortRole.PEER_LINK else None,
            "mlag": lag.mlag_id,
            "edge": lag.role is PortRole.HOST,
        }
        for lag in switch.lags
    ]


def _bgp(switch: Switch) -> dict[str, Any]:
    numbered = sorted(
        (n for n in switch.bgp.neighbors if n.address),
        key=lambda n: tuple(int(o) for o in n.address.split(".")),  # type: ignore[union-attr]
    )
    unnumbered = sorted((n for n in switch.bgp.neighbors if n.interface), key=lambda n: natural_key(n.interface or ""))
    return {
        "asn": switch.bgp.asn,
        "router_id": switch.bgp.router_id,
        "max_paths": switch.bgp.max_paths,
        "groups": sorted({n.group for n in switch.bgp.neighbors}),
        "numbered": numbered,
        "unnumbered": unnumbered,
        "ipv6_next_hop_groups": sorted({n.group for n in unnumbered}),
        "networks": switch.bgp.networks,
    }


def render_switch(plan: FabricPlan, switch: Switch, target: str) -> list[UnitFile]:
    return [UnitFile(".cfg", "eos-config", render_config(plan, switch, target))]


def render_config(plan: FabricPlan, switch: Switch, target: str) -> str:
    mlag = switch.mlag
    mgmt = None
    if switch.management is not None:
        mgmt = {"vrf": MGMT_VRF, **{k: getattr(switch.management, k) for k in ("interface", "ipv4", "gateway")}}
    vlan_rows: list[tuple[int, str, str | None]] = [(v.id, v.name, None) for v in plan.vlans if v.id in switch.vlans]
    if mlag is not None:
        vlan_rows.append((mlag.peer_vlan, "mlag-peer", MLAG_TRUNK_GROUP))
    vlans = [{"id": i, "name": name, "trunk_group": group} for i, name, group in sorted(vlan_rows)]
    svis = [
        {
            "vlan": svi.vlan,
            "description": svi.name,
            "mtu": switch.mtu_bytes,
            "no_autostate": svi.peer_link,
            "ipv4": svi.ipv4,
            "virtual_ipv4": svi.virtual_ipv4,
        }
        for svi in switch.svis
    ]
    return render(
        "eos/eos.j2",
        header=header_lines(plan.source, target, switch.name),
        hostname=switch.name,
        mgmt=mgmt,
        qos=_qos(plan, switch),
        spanning_tree={"disabled_vlans": mlag.peer_vlan} if mlag else None,
        vlans=vlans,
        port_channels=_port_channels(switch),
        ethernets=_ethernets(switch),
        loopback=switch.loopback_ipv4,
        svis=svis,
        varp_mac=VARP_MAC if any(s.virtual_ipv4 for s in switch.svis) else None,
        routing={"ipv6_interfaces": switch.bgp.uses_unnumbered},
        mlag={
            "domain_id": mlag.domain_name,
            "peer_vlan": mlag.peer_vlan,
            "peer_address": mlag.peer_ipv4,
            "heartbeat": mlag.keepalive_destination,
            "peer_link": mlag.peer_link,
        } if mlag else None,
        bgp=_bgp(switch),
    )
