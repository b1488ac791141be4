"""What verify reads from an NX-OS switch, in the shared words of deploy/verify/observation.py.

Over the deploy session's NAPALM `nxos` (NX-API) driver: `get_interfaces`, `get_lldp_neighbors`, and through
NAPALM's `cli` the JSON of `show ip bgp summary vrf default` and `show vpc brief` (`| json`). QoS comes from the
running config, read the way NX-OS applies it: a port classifies by the `service-policy type qos input` it
carries (class-maps matching DSCP -> `set qos-group`, the rest to class-default's group); PFC pauses the
`pause pfc-cos` of the system network-qos policy on ports with `priority-flow-control mode on`; the system
queuing policy's `priority level` classes are strict and its `random-detect ... ecn` classes mark ECN. Classes are
qos-groups: the checks translate the fabric's CNP priority to the platform's strict group (SPEC.strict_qos_group).
"""

from __future__ import annotations

import json
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

BGP = "show ip bgp summary vrf default | json"
VPC = "show vpc brief | json"
_ECN = re.compile(r"random-detect minimum-threshold (\d+) (\w+) maximum-threshold (\d+) \w+"
                  r"(?: drop-probability (\d+))?.* ecn$")


def _numbers(text: str) -> set[int]:
    """'24,26-27 48' -> {24, 26, 27, 48}."""
    found: set[int] = set()
    for part in re.split(r"[ ,]+", text.strip()):
        if m := re.fullmatch(r"(\d+)-(\d+)", part):
            found |= set(range(int(m.group(1)), int(m.group(2)) + 1))
        elif part.isdigit():
            found.add(int(part))
    return found


def _rows(table: Any, row: str) -> list[dict[str, Any]]:
    """NX-API prints a one-row table as a dict and a longer one as a list."""
    found = (table or {}).get(row, [])
    return [found] if isinstance(found, dict) else list(found)


def bgp(summary: dict[str, Any]) -> tuple[BgpSession, ...]:
    sessions = []
    for vrf in _rows(summary.get("TABLE_vrf"), "ROW_vrf"):
        for af in _rows(vrf.get("TABLE_af"), "ROW_af"):
            for saf in _rows(af.get("TABLE_saf"), "ROW_saf"):
                for n in _rows(saf.get("TABLE_neighbor"), "ROW_neighbor"):
                    key, asn = str(n.get("neighborid", "")), str(n.get("neighboras", ""))
                    interface = key if key.startswith("Ethernet") else None
                    sessions.append(BgpSession(interface, None if interface else key,
                                               asn_number(asn), str(n.get("state", "unknown"))))
    return tuple(sessions)


def vpc(reported: dict[str, Any]) -> Mlag | None:
    domain = str(reported.get("vpc-domain-id", "not configured"))
    if domain == "not configured":
        return None
    status, keepalive = reported.get("vpc-peer-status"), reported.get("vpc-peer-keepalive-status")
    return Mlag(status == "peer-ok" and keepalive == "peer-alive",
                f"domain {domain}, peer {status}, keepalive {keepalive}")


def _policy(root: ConfigNode, prefix: str, name: str) -> ConfigNode | None:
    return root.child(f"{prefix} {name}")


def qos(running: str, ports: Sequence[str]) -> SwitchQos:
    root = parse_indented(running)
    classes = {n.line.split()[-1]: set().union(*(_numbers(c.line.removeprefix("match dscp "))
                                                  for c in n.children if c.line.startswith("match dscp ")))
               for n in root.starting("class-map type qos ")}
    system = root.child("system qos")
    system_lines = system.lines() if system else []
    network = next((line.split()[-1] for line in system_lines if line.startswith("service-policy type network-qos ")),
                   None)
    queuing = next((line.split()[-1] for line in system_lines
                    if line.startswith("service-policy type queuing output ")), None)
    pause: set[int] = set()
    if network and (nq := _policy(root, "policy-map type network-qos", network)):
        for klass in nq.children:
            for line in klass.lines():
                if line.startswith("pause pfc-cos "):
                    pause |= _numbers(line.removeprefix("pause pfc-cos "))
    strict: set[int] = set()
    ecn: dict[int, Ecn] = {}
    if queuing and (q := _policy(root, "policy-map type queuing", queuing)):
        for klass in q.children:
            group = re.search(r"q(\d)$", klass.line)
            number = int(group.group(1)) if group else 0
            for line in klass.lines():
                if line.startswith("priority level"):
                    strict.add(number)
                elif m := _ECN.match(line):
                    ecn[number] = Ecn(int(m.group(1)), int(m.group(3)), m.group(2), int(m.group(4) or 100))
    port_qos = {}
    dscp_class: list[int] | None = None
    watchdog_global = "priority-flow-control watch-dog-interval on" in root.lines()
    for port in ports:
        node = root.child(f"interface {port}")
        lines = node.lines() if node else []
        # A port-channel member runs with the port-channel's QoS too (NX-OS suspends a member that disagrees):
        # what either lacks, the member lacks.
        channel_group = next((line.split()[1] for line in lines if line.startswith("channel-group ")), None)
        channel = root.child(f"interface port-channel{channel_group}") if channel_group else None
        both = [lines] if channel is None else [lines, channel.lines()]
        policies = {next((line.split()[-1] for line in ls if line.startswith("service-policy type qos input ")), None)
                    for ls in both}
        policy_name = policies.pop() if len(policies) == 1 else None
        classify = _policy(root, "policy-map type qos", policy_name) if policy_name else None
        if classify is not None and dscp_class is None:
            dscp_class = _dscp_map(classify, classes)
        pfc_on = all("priority-flow-control mode on" in ls for ls in both)
        port_qos[port] = PortQos(classify is not None, frozenset(pause) if pfc_on else frozenset(),
                                 pfc_on and ("priority-flow-control watch-dog-interval on" in lines or watchdog_global))
    return SwitchQos(tuple(dscp_class or [0] * 64), frozenset(strict), ecn, port_qos)


