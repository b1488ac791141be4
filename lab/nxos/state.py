"""What an emulated NX-OS switch reports beyond its config: interface state, LLDP, BGP, vPC.

Derived at the moment of asking from the running config and the lab's wiring (lab/wiring.py), as for EOS
(lab/eos/state.py). Shapes: `show interface` rows as NAPALM's `get_interfaces` reads them (`state`,
`admin_state`, `eth_mtu`, `eth_bw` in Kb/s); `show lldp neighbors detail` as text in the layout NAPALM's TextFSM
template parses (Chassis id / Port id / Local Port id / ... / Enabled Capabilities per neighbour); `show ip bgp
summary vrf default` as NX-API's nested TABLE_vrf / TABLE_af / TABLE_saf / TABLE_neighbor rows (`neighborid`,
`neighboras`, `state`); `show vpc brief` with `vpc-peer-status` and `vpc-peer-keepalive-status`.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from rocefab.lab import routing
from rocefab.lab.nxos.config import Node
from rocefab.lab.wiring import ISOLATE, BgpPeerConfig, BgpSpeaker

if TYPE_CHECKING:
    from rocefab.lab.nxos.device import NxosDevice

DEFAULT_MTU = 1500  # an NX-OS interface without an `mtu` line
NORMAL, MAINTENANCE = "Normal", "Maintenance"  # the system modes of graceful insertion and removal


def _lines(node: Node | None) -> dict[str, str]:
    return {c.key: c.line for c in node.children} if node else {}


def port_enabled(dev: NxosDevice, port: str) -> bool:
    """NX-OS Ethernet ports ship shut down: enabled only by an explicit `no shutdown`."""
    lines = _lines(dev.running.section(f"interface {port}"))
    return lines.get("shutdown", "shutdown") == "no shutdown"


def interface_rows(dev: NxosDevice) -> list[dict[str, Any]]:
    wiring = dev.wiring
    names = [f"Ethernet1/{p}" for p in range(1, dev.ports + 1)] + ["mgmt0"]
    names += [n.line.split()[1] for n in dev.running.root.children
              if n.mode and n.mode.startswith("if-") and n.line.split()[1] not in names]
    members: dict[str, list[str]] = {}
    for name in names:
        group = re.search(r"channel-group (\d+)", " ".join(_lines(dev.running.section(f"interface {name}")).values()))
        if group:
            members.setdefault(f"port-channel{group.group(1)}", []).append(name)
    physical: dict[str, tuple[bool, int]] = {}
    rows = []
    for name in names:
        lines = _lines(dev.running.section(f"interface {name}"))
        default_up = name.startswith(("mgmt", "loopback", "port-channel", "Vlan"))
        admin = lines.get("shutdown", "no shutdown" if default_up else "shutdown") == "no shutdown"
        up, kbps = admin, 0
        if name.startswith("Ethernet") and wiring is not None:
            cabled = wiring.peer(dev.name, name) is not None
            up = admin and cabled and wiring.up(dev.name, name)
            kbps = (wiring.speed_gbps(dev.name, name) or 0) * 1_000_000 if up else 0
            physical[name] = (up, kbps)
        elif name.startswith("Ethernet"):
            kbps = 400_000_000
        if name.startswith("port-channel"):
            live = [physical.get(m, (False, 0)) for m in members.get(name, [])]
            up = admin and any(u for u, _ in live)
            kbps = sum(k for u, k in live if u)
        mac = hashlib.md5(name.encode()).hexdigest()
        row: dict[str, Any] = {"interface": name, "state": "up" if up else "down",
                               "admin_state": "up" if admin else "down",
                               "desc": lines.get("description", "").removeprefix("description "),
                               "eth_hw_addr": f"{mac[:4]}.{mac[4:8]}.{mac[8:12]}"}
        mtu = lines.get("mtu", f"mtu {DEFAULT_MTU}").split()[1]
        if name.startswith("Vlan"):
            row.update({"svi_mtu": mtu, "svi_bw": "1000000", "svi_admin_state": row.pop("admin_state")})
        else:
            row.update({"eth_mtu": mtu, "eth_bw": kbps or (400_000_000 if wiring is None else 0)})
        rows.append(row)
    return rows


def _short(name: str) -> str:
    return name.replace("Ethernet", "Eth").replace("port-channel", "Po")


def lldp_detail(dev: NxosDevice) -> tuple[str, dict[str, Any]]:
    """`show lldp neighbors detail` as text and as NX-API JSON (TABLE_nbor_detail, the local port by its short name
    in `l_port_id`, as the 10.x sample in tests/fixtures/devices/nxos shows)."""
    wiring = dev.wiring
    blocks, rows = [], []
    for port in [f"Ethernet1/{p}" for p in range(1, dev.ports + 1)]:
        far = wiring.peer(dev.name, port) if wiring is not None else None
        if far is None or not wiring or not wiring.up(dev.name, port):
            continue
        digest = hashlib.md5(far[0].encode()).hexdigest()
        chassis = f"{digest[:4]}.{digest[4:8]}.{digest[8:12]}"
        blocks.append(f"Chassis id: {chassis}\nPort id: {far[1]}\n"
                      f"Local Port id: {_short(port)}\nPort Description: {far[0]} {far[1]}\nSystem Name: {far[0]}\n"
                      f"System Description: lab device\nTime remaining: 104 seconds\nSystem Capabilities: B, R\n"
                      f"Enabled Capabilities: B, R\nManagement Address: not advertised\nVlan ID: not advertised\n")
        rows.append({"chassis_type": "Mac Address", "chassis_id": chassis, "port_type": "Interface Name",
                     "port_id": far[1], "l_port_id": _short(port), "port_desc": f"{far[0]} {far[1]}",
                     "sys_name": far[0], "sys_desc": "lab device", "ttl": 104, "system_capability": "B, R",
                     "enabled_capability": "B, R", "mgmt_addr_type": "Address not advertised",
                     "mgmt_addr": "not advertised", "vlan_id": "not advertised"})
    head = ("Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n"
            "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n"
            "Device ID            Local Intf      Hold-time  Capability  Port ID\n\n")
    text = head + "\n".join(blocks) + f"\nTotal entries displayed: {len(blocks)}\n"
    return text, {"neigh_hdr": "neigh_hdr", "TABLE_nbor_detail": {"ROW_nbor_detail": rows}, "neigh_count": len(rows)}


def bgp_speaker(dev: NxosDevice) -> BgpSpeaker | None:
    router = next((n for n in dev.running.root.children if n.line.startswith("router bgp ")), None)
    if router is None:
        return None
    asn = int(router.line.split()[2])
    templates = {n.line.split()[2]: _lines(n) for n in router.children if n.line.startswith("template peer ")}
    peers = []
    for node in router.children:
        if not node.line.startswith("neighbor "):
            continue
        lines = _lines(node)
        remote = re.search(r"remote-as (\d+)", " ".join(lines.values()))
        inherit = re.search(r"inherit peer (\S+)", " ".join(lines.values()))
        if remote is None and inherit is not None:
            remote = re.search(r"remote-as (\d+)", " ".join(templates.get(inherit.group(1), {}).values()))
        key = node.line.split()[1]
        interface = key if key.startswith("Ethernet") else None
        peers.append(BgpPeerConfig(key, int(remote.group(1)) if remote else 0, interface,
                                   None if interface else key))
    router_id = next((c.line.split()[1] for c in router.children if c.line.startswith("router-id ")), "0.0.0.0")
    addresses = {}
    for node in dev.running.root.children:
        if node.line.startswith("interface "):
            found = re.search(r"ip address (\S+)/\d+", " ".join(_lines(node).values()))
            if found:
                addresses[found.group(1)] = node.line.split()[1]
    ipv4 = [c.line for af in router.children if af.line == "address-family ipv4 unicast" for c in af.children]
    networks = tuple(line.split()[1] for line in ipv4 if line.startswith("network "))
    aggregates = tuple((line.split()[1], " summary-only" in line) for line in ipv4
                       if line.startswith("aggregate-address "))
    # GIR's generated profile isolates BGP: sessions stay up, learned routes are withdrawn from the peers
    maintenance = ISOLATE if dev.system_mode == MAINTENANCE else None
    return BgpSpeaker(asn, router_id, tuple(peers), addresses, networks, aggregates, maintenance)


def ip_route(dev: NxosDevice, prefix: str) -> dict[str, Any]:
    """`show ip route PREFIX | json` as NX-API nests it: TABLE_vrf / TABLE_addrf / TABLE_prefix / TABLE_path, a
    ROW_path per next hop (`ipnexthop`, `ifname` in the short form NX-OS prints, `ubest`), `ucast-nhops` the count;
    no route, an empty TABLE_vrf. Next hops from the lab's BGP (lab/routing.py)."""
    hops = routing.next_hops(dev.wiring, dev.name, prefix)
    if hops is None:
        paths: list[dict[str, Any]] = [{"ifname": "Lo0", "ubest": "true", "pref": "0", "metric": "0",
                                        "clientname": "direct"}]
    elif hops:
        speaker = bgp_speaker(dev)
        paths = [{"ipnexthop": h.next_hop, "ifname": _short(h.interface), "ubest": "true", "pref": "20",
                  "metric": "0", "clientname": f"bgp-{speaker.asn if speaker else 0}", "type": "external"}
                 for h in hops]
    else:
        return {"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_addrf": {"ROW_addrf": {
            "addrf": "ipv4"}}}}}
    row = {"ipprefix": prefix, "ucast-nhops": str(len(paths)), "mcast-nhops": "0",
           "attached": str(hops is None).lower(), "TABLE_path": {"ROW_path": paths[0] if len(paths) == 1 else paths}}
    return {"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_addrf": {"ROW_addrf": {
        "addrf": "ipv4", "TABLE_prefix": {"ROW_prefix": row}}}}}}


