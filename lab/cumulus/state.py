"""What an emulated Cumulus switch reports beyond its applied config: interface state and LLDP (`nv show
interface -o json`), and BGP sessions (`nv show vrf default router bgp neighbor -o json`).

Derived at the moment of asking from the applied revision and the lab's wiring (lab/wiring.py), like the EOS
emulator's (lab/eos/state.py). Shapes: NVUE's interface summary carries per interface its `type`, `link` (`state`,
`speed` as "400G", `mtu`) and the LLDP neighbour the summary table prints as Remote Host / Remote Port (kept under
`lldp.neighbor.<system name>.port.name`; the exact JSON nesting of those two columns is the lab's, see the note in
rocefab/platforms/cumulus/observe.py). BGP neighbours are keyed as configured (the interface for an unnumbered
session), each with `remote-as`, `type` and its session `state` ("established", "active", ...).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rocefab.lab import routing
from rocefab.lab.wiring import GRACEFUL_SHUTDOWN, BgpPeerConfig, BgpSpeaker

if TYPE_CHECKING:
    from rocefab.lab.cumulus.nvue import CumulusDevice

Tree = dict[str, Any]
DEFAULT_MTU = 9216  # Cumulus Linux's default MTU on a switch port


def _interfaces(dev: CumulusDevice) -> Tree:
    found = dev.applied.get("interface", {})
    return found if isinstance(found, dict) else {}


def port_enabled(dev: CumulusDevice, port: str) -> bool:
    state = _interfaces(dev).get(port, {}).get("link", {}).get("state", {})
    return "down" not in (state if isinstance(state, dict) else {str(state): {}})


def show_interface(dev: CumulusDevice) -> Tree:
    wiring = dev.wiring
    names = set(_interfaces(dev))
    if wiring is not None:
        names |= {port for (device, port) in wiring.far if device == dev.name}
    out: Tree = {}
    for name in sorted(names):
        conf = _interfaces(dev).get(name, {})
        kind = conf.get("type") or ("swp" if name.startswith("swp") else "loopback" if name == "lo" else "bond")
        link = conf.get("link", {}) if isinstance(conf.get("link"), dict) else {}
        entry: Tree = {"type": kind, "link": {"mtu": int(link.get("mtu", DEFAULT_MTU if kind == "swp" else 65536))}}
        if kind == "swp":
            far = wiring.peer(dev.name, name) if wiring is not None else None
            up = wiring.up(dev.name, name) if wiring is not None else port_enabled(dev, name)
            entry["link"]["state"] = "up" if up else "down"
            speed = wiring.speed_gbps(dev.name, name) if wiring is not None and up else None
            if speed:
                entry["link"]["speed"] = f"{speed}G"
            if far is not None and up:
                entry["lldp"] = {"neighbor": {far[0]: {"port": {"name": far[1]}}}}
        else:
            entry["link"]["state"] = "up"
        out[name] = entry
    return out


def _asn(value: object) -> int:
    return int(str(value)) if str(value).isdigit() else 0


def bgp_speaker(dev: CumulusDevice) -> BgpSpeaker | None:
    bgp = dev.applied.get("vrf", {}).get("default", {}).get("router", {}).get("bgp", {})
    top = dev.applied.get("router", {}).get("bgp", {})
    if not bgp or str(top.get("enable", "on")) == "off":
        return None
    asn = _asn(bgp.get("autonomous-system", top.get("autonomous-system")))
    peers = []
    for key, conf in (bgp.get("neighbor") or {}).items():
        conf = conf if isinstance(conf, dict) else {}
        remote = conf.get("remote-as")
        unnumbered = conf.get("type") == "unnumbered"
        # "external" accepts any AS but our own; the lab compares with the far end's AS itself
        peers.append(BgpPeerConfig(key, _asn(remote) if remote != "external" else -1,
                                   key if unnumbered else None, None if unnumbered else key))
    addresses = {}
    for name, conf in _interfaces(dev).items():
        for cidr in ((conf.get("ip") or {}).get("address") or {}):
            addresses[str(cidr).split("/")[0]] = name
    ipv4 = (bgp.get("address-family") or {}).get("ipv4-unicast") or {}
    networks = tuple(str(n) for n in ipv4.get("network") or {})
    aggregates = tuple((str(a), str((conf or {}).get("summary-only", "off")) == "on")
                       for a, conf in (ipv4.get("aggregate-route") or {}).items())
    # Cumulus 5.14, Maintenance Mode: the all-protocols unit drains BGP with the graceful-shutdown community
    unit = ((dev.applied.get("maintenance") or {}).get("unit") or {}).get("all-protocols") or {}
    maintenance = GRACEFUL_SHUTDOWN if str(unit.get("mode", "disabled")) == "enabled" else None
    return BgpSpeaker(asn, str(bgp.get("router-id", top.get("router-id", "0.0.0.0"))), tuple(peers), addresses,
                      networks, aggregates, maintenance)


def ip_route(dev: CumulusDevice, prefix: str) -> Tree:
    """FRR's `show ip route PREFIX json` (vtysh): the prefix -> a list of route entries, the selected one with
    `protocol`, `selected`, `installed` and its `nexthops` (`ip`, `afi`, `interfaceName`, `active`, `fib`); an
    unnumbered session's next hop is the peer's IPv6 link-local address. No route: `{}`. Next hops from the lab's
    BGP (lab/routing.py)."""
    hops = routing.next_hops(dev.wiring, dev.name, prefix)
    if hops == []:
        return {}
    if hops is None:
        nexthops: list[Tree] = [{"fib": True, "directlyConnected": True, "interfaceName": "lo", "active": True}]
        protocol, distance = "connected", 0
    else:
        nexthops = [{"fib": True, "ip": h.next_hop, "afi": "ipv6" if ":" in h.next_hop else "ipv4",
                     "interfaceName": h.interface, "active": True, "weight": 1} for h in hops]
        protocol, distance = "bgp", 20
    return {prefix: [{"prefix": prefix, "prefixLen": int(prefix.split("/")[1]), "protocol": protocol,
                      "vrfName": "default", "selected": True, "destSelected": True, "distance": distance,
                      "metric": 0, "installed": True, "table": 254, "internalNextHopNum": len(nexthops),
                      "internalNextHopActiveNum": len(nexthops), "nexthops": nexthops}]}


def bgp_neighbors(dev: CumulusDevice) -> Tree:
    """`nv show vrf default router bgp neighbor -o json`: each neighbour with its remote AS, type and state."""
    speaker = bgp_speaker(dev)
    if speaker is None:
        return {}
    wiring = dev.wiring
    out: Tree = {}
    for peer in speaker.peers:
        up = wiring.session_up(dev.name, peer)[0] if wiring is not None else False
        out[peer.key] = {"remote-as": peer.remote_asn if peer.remote_asn >= 0 else "external",
                         "type": "unnumbered" if peer.interface else "numbered",
                         "state": "established" if up else "active"}
    return out


def _bond_members(dev: CumulusDevice, bond: str) -> list[str]:
    return list((_interfaces(dev).get(bond, {}).get("bond") or {}).get("member") or {})


def logical_peer(dev: CumulusDevice, interface: str) -> tuple[str, str] | None:
    """The far end of an interface carried over a bond (`peerlink.4094` over `peerlink`): the same interface on the
    switch at the other end of the bond's live members, if that switch has it."""
    wiring = dev.wiring
    conf = _interfaces(dev).get(interface, {})
    base = conf.get("base-interface") if conf.get("type") == "sub" else interface
    if wiring is None or not base:
        return None
    for member in _bond_members(dev, str(base)):
        far = wiring.peer(dev.name, member)
        if far is not None and wiring.up(dev.name, member):
            other = wiring.devices.get(far[0])
            if other is not None and interface in getattr(other, "applied", {}).get("interface", {}):
                return far[0], interface
    return None