def _dscp_map(policy: ConfigNode, classes: dict[str, set[int]]) -> list[int]:
    """The qos-group each DSCP gets: the first class of the policy that matches it, else class-default's."""
    mapping: list[int | None] = [None] * 64
    default = 0
    for klass in policy.children:
        name = klass.line.split()[-1]
        group = next((int(line.split()[-1]) for line in klass.lines() if line.startswith("set qos-group ")), None)
        if group is None:
            continue
        if name == "class-default":
            default = group
            continue
        for d in classes.get(name, set()):
            if d < 64 and mapping[d] is None:
                mapping[d] = group
    return [default if g is None else g for g in mapping]


def _long(name: str) -> str:
    """Eth1/61 -> Ethernet1/61, Po10 -> port-channel10, Vlan3967 as it is."""
    for short, long in (("Eth", "Ethernet"), ("Po", "port-channel"), ("Lo", "loopback")):
        if name.startswith(short) and not name.startswith(long) and name[len(short):][:1].isdigit():
            return long + name[len(short):]
    return name


def route(shown: dict[str, Any], prefix: str) -> tuple[NextHop, ...]:
    """Next hops of `prefix` in `show ip route PREFIX | json`: TABLE_vrf / TABLE_addrf / TABLE_prefix /
    TABLE_path, a ROW_path per next hop with `ipnexthop` and `ifname` (NX-API's documented nesting for this
    command; the short interface names NX-OS prints are made long). Only `ubest` paths count: a path NX-OS keeps
    but does not forward on is no ECMP member. No route: no ROW_prefix."""
    hops: list[NextHop] = []
    for vrf in _rows(shown.get("TABLE_vrf"), "ROW_vrf"):
        for af in _rows(vrf.get("TABLE_addrf"), "ROW_addrf"):
            for row in _rows(af.get("TABLE_prefix"), "ROW_prefix"):
                if row.get("ipprefix") != prefix:
                    continue
                for path in _rows(row.get("TABLE_path"), "ROW_path"):
                    if str(path.get("ubest", "true")).lower() == "true":
                        hops.append(NextHop(path.get("ipnexthop") or None,
                                            _long(str(path["ifname"])) if path.get("ifname") else None))
    return tuple(hops)


def show(driver: Any, commands: Sequence[str]) -> dict[str, Any]:
    """Each command's raw output, as napalm's `cli()` gives it, from one NX-API request: a JSON-RPC batch, which
    NX-API answers in order and stops at the first failing command (napalm raises its error, as `cli()` does).
    `cli()` posts every command on its own, each a new HTTPS connection and TLS handshake: 24 route lookups took
    ~24 times as long as one batch of them."""
    answers = driver.device.show_list(list(commands), raw_text=True)
    if len(answers) != len(commands):
        raise TypeError(f"NX-API answered {len(answers)} of {len(commands)} commands")
    return {c: a["result"] for c, a in zip(commands, answers, strict=True)}


def routes(driver: Any, prefixes: Sequence[str]) -> dict[str, tuple[NextHop, ...]]:
    """One NX-API request for every prefix."""
    if not prefixes:
        return {}
    commands = [f"show ip route {p} | json" for p in prefixes]
    answers = show(driver, commands)
    return {p: route(json.loads(str(answers[c]) or "{}"), p) for p, c in zip(prefixes, commands, strict=True)}


def observe(driver: Any, name: str, ports: Sequence[str]) -> SwitchObservation:
    """Read one switch through an open NAPALM `nxos` driver."""
    answers = show(driver, [BGP, VPC])
    summary, vpc_state = (json.loads(str(answers[c]) or "{}") for c in (BGP, VPC))
    running = str(driver.get_config(retrieve="running")["running"])
    return SwitchObservation(name, interfaces(driver.get_interfaces()), lldp(driver.get_lldp_neighbors()),
                             bgp(summary), qos(running, ports), vpc(vpc_state))
