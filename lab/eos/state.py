"""What an emulated EOS switch reports about itself beyond its config: interface state, LLDP, BGP, MLAG.

Everything here is derived, at the moment of the show command, from the device's running config and the lab's
wiring (lab/wiring.py): a port is up when cabled with both ends enabled, it runs at the speed its link trained
at, its LLDP neighbour is whatever is on the far end of the cable, a BGP session is established when both ends
configure each other, an MLAG is active when both peers point at each other over a live peer link.

The JSON shapes follow eAPI's: `show interfaces` as NAPALM's `get_interfaces` reads it, `show lldp neighbors`
(lldpNeighbors rows), `show ip bgp summary vrf all` (vrfs -> peers keyed by address, `peerState`; an unnumbered
session is keyed by the peer's link-local address with `%` and the short interface name, the form EOS prints),
`show mlag` (state, negStatus, peerLinkStatus, localIntfStatus — the fields ANTA's MLAG test reads).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from rocefab.lab import routing
from rocefab.lab.configtree import Cursor
from rocefab.lab.wiring import GRACEFUL_SHUTDOWN, BgpPeerConfig, BgpSpeaker

if TYPE_CHECKING:
    from rocefab.lab.eos.device import EosDevice

_HARDWARE = {"Ethernet": "ethernet", "Port-Channel": "portChannel", "Loopback": "loopback",
             "Management": "ethernet", "Vlan": "vlan"}
_COUNTERS = ("inOctets", "outOctets", "inUcastPkts", "outUcastPkts", "inMulticastPkts", "outMulticastPkts",
             "inBroadcastPkts", "outBroadcastPkts", "inDiscards", "outDiscards", "totalInErrors", "totalOutErrors")
# EOS's L2 MTU: a switchport forwards frames up to it whatever its (L3) `mtu` says; `show interfaces` prints it
# for bridged ports. 9214 is the EOS maximum the renderer caps at (models/catalogue).
L2_MTU = 9214
_SHORT = (("Ethernet", "Et"), ("Port-Channel", "Po"), ("Vlan", "Vl"), ("Loopback", "Lo"), ("Management", "Ma"))


def short_name(name: str) -> str:
    """EOS's abbreviation of an interface name: Ethernet61/1 -> Et61/1."""
    for long, abbr in _SHORT:
        if name.startswith(long):
            return abbr + name[len(long):]
    return name


def _settings(dev: EosDevice) -> dict[str, dict[str, str]]:
    return {line.split()[1]: {c.key: c.line for c in node.children}
            for line, node in dev.running.blocks("interface").items()}


def _kind(name: str) -> str:
    return re.sub(r"[\d/.]+$", "", name)


def port_enabled(dev: EosDevice, port: str) -> bool:
    """For the wiring: an Ethernet port not shut down. Unconfigured ports are enabled, as on a real switch."""
    return "shutdown" not in _settings(dev).get(port, {})


def _physical(dev: EosDevice, name: str, s: dict[str, str]) -> tuple[bool, int]:
    """(up, bandwidth in b/s) of an Ethernet or Management port."""
    wiring = dev.wiring
    if "shutdown" in s:
        return False, 0
    if _kind(name) == "Management":
        return True, 1_000_000_000
    if wiring is None or wiring.peer(dev.name, name) is None:
        # not in a lab fabric, or no cable: a forced speed is what the port would run at
        forced = re.search(r"speed (?:forced |auto )?(\d+)g", s.get("speed", ""))
        return wiring is None, int(forced.group(1)) * 1_000_000_000 if forced else 100_000_000_000
    up = wiring.up(dev.name, name)
    return up, (wiring.speed_gbps(dev.name, name) or 0) * 1_000_000_000 if up else 0


def _interface_counters(dev: EosDevice, name: str) -> dict[str, int]:
    counters = dict.fromkeys(_COUNTERS, 0)
    wiring = dev.wiring
    if wiring is not None and wiring.peer(dev.name, name) is not None:
        c = wiring.port_counters(dev.name, name)
        counters.update(inUcastPkts=c.in_packets, outUcastPkts=c.out_packets, totalInErrors=c.in_errors,
                        inOctets=c.in_packets * 4200, outOctets=c.out_packets * 4200)
    return counters


