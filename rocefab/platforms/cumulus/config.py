"""NVIDIA Cumulus Linux (NVUE): plan -> the YAML document `nv config replace` takes, and the same
configuration as `nv set` commands for review.

The document is built as data, then printed twice. Syntax follows Cumulus Linux 5.14, the last release
before NVUE renamed `ip address` to `ipv4 address` and `enable on` to `state enabled`
(lossless-roce-vendor-reference.md section 3.14; CumulusNetworks/docs cumulus-linux-515 "New and Changed
NVUE Commands").
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from rocefab.platforms.cumulus import SPEC
from rocefab.platforms.cumulus.document_text import Shared, Stamp, set_document_yaml
from rocefab.platforms.cumulus.services import apply_raw, services_tree
from rocefab.platforms.unit import UnitFile
from rocefab.renderers.common import (
    adaptive_routing_port,
    egress_queues,
    explicit_dscp_map,
    profile_classes,
    unused_children,
)
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import BfdTimers, FabricPlan, PortRole, Switch
from rocefab.renderers.templating import header_lines, render
from rocefab.renderers.yamltext import dump_block

BRIDGE = "br_default"
MGMT_VRF = "mgmt"
QOS_PROFILE = "default-global"
ON = "on"  # NVUE 5.14 spelling; a YAML 1.1 reader would turn a bare on into a boolean, so it is quoted
MLAG_PRIORITY = {True: 1000, False: 2000}  # lower wins: leaf a becomes the MLAG primary
Tree = dict[str, Any]


# Subtrees that recur from port to port and switch to switch, one object each (document_text.Shared: printed
# once per document), and the stamps of the entries that differ only in their values (document_text.Stamp: a
# rail leaf's server ports and a spine's BGP neighbours, most of their documents). Never changed once made.
_WATCHDOG_ENTRY = Shared({"pfc-watchdog": {}})
_ADAPTIVE_ENTRY = Shared({"adaptive-routing": {"enable": ON}})
_LINKS: dict[tuple[str | None, int], Shared] = {}  # by lane speed (broken-out ports) and MTU
_BREAKOUTS: dict[int, Shared] = {}  # a broken-out cage's entry, by factor
_PORT_STAMPS: dict[tuple[str | None, int, bool, bool, bool], Stamp] = {}
_CACHE_LIMIT = 4096  # distinct speeds and MTUs are few; the bound only keeps odd input from growing them


def _link(lane_speed: str | None, mtu: int) -> Shared:
    link = _LINKS.get((lane_speed, mtu))
    if link is None:
        link = Shared({"mtu": mtu, "state": {"up": {}}} if lane_speed is None else
                      {"mtu": mtu, "state": {"up": {}}, "speed": lane_speed})
        if len(_LINKS) < _CACHE_LIMIT:
            _LINKS[lane_speed, mtu] = link
    return link


def _breakout(factor: int) -> Shared:
    entry = _BREAKOUTS.get(factor)
    if entry is None:
        entry = _BREAKOUTS[factor] = Shared({"link": {"breakout": {f"{factor}x": {}}}, "type": "swp"})
    return entry


def _port_stamp(lane_speed: str | None, mtu: int, routed: bool, watchdog: bool, adaptive: bool) -> Stamp:
    """The entry of a switch port: its description (and its address, when routed) are the stamp's values."""
    shape = (lane_speed, mtu, routed, watchdog, adaptive)
    stamp = _PORT_STAMPS.get(shape)
    if stamp is not None:
        return stamp
    link = _link(lane_speed, mtu)

    def build(description: str, *address: str) -> Tree:
        entry: Tree = {"description": description, "link": link, "type": "swp"}
        if address:
            entry["ip"] = {"address": {address[0]: {}}}
        if watchdog:
            # A per-port setting, allowed on physical swp ports only (bond members included).
            entry["qos"] = _WATCHDOG_ENTRY
        if adaptive:
            entry["router"] = _ADAPTIVE_ENTRY
        return entry

    stamp = Stamp(build, 2 if routed else 1)
    if len(_PORT_STAMPS) < _CACHE_LIMIT:
        _PORT_STAMPS[shape] = stamp
    return stamp


