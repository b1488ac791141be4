"""What verify reads from a Cumulus switch, in the shared words of deploy/verify/observation.py.

Over the same SSH session as deploy, with NVUE's own show commands as JSON: `nv show interface` (per interface
`link.state`, `link.speed` such as "400G", `link.mtu`, and the LLDP neighbour the summary table prints as Remote
Host / Remote Port), `nv show vrf default router bgp neighbor` (per neighbour its `state`), the applied
revision (`nv config show`) for QoS, and `nv show mlag` (`peer-alive`, roles). Unconfirmed against a switch:
the JSON nesting of the LLDP columns (read here from `lldp.neighbor.<system name>.port.name`), the neighbour
`state` key and `nv show mlag`'s `peer-alive`; the rest mirrors the config tree.

QoS is read the way NVUE applies it: one `default-global` profile per feature for every port — trust `l3` is DSCP
trust; the DSCP map is Cumulus's built-in d >> 3 (SPEC.default_dscp_classes) under the profile's entries; PFC is
the PFC profile's switch priorities, or priority 3 when only `qos roce mode lossless` is set; strict scheduling and
ECN are per traffic class, mapped back to switch priorities through the egress queue map (identity by default).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from rocefab.deploy.verify.observation import (
    BgpSession,
    Ecn,
    Interface,
    Mlag,
    Neighbor,
    NextHop,
    PortQos,
    SwitchObservation,
    SwitchQos,
)
from rocefab.deploy.verify.observation import (
    asn as asn_number,
)
from rocefab.platforms.cumulus import SPEC
from rocefab.renderers.common import profile_classes

ROCE_LOSSLESS_PRIORITY = 3  # what `qos roce mode lossless` makes no-drop without a PFC profile of its own
Tree = dict[str, Any]


def _speed_gbps(text: object) -> float | None:
    word = str(text or "").strip().upper()
    if word.endswith("G") and word[:-1].replace(".", "", 1).isdigit():
        return float(word[:-1])
    if word.endswith("M") and word[:-1].isdigit():
        return float(word[:-1]) / 1000
    return None


def _state(value: object) -> str:
    if isinstance(value, dict):  # the config tree's form, {"up": {}}
        return next(iter(value), "")
    return str(value or "")


def interfaces(shown: Tree) -> dict[str, Interface]:
    out = {}
    for name, entry in shown.items():
        link = entry.get("link", {}) if isinstance(entry, dict) else {}
        up = _state(link.get("oper-status", link.get("state"))) == "up"
        mtu = link.get("mtu")
        out[name] = Interface(name, up, _speed_gbps(link.get("speed")) if up else None,
                              int(str(mtu)) if str(mtu).isdigit() else None)
    return out


def lldp(shown: Tree) -> dict[str, tuple[Neighbor, ...]]:
    out = {}
    for name, entry in shown.items():
        neighbors = ((entry.get("lldp") or {}).get("neighbor") or {}) if isinstance(entry, dict) else {}
        found = tuple(Neighbor(str(system).split(".")[0], str((n.get("port") or {}).get("name", "")))
                      for system, n in neighbors.items() if isinstance(n, dict))
        if found:
            out[name] = found
    return out


def bgp(shown: Tree) -> tuple[BgpSession, ...]:
    sessions = []
    for key, entry in shown.items():
        entry = entry if isinstance(entry, dict) else {}
        remote = entry.get("remote-as")
        unnumbered = entry.get("type") == "unnumbered" or str(key).startswith("swp")
        sessions.append(BgpSession(key if unnumbered else None, None if unnumbered else key,
                                   asn_number(remote),
                                   str(entry.get("state", "unknown"))))
    return tuple(sessions)


def enabled(tree: Tree) -> bool:
    """An NVUE feature switched on, in either release's words: `enable: on` to 5.14, `state: enabled` from 5.15
    (NVIDIA's 5.15 "New and Changed NVUE Commands" renames both leaves for `mlag` and `qos roce`).

    >>> enabled({"enable": "on"}), enabled({"state": "enabled"}), enabled({"state": "disabled"}), enabled({})
    (True, True, False, False)
    """
    return str(tree.get("enable", "")) == "on" or str(tree.get("state", "")) == "enabled"


def mlag(shown: Tree) -> Mlag | None:
    if not enabled(shown):
        return None
    alive = str(shown.get("peer-alive", "")).lower() == "true"
    return Mlag(alive, f"peer {'alive' if alive else 'not alive'}, role {shown.get('local-role', 'unknown')}, "
                       f"backup {'active' if str(shown.get('backup-active', '')).lower() == 'true' else 'inactive'}")


def _get(tree: Any, *path: str) -> Any:
    for key in path:
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree if tree is not None else {}


def qos(applied: Tree, default_dscp: Sequence[int], ports: Sequence[str]) -> SwitchQos:
    q = _get(applied, "qos")
    mapping = _get(q, "mapping", "default-global")
    dscp = list(default_dscp)
    for d, entry in _get(mapping, "dscp").items():
        if str(d).isdigit() and isinstance(entry, dict) and "switch-priority" in entry:
            dscp[int(d)] = int(entry["switch-priority"])
    trust = mapping.get("trust") == "l3"
    pfc_profile = _get(q, "pfc", "default-global")
    if pfc_profile:
        pfc = frozenset(int(p) for p in _get(pfc_profile, "switch-priority") if str(p).isdigit())
    else:
        roce = _get(q, "roce")
        lossless = enabled(roce) and roce.get("mode", "lossless") == "lossless"
        pfc = frozenset({ROCE_LOSSLESS_PRIORITY}) if lossless else frozenset()
    egress = {int(p): int(e.get("traffic-class", p)) for p, e in
              _get(q, "egress-queue-mapping", "default-global", "switch-priority").items() if str(p).isdigit()}
    # Where no entry says otherwise: `qos roce` maps priority 3 -> class 3, 6 -> 6, the rest -> 0 (Cumulus 5.14 RoCE
    # guide, "Default RoCE Configuration"); without it each priority keeps its own class.
    profile = SPEC.roce_profile_classes
    default = profile_classes(*profile, profile) if profile and enabled(_get(q, "roce")) else \
        {p: p for p in range(8)}

    def priorities_of(tc: int) -> set[int]:
        return {p for p in range(8) if egress.get(p, default[p]) == tc}

    strict: set[int] = set()
    for tc, entry in _get(q, "egress-scheduler", "default-global", "traffic-class").items():
        if isinstance(entry, dict) and entry.get("mode") == "strict":
            strict |= priorities_of(int(tc))
    ecn: dict[int, Ecn] = {}
    for tc, entry in _get(q, "congestion-control", "default-global", "traffic-class").items():
        if isinstance(entry, dict) and entry.get("ecn") == "enable":
            marking = Ecn(int(entry.get("min-threshold", 0)) // 1000, int(entry.get("max-threshold", 0)) // 1000,
                          "kbytes", int(entry.get("probability", 100)))
            for p in priorities_of(int(tc)):
                ecn[p] = marking
    interfaces_ = _get(applied, "interface")
    port_qos = {port: PortQos(trust, pfc, "pfc-watchdog" in _get(interfaces_, port, "qos")) for port in ports}
    return SwitchQos(tuple(dscp), frozenset(strict), ecn, port_qos)


def route_command(prefix: str) -> str:
    """FRR's own JSON through vtysh: NVUE's `nv show vrf default router rib ipv4 route PREFIX` points at a
    next-hop group (`nv show router nexthop`) rather than listing the next hops, and its per-route JSON is not in
    the NVUE reference; FRR's `show ip route PREFIX json` is FRR's documented shape. Unconfirmed on a switch:
    that the login user may run vtysh without sudo (members of the frrvty group may)."""
    return f"vtysh -c {shlex.quote(f'show ip route {prefix} json')}"


def route(shown: Tree, prefix: str) -> tuple[NextHop, ...]:
    """Next hops of the selected entry for `prefix` in FRR's `show ip route PREFIX json` ({prefix: [entry, ...]},
    each entry `selected`/`installed` with `nexthops`: `ip`, `interfaceName`, `active`, `fib`). Only active next
    hops installed in the FIB count."""
    for entry in shown.get(prefix) or []:
        if isinstance(entry, dict) and entry.get("selected"):
            return tuple(NextHop(h.get("ip") or None, h.get("interfaceName") or None)
                         for h in entry.get("nexthops", []) if isinstance(h, dict) and h.get("active")
                         and h.get("fib", True))
    return ()


def observe(shown_interfaces: str, shown_bgp: str, shown_mlag: str, applied: Tree, name: str,
            default_dscp: Sequence[int], ports: Sequence[str]) -> SwitchObservation:
    """From the text of the three show commands and the applied config tree."""
    shown = json.loads(shown_interfaces or "{}")
    neighbors = json.loads(shown_bgp or "{}")
    return SwitchObservation(name, interfaces(shown), lldp(shown), bgp(neighbors), qos(applied, default_dscp, ports),
                             mlag(json.loads(shown_mlag or "{}")))
