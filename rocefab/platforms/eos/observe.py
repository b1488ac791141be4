"""What verify reads from an EOS switch, in the shared words of deploy/verify/observation.py.

Over the same NAPALM `eos` session as deploy: `get_interfaces` (state, speed, MTU), `get_lldp_neighbors`, and
through NAPALM's eAPI connection `show ip bgp summary vrf all` and `show mlag` as JSON (NAPALM's
`get_bgp_neighbors` cannot parse an unnumbered session's `fe80::…%Et1` key). QoS comes from the running config,
read the way EOS applies it: a port's own lines on top of the `qos profile` its `service-profile` names, the
global `qos map dscp` lines on top of EOS's built-in DSCP map (rocefab/platforms/eos SPEC.default_dscp_classes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rocefab.deploy.verify.napalm_getters import interfaces, lldp
from rocefab.deploy.verify.observation import (
    BgpSession,
    Ecn,
    Mlag,
    NextHop,
    PortQos,
    SwitchObservation,
    SwitchQos,
)
from rocefab.deploy.verify.observation import (
    asn as asn_number,
)
from rocefab.renderers.configtext import ConfigNode, parse_indented

COMMANDS = ("show ip bgp summary vrf all", "show mlag")
_ABBREVIATIONS = (("Et", "Ethernet"), ("Po", "Port-Channel"), ("Vl", "Vlan"), ("Lo", "Loopback"))
_ECN = re.compile(r"random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) \w+"
                  r"(?: max-mark-probability (\d+))?")


def long_name(short: str) -> str:
    """Et61/1 -> Ethernet61/1; a full name stays as it is."""
    for abbr, long in _ABBREVIATIONS:
        if short.startswith(abbr) and not short.startswith(long) and short[len(abbr):][:1].isdigit():
            return long + short[len(abbr):]
    return short


def bgp(summary: dict[str, Any]) -> tuple[BgpSession, ...]:
    sessions = []
    for key, peer in summary.get("vrfs", {}).get("default", {}).get("peers", {}).items():
        address, _, interface = str(key).partition("%")
        asn = str(peer.get("asn", ""))
        sessions.append(BgpSession(long_name(interface) if interface else None, None if interface else address,
                                   asn_number(asn), str(peer.get("peerState", "unknown"))))
    return tuple(sessions)


def mlag(reported: dict[str, Any]) -> Mlag | None:
    state = str(reported.get("state", "disabled"))
    if state == "disabled":
        return None
    words = (f"state {state}, negotiation {reported.get('negStatus')}, peer-link {reported.get('peerLinkStatus')}, "
             f"local interface {reported.get('localIntfStatus')}")
    healthy = (state == "active" and reported.get("negStatus") == "connected"
               and reported.get("peerLinkStatus") == "up" and reported.get("localIntfStatus") == "up")
    return Mlag(healthy, words)


def _profile_lines(node: ConfigNode) -> list[str]:
    return node.lines()


def _port_qos(lines: Sequence[str], base: PortQos) -> PortQos:
    trust, pfc_on, watchdog = base.trust_dscp, bool(base.pfc_priorities) or "priority-flow-control on" in lines, \
        base.watchdog
    priorities = set(base.pfc_priorities)
    for line in lines:
        if line == "qos trust dscp":
            trust = True
        elif line.startswith("qos trust ") or line == "no qos trust":
            trust = False
        elif line == "no priority-flow-control" or line == "no priority-flow-control on":
            pfc_on = False
        elif m := re.fullmatch(r"priority-flow-control priority (\d) no-drop", line):
            priorities.add(int(m.group(1)))
        elif m := re.fullmatch(r"no priority-flow-control priority (\d)(?: no-drop)?", line):
            priorities.discard(int(m.group(1)))
        elif line == "priority-flow-control pause watchdog":
            watchdog = True
    return PortQos(trust, frozenset(priorities) if pfc_on else frozenset(), watchdog and pfc_on)


def qos(running: str, default_dscp: Sequence[int], ports: Sequence[str]) -> SwitchQos:
    root = parse_indented(running)
    profiles = {node.line.split()[2]: node for node in root.starting("qos profile ")}
    dscp = list(default_dscp)
    for node in root.starting("qos map dscp "):
        if m := re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", node.line):
            for d in m.group(1).split():
                dscp[int(d)] = int(m.group(2))
    strict: set[int] = set()
    ecn: dict[int, Ecn] = {}
    # The queues' scheduling and ECN live in the profiles; a queue counts once any applied profile sets it.
    applied: set[str] = set()
    port_qos = {}
    interfaces_ = {node.line.split()[1]: node for node in root.starting("interface ")}
    for port in ports:
        found = interfaces_.get(port)
        lines = found.lines() if found else []
        profile_name = next((line.split()[1] for line in lines if line.startswith("service-profile ")), None)
        profile = profiles.get(profile_name or "")
        base = _port_qos(_profile_lines(profile), PortQos(False, frozenset(), False)) if profile \
            else PortQos(False, frozenset(), False)
        if profile is not None and profile_name is not None:
            applied.add(profile_name)
        port_qos[port] = _port_qos(lines, base)
    for name in sorted(applied):
        for queue in profiles[name].starting("uc-tx-queue "):
            number = int(queue.line.split()[1])
            if "priority strict" in queue.lines():
                strict.add(number)
            for line in queue.lines():
                if m := _ECN.match(line):
                    ecn[number] = Ecn(int(m.group(1)), int(m.group(3)), m.group(2), int(m.group(4) or 100))
    return SwitchQos(tuple(dscp), frozenset(strict), ecn, port_qos)


def route(shown: dict[str, Any], prefix: str) -> tuple[NextHop, ...]:
    """Next hops of `prefix` in eAPI's `show ip route PREFIX` (vrfs -> default -> routes -> PREFIX -> vias, each
    `nexthopAddr` and `interface`: the keys ANTA's routing-table tests read). A connected route's via has no
    address; no route, no entry."""
    found = shown.get("vrfs", {}).get("default", {}).get("routes", {}).get(prefix)
    if not isinstance(found, dict):
        return ()
    return tuple(NextHop(v.get("nexthopAddr") or None, long_name(str(v["interface"])) if v.get("interface") else None)
                 for v in found.get("vias", []) if isinstance(v, dict))


def routes(driver: Any, prefixes: Sequence[str]) -> dict[str, tuple[NextHop, ...]]:
    """One eAPI request for every prefix."""
    if not prefixes:
        return {}
    answers = driver.device.run_commands([f"show ip route {p}" for p in prefixes], encoding="json")
    return {p: route(a, p) for p, a in zip(prefixes, answers, strict=True)}


def observe(driver: Any, name: str, default_dscp: Sequence[int], ports: Sequence[str]) -> SwitchObservation:
    """Read one switch through an open NAPALM `eos` driver."""
    summary, mlag_state = driver.device.run_commands(list(COMMANDS), encoding="json")
    running = str(driver.get_config(retrieve="running")["running"])
    return SwitchObservation(name, interfaces(driver.get_interfaces()), lldp(driver.get_lldp_neighbors()),
                             bgp(summary), qos(running, default_dscp, ports), mlag(mlag_state))