def _interfaces(switch: Switch, watchdog: bool) -> Tree:
    mtu = switch.mtu_bytes
    lb = switch.load_balancing
    adaptive_routing = lb is not None and lb.adaptive_routing
    interfaces: Tree = {}
    edge_port = Shared({"admin-edge": ON, "bpdu-guard": ON})

    for breakout in switch.breakouts:
        interfaces[breakout.parent] = _breakout(breakout.factor)
    # the few kinds of port a switch has, each's stamp looked up once (a spine has 128 ports of one kind)
    stamps: dict[tuple[object, ...], Stamp] = {}
    for port in switch.ports:
        kind = (port.speed_gbps, port.broken_out, port.mtu_bytes, bool(port.ipv4),
                adaptive_routing and adaptive_routing_port(port, SPEC))
        stamp = stamps.get(kind)
        if stamp is None:
            lane_speed = f"{port.speed_gbps}G" if port.broken_out else None
            stamp = stamps[kind] = _port_stamp(lane_speed, switch.port_mtu(port), kind[3], watchdog, kind[4])
        interfaces[port.name] = stamp.make(port.description, port.ipv4) if port.ipv4 else \
            stamp.make(port.description)
    for name, speed, _lanes in unused_children(switch):
        interfaces[name] = {"description": "unused breakout lane", "link": {"speed": f"{speed}G",
                                                                            "state": {"down": {}}}, "type": "swp"}

    for lag in switch.lags:
        bond: Tree = {"member": {m: {} for m in lag.members}}
        entry = {"bond": bond, "description": lag.description, "link": {"mtu": mtu}}
        if lag.role is PortRole.PEER_LINK:
            entry["type"] = "peerlink"
        else:
            bond["mlag"] = {"enable": ON, "id": lag.mlag_id}
            # A host port is an edge port; BPDU guard shuts it if a bridge appears there (Cumulus 5.14 STP guide:
            # admin-edge without BPDU guard risks a loop).
            entry["bridge"] = {"domain": {BRIDGE: {"access": lag.access_vlan, "stp": edge_port}}}
            entry["type"] = "bond"
        interfaces[lag.name] = entry
    if switch.mlag is not None:
        interfaces[f"{switch.mlag.peer_link}.{switch.mlag.peer_vlan}"] = {
            "base-interface": switch.mlag.peer_link, "type": "sub", "vlan": switch.mlag.peer_vlan,
        }

    interfaces["lo"] = {"ip": {"address": {switch.loopback_ipv4: {}}}, "type": "loopback"}
    if switch.management is not None:
        interfaces["eth0"] = {
            "ip": {
                "address": {switch.management.ipv4: {}},
                "gateway": {switch.management.gateway: {}},
                "vrf": MGMT_VRF,
            },
            "type": "eth",
        }
    for svi in switch.svis:
        ip: Tree = {"address": {svi.ipv4: {}}}
        if svi.virtual_ipv4:
            prefix_length = svi.ipv4.split("/")[1]
            ip["vrr"] = {"address": {f"{svi.virtual_ipv4}/{prefix_length}": {}}, "enable": ON, "state": {"up": {}}}
        interfaces[f"vlan{svi.vlan}"] = {"description": svi.name, "ip": ip, "link": {"mtu": mtu}, "type": "svi",
                                         "vlan": svi.vlan}
    return {name: interfaces[name] for name in sorted(interfaces, key=natural_key)}


def cable_length_m(switch: Switch) -> int:
    """switchd sizes the no-drop headroom from the profile's cable length: the switch's longest cable (the
    Cumulus 5.14 RoCE guide tunes `qos pfc default-global` after `qos roce`; a `qos roce cable-length` is not
    documented for 5.14), the RoCE profile's 100 m when nothing is cabled."""
    return switch.longest_cable_m or 100


_DSCP_MAPS: dict[tuple[tuple[int, int], ...], Shared] = {}


def _dscp_map(items: tuple[tuple[int, int], ...]) -> Shared:
    """The DSCP -> switch priority entries (a fabric has one map; each switch prints some 60 entries of it)."""
    found = _DSCP_MAPS.get(items)
    if found is None:
        found = Shared({str(dscp): {"switch-priority": prio} for dscp, prio in items})
        if len(_DSCP_MAPS) < _CACHE_LIMIT:
            _DSCP_MAPS[items] = found
    return found