def interfaces(dev: EosDevice) -> dict[str, dict[str, Any]]:
    """Every configured interface, with its state, speed and MTU as `show interfaces` prints them."""
    settings = _settings(dev)
    physical = {n: _physical(dev, n, s) for n, s in settings.items() if _kind(n) in ("Ethernet", "Management")}

    def members(group: str) -> list[str]:
        return [n for n, o in settings.items() if o.get("channel-group", "").split()[1:2] == [group]]

    out = {}
    for name, s in settings.items():
        kind = _kind(name)
        if kind == "Port-Channel":
            live = [physical[m] for m in members(name.removeprefix("Port-Channel")) if physical.get(m, (0, 0))[0]]
            up, bw = "shutdown" not in s and bool(live), sum(b for _, b in live)
        elif name in physical:
            up, bw = physical[name]
        else:
            up, bw = "shutdown" not in s, 0
        bridged = kind in ("Ethernet", "Port-Channel") and "switchport" not in s
        mtu = int(s["mtu"].split()[1]) if "mtu" in s and not bridged else L2_MTU if bridged \
            else 65535 if kind == "Loopback" else 1500
        entry: dict[str, Any] = {
            "name": name, "description": s.get("description", "description ")[12:],
            "lineProtocolStatus": "up" if up else "down",
            "interfaceStatus": "disabled" if "shutdown" in s else "connected" if up else "notconnect",
            "mtu": mtu, "bandwidth": bw, "hardware": _HARDWARE.get(kind, "ethernet"),
            "lastStatusChangeTimestamp": dev._boot_epoch,
            "forwardingModel": "bridged" if bridged else "routed",
            "interfaceCounters": _interface_counters(dev, name),
        }
        if kind == "Ethernet":  # the port's physical layer: a forced speed, both directions at once
            entry.update(duplex="duplexFull" if up else "duplexUnknown", autoNegotiate="unknown",
                         lanes=max(1, min(8, bw // 50_000_000_000)) if up else 0)
        if kind != "Loopback":
            tail = hashlib.sha256(f"{dev.serial}{name}".encode()).hexdigest()
            entry["physicalAddress"] = "00:1c:73:" + ":".join(tail[i:i + 2] for i in (0, 2, 4))
        out[name] = entry
    return out


def _wired(dev: EosDevice) -> list[str]:
    wiring = dev.wiring
    return sorted({port for (device, port) in wiring.far if device == dev.name}) if wiring is not None else []


def pfc_counters(dev: EosDevice) -> dict[str, Any]:
    """`show priority-flow-control counters`: pause frames sent and received per port."""
    wiring = dev.wiring
    rows = {}
    for port in _wired(dev):
        c = wiring.port_counters(dev.name, port) if wiring is not None else None
        rows[port] = {"rxFrames": c.pfc_rx if c else 0, "txFrames": c.pfc_tx if c else 0}
    return {"interfaceCounters": rows}


def queue_counters(dev: EosDevice) -> dict[str, Any]:
    """`show interfaces counters queue detail`: egress drops per unicast and multicast traffic class, drop
    precedence 0 (the lossless class's unicast queue carries the lab's drops)."""
    wiring = dev.wiring
    lossless = wiring.lossless_class if wiring is not None else -1
    rows = {}
    for port in _wired(dev):
        c = wiring.port_counters(dev.name, port) if wiring is not None else None

        def classes(dropping: bool, c: Any = c) -> dict[str, Any]:
            return {f"TC{tc}": {"dropPrecedences": {"DP0": {
                "droppedPackets": c.lossless_drops if c and dropping and tc == lossless else 0}}} for tc in range(8)}

        rows[port] = {"ucastQueues": {"trafficClasses": classes(True)},
                      "mcastQueues": {"trafficClasses": classes(False)}}
    return {"egressQueueCounters": {"interfaces": rows}}


def ecn_counters(dev: EosDevice) -> dict[str, Any]:
    """`show qos interfaces ecn counters queue`: ECN-marked packets per tx queue, "-" where the queue marks none
    (only the lossless one carries ECN in the rendered profile)."""
    wiring = dev.wiring
    lossless = wiring.lossless_class if wiring is not None else -1
    rows = {}
    for port in _wired(dev):
        c = wiring.port_counters(dev.name, port) if wiring is not None else None
        rows[port] = {"queueCounters": {str(q): str(c.ecn_marked if c else 0) if q == lossless else "-"
                                        for q in range(8)}}
    return {"intfQueueCounters": rows}


def lldp_neighbors(dev: EosDevice) -> list[dict[str, Any]]:
    """One row per port with a live link: the far end's system name and port (hosts run lldpd too)."""
    wiring = dev.wiring
    if wiring is None:
        return []  # a switch outside a lab fabric has no cables
    rows = []
    for name in _wired(dev):  # every cabled port exists, configured or not
        far = wiring.peer(dev.name, name)
        if far is not None and wiring.up(dev.name, name):
            rows.append({"port": name, "neighborDevice": far[0], "neighborPort": far[1], "ttl": 120})
    return rows


link_local = routing.link_local


def bgp_speaker(dev: EosDevice) -> BgpSpeaker | None:
    """The device's BGP configuration as the wiring needs it (router bgp, its neighbours, every address)."""
    router = next((n for line, n in dev.running.blocks("router-bgp").items()), None)
    if router is None:
        return None
    asn = int(router.line.split()[2])
    lines = [c.line for c in router.children]
    group_asn = {m.group(1): int(m.group(2)) for line in lines
                 if (m := re.fullmatch(r"neighbor (\S+) remote-as (\d+)", line)) and not _is_address(m.group(1))}
    group_of = {m.group(1): m.group(2) for line in lines
                if (m := re.fullmatch(r"neighbor (\S+) peer group (\S+)", line))}
    peers: list[BgpPeerConfig] = []
    for line in lines:
        if m := re.fullmatch(r"neighbor interface (\S+) peer-group (\S+)(?: remote-as (\d+))?", line):
            remote = int(m.group(3)) if m.group(3) else group_asn.get(m.group(2), 0)
            peers.append(BgpPeerConfig(m.group(1), remote, m.group(1), None))
        elif (m := re.fullmatch(r"neighbor (\S+) remote-as (\d+)", line)) and _is_address(m.group(1)):
            peers.append(BgpPeerConfig(m.group(1), int(m.group(2)), None, m.group(1)))
    for address, group in group_of.items():
        if _is_address(address) and all(p.key != address for p in peers) and group in group_asn:
            peers.append(BgpPeerConfig(address, group_asn[group], None, address))
    router_id = next((line.split()[1] for line in lines if line.startswith("router-id ")), "0.0.0.0")
    addresses = {}
    for name, s in _settings(dev).items():
        if m := re.match(r"ip address (\S+)/\d+", s.get("ip address", "")):
            addresses[m.group(1)] = name
    networks = tuple(m.group(1) for af in router.children for c in af.children
                     if (m := re.fullmatch(r"network (\S+)", c.line)))
    aggregates = tuple((m.group(1), bool(m.group(2))) for line in lines
                       if (m := re.fullmatch(r"aggregate-address (\S+)( summary-only)?", line)))
    # EOS User Manual, Maintenance Mode: the System unit quiesced drains BGP with the graceful-shutdown community
    units = [unit for block in dev.running.blocks("maintenance").values() for unit in block.children]
    quiesced = any(unit.line == "unit System" and any(c.line == "quiesce" for c in unit.children) for unit in units)
    return BgpSpeaker(asn, router_id, tuple(peers), addresses, networks, aggregates,
                      GRACEFUL_SHUTDOWN if quiesced else None)


def ip_route(dev: EosDevice, prefix: str) -> dict[str, Any]:
    """`show ip route PREFIX` as eAPI prints it: vrfs -> default -> routes keyed by prefix, each with its
    `routeType` and `vias` (`nexthopAddr`, `interface`); no route, no key. Next hops come from the lab's BGP
    (lab/routing.py)."""
    hops = routing.next_hops(dev.wiring, dev.name, prefix)
    routes: dict[str, Any] = {}
    if hops is None:
        routes[prefix] = {"routeType": "connected", "directlyConnected": True, "routeAction": "forward",
                          "vias": [{"interface": "Loopback0"}], "kernelProgrammed": True, "hardwareProgrammed": True}
    elif hops:
        routes[prefix] = {"routeType": "eBGP", "directlyConnected": False, "routeAction": "forward",
                          "preference": 200, "metric": 0, "kernelProgrammed": True, "hardwareProgrammed": True,
                          "vias": [{"nexthopAddr": h.next_hop, "interface": h.interface} for h in hops]}
    return {"vrfs": {"default": {"routes": routes, "allRoutesProgrammedHardware": True,
                                 "allRoutesProgrammedKernel": True, "defaultRouteState": "notSet"}}}


def _is_address(word: str) -> bool:
    return bool(re.fullmatch(r"[\d.]+|[0-9a-fA-F:]+:[0-9a-fA-F:]*", word))


def bgp_summary(dev: EosDevice) -> dict[str, Any]:
    speaker = bgp_speaker(dev)
    if speaker is None:
        return {"vrfs": {}}
    wiring = dev.wiring
    peers = {}
    for peer in speaker.peers:
        up = wiring.session_up(dev.name, peer)[0] if wiring is not None else False
        if peer.interface is not None:
            far = wiring.peer(dev.name, peer.interface) if wiring is not None else None
            key = f"{link_local(*far) if far else 'fe80::1'}%{short_name(peer.interface)}"
        else:
            key = peer.key
        peers[key] = {"version": 4, "msgReceived": 10 if up else 0, "msgSent": 10 if up else 0,
                      "inMsgQueue": 0, "outMsgQueue": 0, "asn": str(peer.remote_asn), "prefixAccepted": 0,
                      "prefixReceived": 0, "upDownTime": dev._boot_epoch, "underMaintenance": False,
                      "peerState": "Established" if up else "Active"}
    return {"vrfs": {"default": {"vrf": "default", "routerId": speaker.router_id, "asn": str(speaker.asn),
                                 "peers": peers}}}


def _mlag_settings(dev: EosDevice) -> dict[str, str] | None:
    node = dev.running.root.child("mlag configuration", block=True)
    if node is None:
        return None
    return {" ".join(c.line.split()[:-1]): c.line.split()[-1] for c in node.children if len(c.line.split()) > 1}


def _address_of(dev: EosDevice, interface: str) -> str | None:
    found = re.match(r"ip address (\S+)/\d+", _settings(dev).get(interface, {}).get("ip address", ""))
    return found.group(1) if found else None


def mlag(dev: EosDevice, peers: dict[str, EosDevice]) -> dict[str, Any]:
    """`show mlag`: active when this switch and the one at its peer-address point at each other and the peer
    link carries traffic."""
    mine = _mlag_settings(dev)
    if mine is None:
        return {"state": "disabled", "negStatus": "", "peerLinkStatus": "", "localIntfStatus": ""}
    local = mine.get("local-interface", "")
    own_address = _address_of(dev, local)
    state = interfaces(dev)
    peer_link = mine.get("peer-link", "")
    link_up = state.get(peer_link, {}).get("lineProtocolStatus") == "up"
    local_up = state.get(local, {}).get("lineProtocolStatus") == "up"
    partner = None
    for other in peers.values():
        theirs = _mlag_settings(other) if other is not dev else None
        if theirs and _address_of(other, theirs.get("local-interface", "")) == mine.get("peer-address") \
                and theirs.get("peer-address") == own_address and theirs.get("domain-id") == mine.get("domain-id"):
            partner = other
    connected = partner is not None and link_up and local_up
    return {"domainId": mine.get("domain-id", ""), "localInterface": local, "peerAddress": mine.get("peer-address", ""),
            "peerLink": peer_link, "state": "active" if connected else "inactive",
            "negStatus": "connected" if connected else "connecting",
            "peerLinkStatus": "up" if link_up else "down", "localIntfStatus": "up" if local_up else "down",
            "systemId": dev.mac}


# -- faults a person makes at the CLI --------------------------------------------------------------------------------
def set_mtu(dev: EosDevice, port: str, mtu: int) -> None:
    _configure(dev, f"interface {port}", f"mtu {mtu}")


def pfc_off(dev: EosDevice, port: str) -> None:
    """The port loses the lossless profile (as a port configured by hand without it): no PFC, no DSCP trust."""
    _configure(dev, f"interface {port}", "no service-profile")


def strict_off(dev: EosDevice, priority: int) -> str:
    """Every lossless profile's queue `priority` leaves strict priority (DWRR instead)."""
    names = [line.split()[2] for line in dev.running.blocks("qos-profile")]
    if not names:
        raise ValueError(f"{dev.name} has no qos profile")
    for name in names:
        _configure(dev, f"qos profile {name}", f"uc-tx-queue {priority}", "no priority")
    return f"qos profile {', '.join(names)} / uc-tx-queue {priority} / no priority"


def _configure(dev: EosDevice, *lines: str) -> None:
    if lines[0].startswith("interface") and lines[0] not in dev.running.blocks("interface"):
        raise ValueError(f"{dev.name} has no {lines[0]}")
    with dev.lock:
        cursor = Cursor(dev.running)
        for line in lines:
            cursor.apply(line)