def show_mlag(dev: CumulusDevice) -> Tree:
    """`nv show mlag -o json`: whether the peer answers over the peer link, and the roles."""
    mlag = dev.applied.get("mlag", {})
    if not isinstance(mlag, dict) or str(mlag.get("enable", "off")) != "on":
        return {"enable": "off"}
    peer = logical_peer(dev, "peerlink.4094") or logical_peer(dev, "peerlink")
    partner = dev.wiring.devices.get(peer[0]) if peer and dev.wiring else None
    theirs = getattr(partner, "applied", {}).get("mlag", {}) if partner is not None else {}
    alive = partner is not None and str(theirs.get("enable", "off")) == "on" \
        and theirs.get("mac-address") == mlag.get("mac-address")
    mine, other = int(mlag.get("priority", 32768)), int(theirs.get("priority", 32768)) if alive else 0
    return {"enable": "on", "peer-alive": alive, "backup-active": alive,
            "local-role": "primary" if not alive or mine <= other else "secondary",
            "peer-role": ("secondary" if mine <= other else "primary") if alive else "",
            "peer-interface": "peerlink.4094", "mac-address": mlag.get("mac-address", "")}


# -- faults a person makes with `nv set` (applied at once, as `nv config apply` would) ------------------------------
def set_mtu(dev: CumulusDevice, port: str, mtu: int) -> None:
    if port not in _interfaces(dev):
        raise ValueError(f"{dev.hostname} has no interface {port}")
    dev.applied["interface"][port].setdefault("link", {})["mtu"] = mtu


def pfc_off(dev: CumulusDevice, port: str, priority: int) -> str:
    """NVUE's PFC is one profile for every port: the RoCE priority leaves it, on all ports at once."""
    pfc = dev.applied.get("qos", {}).get("pfc", {})
    found = False
    for profile in pfc.values():
        found = profile.get("switch-priority", {}).pop(str(priority), None) is not None or found
    if not found:
        raise ValueError(f"{dev.hostname} has no PFC on priority {priority} to remove")
    return f"PFC off for priority {priority} in every PFC profile (NVUE has no per-port PFC here; {port} included)"


def set_dscp(dev: CumulusDevice, dscp: int, priority: int) -> str:
    if not 0 <= dscp < 64 or not 0 <= priority < 8:
        raise ValueError("dscp-map takes a DSCP 0-63 and a priority 0-7")
    mapping = dev.applied.setdefault("qos", {}).setdefault("mapping", {}).setdefault("default-global", {})
    mapping.setdefault("dscp", {})[str(dscp)] = {"switch-priority": priority}
    return f"nv set qos mapping default-global dscp {dscp} switch-priority {priority}"


def strict_off(dev: CumulusDevice, priority: int) -> str:
    classes = dev.applied.get("qos", {}).get("egress-scheduler", {}).get("default-global", {}).get("traffic-class", {})
    if str(priority) not in classes:
        raise ValueError(f"{dev.name} schedules no traffic class {priority}")
    classes[str(priority)] = {"mode": "dwrr", "bw-percent": 10}
    return f"nv set qos egress-scheduler default-global traffic-class {priority} mode dwrr bw-percent 10"


def is_port(name: str) -> bool:
    return re.fullmatch(r"swp\d+(s\d+)?", name) is not None