def _qos(plan: FabricPlan, switch: Switch) -> Tree:
    q = plan.qos
    ecn = switch.ecn
    assert ecn is not None and ecn.unit == "kbytes", "Spectrum profiles and the intent's are in kbytes"
    profile = SPEC.roce_profile_classes
    assert profile is not None
    roce_class = profile[0]
    classes = profile_classes(q.roce_priority, q.cnp_priority, profile)
    # `qos roce` maps priority 3 -> class 3, 6 -> 6 and the rest -> 0: written are the fabric's RoCE and CNP
    # priorities and whatever of 3 and 6 would otherwise keep the profile's class (SPEC.roce_profile_classes)
    profile_default = profile_classes(*profile, profile)
    mapped = sorted({q.roce_priority, q.cnp_priority} | {p for p in range(8) if classes[p] != profile_default[p]})
    scheduler: Tree = {}
    for queue in egress_queues(q, ecn):
        scheduler[str(classes[queue.id])] = {"mode": "strict"} if queue.strict else {
            "bw-percent": queue.bandwidth_percent, "mode": "dwrr"}
    qos: Tree = {
        # The RoCE profile sets up the lossless buffer pools; the explicit objects below pin every value
        # the intent names, so the result does not depend on the profile's defaults.
        "roce": {"enable": ON, "mode": "lossless"},
        "mapping": {QOS_PROFILE: {
            "dscp": _dscp_map(tuple(sorted(explicit_dscp_map(q, SPEC.default_dscp_classes).items()))),
            "trust": "l3",
        }},
        "egress-queue-mapping": {QOS_PROFILE: {"switch-priority": {
            str(prio): {"traffic-class": classes[prio]} for prio in mapped
        }}},
        "pfc": {QOS_PROFILE: {
            "cable-length": cable_length_m(switch),
            "rx": "enable",
            "switch-priority": {str(prio): {} for prio in q.lossless_priorities},
            "tx": "enable",
        }},
        "congestion-control": {QOS_PROFILE: {"traffic-class": {str(roce_class): {
            "ecn": "enable",
            "max-threshold": ecn.max_threshold * 1000,
            "min-threshold": ecn.min_threshold * 1000,
            "probability": ecn.max_mark_percent,
            "red": "disable",
        }}}},
        "egress-scheduler": {QOS_PROFILE: {"traffic-class": scheduler}},
    }
    if q.watchdog_enabled:
        qos["pfc-watchdog"] = {"polling-interval": q.watchdog_polling_interval_ms,
                               "robustness": q.watchdog_robustness}
    return qos


# Cumulus 5.14 "Equal Cost Multipath Load Sharing", IPv6 Next Hop Preference: with several BGP peerings to the same
# router and adaptive routing on, an inbound route map that prefers the global IPv6 next hop (`set ipv6-nexthop-
# prefer-global`, `on` up to 5.14 and `enabled` from 5.15, per the 5.15 "New and Changed NVUE Commands" page).
PREFER_GLOBAL_MAP = "AR-PREFER-GLOBAL"


def parallel_peers(switch: Switch) -> frozenset[str]:
    """The unnumbered neighbours of an adaptive-routing switch that share their router with another session of it:
    those the guide asks to take routes through the prefer-global route map."""
    lb = switch.load_balancing
    if lb is None or not lb.adaptive_routing:
        return frozenset()
    sessions = Counter(n.peer_device for n in switch.bgp.neighbors if n.interface)
    return frozenset(n.interface for n in switch.bgp.neighbors if n.interface and sessions[n.peer_device] > 1)


def _prefer_global_policy() -> Tree:
    return {"route-map": {PREFER_GLOBAL_MAP: {"rule": {"10": {"action": {"permit": {}},
                                                           "set": {"ipv6-nexthop-prefer-global": ON}}}}}}


_INBOUND = Shared({"ipv4-unicast": {"policy": {"inbound": {"route-map": PREFER_GLOBAL_MAP}}}})
_NEIGHBOR_STAMPS: dict[tuple[bool, BfdTimers | None, bool], Stamp] = {}


