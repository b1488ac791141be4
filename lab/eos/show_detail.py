"""Show commands of the lab's EOS emulator that other tools read beside rocefab (ANTA's interface, LLDP and BGP
tests), derived from the same state as lab/eos/state.py's. Shapes: the eAPI answers in
tests/fixtures/devices/eos/ (each sample's source in its index.yaml); tests/lab/test_emulator_conformance.py holds
the emulator to them.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from rocefab.lab.eos import state as eos_state

if TYPE_CHECKING:
    from rocefab.lab.eos.commands import Batch

Answer = tuple[dict[str, Any] | None, str]
_LONG = {"Et": "Ethernet", "Po": "Port-Channel", "Vl": "Vlan", "Lo": "Loopback"}


def _status(entry: dict[str, Any]) -> str:
    """`show interfaces description`'s Status column: up, down or adminDown."""
    if entry.get("interfaceStatus") == "disabled":
        return "adminDown"
    return "up" if entry.get("lineProtocolStatus") == "up" else "down"


def interfaces_description(b: Batch, m: re.Match[str], data: str | None) -> Answer:
    rows = {name: {"interfaceStatus": _status(i), "description": i.get("description", ""),
                   "lineProtocolStatus": i.get("lineProtocolStatus", "down")}
            for name, i in eos_state.interfaces(b.dev).items()}
    text = "Interface                      Status         Protocol           Description\n" + "".join(
        f"{eos_state.short_name(n):<31}{r['interfaceStatus']:<15}{r['lineProtocolStatus']:<19}{r['description']}\n"
        for n, r in rows.items())
    return {"interfaceDescriptions": rows}, text


def _chassis_id(device: str) -> str:
    digest = hashlib.sha256(device.encode()).hexdigest()
    return f"001c.73{digest[:2]}.{digest[2:6]}"


def lldp_detail(b: Batch, m: re.Match[str], data: str | None) -> Answer:
    """Every Ethernet port, with its neighbours (none: an empty list, as EOS lists a port without one)."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for row in eos_state.lldp_neighbors(b.dev):
        seen.setdefault(row["port"], []).append({
            "chassisIdType": "macAddress", "chassisId": _chassis_id(row["neighborDevice"]),
            "systemName": row["neighborDevice"], "ttl": row["ttl"],
            "neighborInterfaceInfo": {"interfaceIdType": "interfaceName", "interfaceId": f'"{row["neighborPort"]}"',
                                      "interfaceId_v2": row["neighborPort"], "interfaceDescription": ""}})
    ports = [n for n in eos_state.interfaces(b.dev) if n.startswith("Ethernet")]
    rows = {port: {"lldpNeighborInfo": seen.get(port, [])} for port in ports}
    text = "".join(f"Interface {p} detected {len(r['lldpNeighborInfo'])} LLDP neighbors:\n" for p, r in rows.items())
    return {"lldpNeighbors": rows}, text


def _long(short: str) -> str:
    for abbreviation, name in _LONG.items():
        if short.startswith(abbreviation) and short[len(abbreviation):][:1].isdigit():
            return name + short[len(abbreviation):]
    return short


def bgp_neighbors(b: Batch, m: re.Match[str], data: str | None) -> Answer:
    """Per VRF the peer list; an unnumbered (RFC 5549) peer carries its interface as `ifName` beside its
    link-local address. The fabric's sessions carry IPv4 (an unnumbered one over an IPv6 link-local transport):
    `show ipv6 bgp peers` lists none of them."""
    vrfs: dict[str, Any] = {}
    for vrf, summary in eos_state.bgp_summary(b.dev)["vrfs"].items():
        peers: list[dict[str, Any]] = []
        vrfs[vrf] = {"peerList": peers}
        if m.group(1):
            continue
        for key, peer in summary["peers"].items():
            up = peer["peerState"] == "Established"
            entry: dict[str, Any] = {
                "peerAddress": key, "asn": peer["asn"], "localAsn": summary["asn"], "routerId": "0.0.0.0",
                "state": peer["peerState"], "establishedTime": int(b.dev.uptime()) if up else 0,
                "peerTcpInfo": {"state": "ESTABLISHED" if up else "CLOSED", "inputQueueLength": 0,
                                "outputQueueLength": 0},
                "neighborCapabilities": {"multiprotocolCaps": {"ipv4Unicast": {
                    "advertised": True, "received": up, "enabled": up}}},
                "prefixesReceived": peer["prefixReceived"], "prefixesSent": 0, "v6PrefixesReceived": 0,
                "v6PrefixesSent": 0,
            }
            if "%" in key:
                entry["ifName"] = _long(key.partition("%")[2])
            peers.append(entry)
    text = "".join(f"BGP neighbor is {p['peerAddress']}, remote AS {p['asn']}\n  BGP state is {p['state']}\n"
                   for v in vrfs.values() for p in v["peerList"])
    return {"vrfs": vrfs}, text


def ipv6_bgp_summary(b: Batch, m: re.Match[str], data: str | None) -> Answer:
    """No IPv6 unicast peers (see bgp_neighbors); the VRFs and router ids as the IPv4 summary has them."""
    vrfs = {vrf: {**{k: v for k, v in summary.items() if k != "peers"}, "peers": {}}
            for vrf, summary in eos_state.bgp_summary(b.dev)["vrfs"].items()}
    return {"vrfs": vrfs}, ""