def bgp_summary(dev: NxosDevice) -> dict[str, Any]:
    """`show ip bgp summary` / `show bgp all summary vrf all` as NX-API prints them (tests/fixtures/devices/nxos:
    TABLE_vrf / TABLE_af keyed by `af-id` / TABLE_saf with `safi` and `af-name` / TABLE_neighbor)."""
    speaker = bgp_speaker(dev)
    if speaker is None:
        return {}
    wiring = dev.wiring
    rows = []
    for peer in speaker.peers:
        up = wiring.session_up(dev.name, peer)[0] if wiring is not None else False
        rows.append({"neighborid": peer.key, "neighborversion": "4", "msgrecvd": 10 if up else 0,
                     "msgsent": 10 if up else 0, "neighbortableversion": "1" if up else "0", "inq": "0", "outq": "0",
                     "neighboras": str(peer.remote_asn), "time": "00:00:10" if up else "never",
                     "state": "Established" if up else "Active", "prefixreceived": "0"})
    saf = {"safi": 1, "af-name": "IPv4 Unicast", "tableversion": "1", "configuredpeers": str(len(rows)),
           "capablepeers": str(sum(r["state"] == "Established" for r in rows)),
           "TABLE_neighbor": {"ROW_neighbor": rows[0] if len(rows) == 1 else rows}}
    af = {"af-id": "1", "TABLE_saf": {"ROW_saf": saf}}
    vrf = {"vrf-name-out": "default", "vrf-router-id": speaker.router_id, "vrf-local-as": str(speaker.asn),
           "TABLE_af": {"ROW_af": af}}
    return {"TABLE_vrf": {"ROW_vrf": vrf}}