def _neighbor_stamp(unnumbered: bool, timers: BfdTimers | None, prefer_global: bool) -> Stamp:
    """The entry of a BGP neighbour: its description and AS are the stamp's values."""
    shape = (unnumbered, timers, prefer_global)
    stamp = _NEIGHBOR_STAMPS.get(shape)
    if stamp is not None:
        return stamp
    # Cumulus 5.14 sets BFD per neighbour (`... neighbor <id> bfd enable on`, timers alongside; 5.15 moves them
    # to profiles); the timers are written out even at their defaults, as the NVUE document holds every value.
    bfd: Tree | None = None if timers is None else Shared({
        "detect-multiplier": timers.multiplier, "enable": ON, "min-rx-interval": timers.min_rx_ms,
        "min-tx-interval": timers.interval_ms})

    def build(description: str, remote_as: int) -> Tree:
        entry: Tree = {"description": description, "remote-as": remote_as,
                       "type": "unnumbered" if unnumbered else "numbered"}
        if bfd is not None:
            entry["bfd"] = bfd
        if prefer_global:
            entry["address-family"] = _INBOUND
        return entry

    stamp = Stamp(build, 2)
    if len(_NEIGHBOR_STAMPS) < _CACHE_LIMIT:
        _NEIGHBOR_STAMPS[shape] = stamp
    return stamp


def _bgp(switch: Switch) -> Tree:
    neighbors: Tree = {}
    prefer_global = parallel_peers(switch)
    timers = switch.bgp.bfd
    stamps: dict[tuple[bool, bool], Stamp] = {}  # each kind of neighbour's stamp looked up once per switch
    for n in switch.bgp.neighbors:
        key = n.interface or n.address
        assert key is not None
        kind = bool(n.interface), key in prefer_global
        stamp = stamps.get(kind)
        if stamp is None:
            stamp = stamps[kind] = _neighbor_stamp(kind[0], timers, kind[1])
        neighbors[key] = stamp.make(n.description, n.remote_asn)
    ipv4: Tree = {}
    if switch.bgp.aggregates:
        # Cumulus 5.14 "Optional BGP Configuration", Aggregate Addresses: summary-only suppresses the longer prefixes
        # inside; the network statements below stay as the contributors FRR needs to originate the aggregate.
        ipv4["aggregate-route"] = {a: {"summary-only": ON} for a in switch.bgp.aggregates}
    return {
        "address-family": {"ipv4-unicast": {
            **ipv4,
            "enable": ON,
            "multipaths": {"ebgp": switch.bgp.max_paths},
            "network": {net: {} for net in switch.bgp.networks},
        }},
        "enable": ON,
        "neighbor": {k: neighbors[k] for k in sorted(neighbors, key=natural_key)},
        "path-selection": {"multipath": {"aspath-ignore": ON}},
    }


def _gnmi_server(switch: Switch) -> Tree | None:
    """NVUE's gNMI server, which listens only on the addresses it is given (no VRF setting in 5.14): eth0's
    management address, which sits in the mgmt VRF; without management addressing the loopback, in-band in the
    default VRF, as EOS's eAPI and gNMI answer there then. The port is written out although it is NVUE's default,
    because the document holds every value a collector relies on. `state enabled` is the 5.14 spelling here: the
    object came in 5.13 with `state`, not `enable on`."""
    if SPEC.gnmi_port is None:
        return None
    address = (switch.management.ipv4 if switch.management else switch.loopback_ipv4).split("/")[0]
    return {"listening-address": {address: {}}, "port": SPEC.gnmi_port, "state": "enabled"}


def build(plan: FabricPlan, switch: Switch, target: str) -> Tree:
    """The structured config of an NVUE switch is the document itself: its `set` tree."""
    return nvue_document(plan, switch)


