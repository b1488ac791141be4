"""The verify gate of `apply`: after a device commits, while its revert window is open, read it and check it
against the plan; what fails makes the wave roll back.

Only what the device can already show counts. Everything the device decides alone (MTU, trust, PFC, watchdog, DSCP
map, CNP queue, ECN) is checked now; a check across a link (link, LLDP, BGP, MLAG, a host's RDMA device) only when
the far end is part of this run and has had its turn (an earlier wave, or this one). A leaf's BGP session to a
spine of a later wave waits for that wave; one to a device this run does not touch is not the run's to judge
(a fabric brought up a few devices at a time would otherwise never pass) — `rocefab verify` judges it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from rocefab.deploy.session import DeviceSession
from rocefab.deploy.verify.checks import Row, host_rows, switch_rows
from rocefab.deploy.verify.observation import HostObservation, SwitchObservation
from rocefab.renderers.plan import FabricPlan

# checks that look across a link: they wait until the far end has had its turn
ACROSS = frozenset({"link", "speed", "lldp", "bgp", "mlag", "vpc", "rdma", "gid", "bond"})
Gate = Callable[[str, DeviceSession, Collection[str]], list[str]]  # (device, its session, the settled devices)


def _far_ends(plan: FabricPlan, name: str) -> dict[str, str]:
    """Port (or BGP key) -> the device at its far end."""
    switches = {sw.name: sw for sw in plan.switches}
    if name in switches:
        sw = switches[name]
        far = {p.name: p.peer.device for p in sw.ports}
        far.update({(n.interface or n.address or ""): n.peer_device for n in sw.bgp.neighbors})
        for lag in sw.lags:
            members = [p for p in sw.ports if p.name in lag.members]
            if members:
                far[lag.name] = members[0].peer.device
        if sw.mlag is not None:
            far[""] = sw.mlag.peer
        return far
    host = next(h for h in plan.hosts if h.name == name)
    far = {m.netdev: m.switch for b in host.bonds for m in b.members}
    far.update({b.name: b.members[0].switch for b in host.bonds})
    far.update({b.rdma_device: b.members[0].switch for b in host.bonds})
    far.update({n.netdev: n.switch for n in host.nics})
    far.update({n.rdma_device: n.switch for n in host.nics})
    return far


def failures(plan: FabricPlan, name: str, rows: list[Row], settled: Collection[str]) -> list[str]:
    far = _far_ends(plan, name)
    waiting = {port for port, device in far.items() if device not in settled}
    return [f"{r.check} {r.port}: expected {r.expected}, observed {r.observed}".replace("  ", " ")
            for r in rows if r.failed and not (r.check in ACROSS and r.port in waiting)]


def plan_gate(plan: FabricPlan) -> Gate:
    switches = {sw.name: sw for sw in plan.switches}
    hosts = {h.name: h for h in plan.hosts}

    def gate(name: str, session: DeviceSession, settled: Collection[str]) -> list[str]:
        device = switches.get(name) or hosts.get(name)
        if device is None:
            return []
        observed = session.observe(device)
        if isinstance(observed, SwitchObservation) and name in switches:
            rows = switch_rows(plan, switches[name], observed)
        elif isinstance(observed, HostObservation) and name in hosts:
            rows = host_rows(plan, hosts[name], observed)
        else:
            return [f"verify read a {type(observed).__name__} from {name}"]
        return failures(plan, name, rows, settled)

    return gate