def _vpc(dev: NxosDevice) -> dict[str, str] | None:
    node = next((n for n in dev.running.root.children if n.line.startswith("vpc domain ")), None)
    if node is None:
        return None
    found = {"domain": node.line.split()[2]}
    for c in node.children:
        if m := re.match(r"peer-keepalive destination (\S+) source (\S+)", c.line):
            found["keepalive_to"], found["keepalive_from"] = m.group(1), m.group(2)
    return found


def vpc_brief(dev: NxosDevice, peers: dict[str, NxosDevice]) -> dict[str, Any]:
    mine = _vpc(dev)
    if mine is None:
        return {"vpc-domain-id": "not configured"}
    peer_link = next((n.line.split()[1] for n in dev.running.root.children if n.line.startswith("interface ")
                      and any(c.line == "vpc peer-link" for c in n.children)), None)
    rows = {r["interface"]: r for r in interface_rows(dev)}
    link_up = peer_link is not None and rows.get(peer_link, {}).get("state") == "up"
    partner = next((o for o in peers.values() if o is not dev and (v := _vpc(o)) is not None
                    and v.get("domain") == mine["domain"] and v.get("keepalive_from") == mine.get("keepalive_to")),
                   None)
    ok = partner is not None and link_up
    return {"vpc-domain-id": mine["domain"], "vpc-peer-status": "peer-ok" if ok else "peer-link-down",
            "vpc-peer-keepalive-status": "peer-alive" if partner is not None else "peer-not-alive",
            "vpc-peer-consistency": "consistent" if ok else "not-applicable",
            "TABLE_peerlink": {"ROW_peerlink": {"peer-link-id": "1", "peerlink-ifindex": _short(peer_link or ""),
                                                "peer-link-port-state": "1" if link_up else "0",
                                                "peer-up-vlan-bitset": "-"}}}


# -- faults a person makes at the CLI --------------------------------------------------------------------------------
def configure(dev: NxosDevice, *lines: str) -> None:
    with dev.lock:
        cursor = dev.running.cursor()
        for line in lines:
            cursor.apply(line)