def nvue_document(plan: FabricPlan, switch: Switch) -> Tree:
    """The `set` tree of the switch's NVUE configuration."""
    doc: Tree = {}
    if switch.vlans:
        doc["bridge"] = {"domain": {BRIDGE: {"vlan": {",".join(str(v) for v in switch.vlans): {}}}}}
    doc["interface"] = _interfaces(switch, plan.qos.watchdog_enabled)
    if switch.mlag is not None:
        m = switch.mlag
        doc["mlag"] = {
            "backup": {m.peer_loopback_ipv4: {}},
            "enable": ON,
            "mac-address": m.system_mac,
            "peer-ip": "linklocal",
            "priority": MLAG_PRIORITY[m.primary],
        }
    doc["qos"] = _qos(plan, switch)
    router: Tree = {"bgp": {"autonomous-system": switch.bgp.asn, "enable": ON, "router-id": switch.bgp.router_id}}
    lb = switch.load_balancing
    if lb is not None and lb.adaptive_routing:
        router["adaptive-routing"] = {"enable": ON}
    if parallel_peers(switch):
        router["policy"] = _prefer_global_policy()
    if any(s.virtual_ipv4 for s in switch.svis):
        router["vrr"] = {"enable": ON}
    doc["router"] = router
    service, system = services_tree(plan.services, MGMT_VRF if switch.management else "default")
    if service:
        doc["service"] = service
    doc["system"] = {"hostname": switch.name}
    gnmi = _gnmi_server(switch)
    if gnmi is not None:
        doc["system"]["gnmi-server"] = gnmi
    if lb is not None:
        # The five-tuple, written out: Cumulus's guide and its NVUE reference disagree on the defaults.
        doc["system"]["forwarding"] = {"ecmp-hash": dict.fromkeys(sorted(lb.fields), ON)}
    doc["system"].update(system)
    doc["vrf"] = {"default": {"router": {"bgp": _bgp(switch)}}}
    return doc


_NEEDS_QUOTES = re.compile(r"\s")
_QUOTED: dict[str, str] = {}  # tokens already quoted: most keys and values repeat from port to port


def _quote(token: str) -> str:
    quoted = _QUOTED.get(token)
    if quoted is None:
        quoted = f'"{token}"' if not token or _NEEDS_QUOTES.search(token) else token
        if len(_QUOTED) < 65536:
            _QUOTED[token] = quoted
    return quoted


def nv_set_commands(tree: Tree, prefix: str = "nv set") -> list[str]:
    """Flatten a set tree into `nv set` lines: a scalar ends a path with its value, an empty map ends
    it with its own key."""
    lines: list[str] = []
    _flatten(tree, prefix, lines)
    return lines


def _flatten(tree: Tree, prefix: str, lines: list[str]) -> None:
    append = lines.append
    for key, value in tree.items():
        path = f"{prefix} {_quote(key if type(key) is str else str(key))}"
        if isinstance(value, dict):
            if value:
                _flatten(value, path, lines)
            else:
                append(path)
        else:
            append(f"{path} {_quote(value if type(value) is str else str(value))}")


def render_switch(plan: FabricPlan, switch: Switch, target: str) -> list[UnitFile]:
    """The NVUE document as the YAML `nv config replace` takes (what apply pushes).

    The YAML writer quotes strings such as 'on' that a YAML 1.1 reader would turn into booleans."""
    header = header_lines(plan.source, target, switch.name)
    document = nvue_document(plan, switch)
    # The intent's raw lines for this role, last: applied to the document `nv config replace` takes.
    raw_lines = _raw_lines(plan, switch)
    body = None if raw_lines else set_document_yaml(document)
    if body is None:
        body = dump_block([{"set": apply_raw(document, raw_lines)}])
    return [UnitFile(".nvue.yaml", "nvue-yaml", "".join(f"# {line}\n" for line in header) + body)]


def render_commands(plan: FabricPlan, switch: Switch, target: str) -> list[UnitFile]:
    """The same document as `nv set` commands (`render --with nvue-commands`): for reading or pasting, never what
    apply pushes. The intent's raw lines come as given after the commands, where running the file in order has
    the same effect as the YAML they were applied to."""
    header = header_lines(plan.source, target, switch.name)
    lines = nv_set_commands(nvue_document(plan, switch))
    commands = render("cumulus/nv-set.j2", header=header, commands="\n".join(lines),
                      raw_lines=_raw_lines(plan, switch))
    return [UnitFile(".nv-set.txt", "nvue-commands", commands)]


def _raw_lines(plan: FabricPlan, switch: Switch) -> tuple[str, ...]:
    return plan.services.raw(SPEC.key, switch.role.value) if plan.services else ()
