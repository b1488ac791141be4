"""Drain and undrain switches with their NOS's own maintenance mode, and read on the neighbours that the traffic
has moved (`rocefab drain` / `rocefab undrain`).

A drain is a merge of the platform's maintenance lines (`DeviceUnit.maintenance`), committed; then the switches
that hold BGP sessions to the drained ones are read until every route they are checked for (verify's planned
routes) leaves by the planned next hops minus the drained switches — what graceful shutdown or isolation leaves
them. A route whose every planned next hop is drained has no expectation (the drained switch is still the only
way there). An undrain removes the lines and waits until those routes are back to the plan. Nothing is slept on:
the neighbours are read until they agree or the time is up, and a switch that did not move its traffic in time is
left drained and reported so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rocefab.deploy.inventory import Access
from rocefab.deploy.session import DeployError, DeviceSession, describe
from rocefab.deploy.verify.checks import Row, Verdict
from rocefab.deploy.verify.ecmp import routes_through
from rocefab.deploy.verify.observation import NextHop, SwitchObservation
from rocefab.deploy.verify.run import read_device
from rocefab.platforms import unit
from rocefab.renderers.plan import FabricPlan, PortRole

SessionFactory = Callable[[Access, str], DeviceSession]


@dataclass(frozen=True, slots=True)
class Changed:
    name: str
    error: str | None  # None: committed


def unable(access: Access, drain: bool = True) -> str | None:
    """Why rocefab cannot drive this switch's maintenance mode over its access, or None when it can."""
    platform = unit(access.kind)
    mode = platform.maintenance
    if mode is None:
        return (f"rocefab cannot {'drain' if drain else 'undrain'} {platform.display_name} yet: {platform.key} has no "
                "maintenance mode in rocefab")
    if mode.transports and access.transport.value not in mode.transports:
        return f"{platform.display_name}: {mode.transports_note}"
    return None


def cannot_drain(plan: FabricPlan, access: Access) -> str | None:
    """Why rocefab cannot drain this switch with its NOS's maintenance mode, or None when it can."""
    why = unable(access)
    mode = unit(access.kind).maintenance
    if why is not None or mode is None or not mode.keeps_own_routes:
        return why
    switch = plan.switch(access.name)
    own = [p for p in switch.bgp.advertised if p != switch.loopback_ipv4]
    if not own:
        return None
    more = f" and {len(own) - 3} more" if len(own) > 3 else ""
    return f"{unit(access.kind).display_name}: {mode.keeps_own_routes} ({', '.join(own[:3])}{more})"


def set_maintenance(accesses: Sequence[Access], sessions: SessionFactory, run_id: str, drain: bool) -> list[Changed]:
    """Merge and commit each switch's maintenance lines (drain) or their removal (undrain), one after the other."""
    out = []
    for access in accesses:
        mode = unit(access.kind).maintenance
        why = unable(access, drain)
        if why is not None or mode is None:
            out.append(Changed(access.name, why))
            continue
        try:
            with sessions(access, run_id) as session:
                session.load(mode.drain if drain else mode.undrain, replace=False)
                if session.diff():
                    session.commit()
                    session.confirm()
                else:
                    session.discard()
            out.append(Changed(access.name, None))
        except DeployError as exc:
            out.append(Changed(access.name, exc.message))
        except Exception as exc:  # a device that went away: its state is read again on the next run
            out.append(Changed(access.name, describe(exc, access.timeout_s)))
    return out


def drained_now(accesses: Sequence[Access], sessions: SessionFactory, run_id: str,
                concurrency: int = 32) -> tuple[set[str], dict[str, str]]:
    """The switches in their maintenance mode (DeviceSession.in_maintenance), and those that could not be read (why)."""
    def one(access: Access) -> tuple[str, bool | None, str]:
        mode = unit(access.kind).maintenance
        if mode is None:
            return access.name, False, ""
        try:
            with sessions(access, run_id) as session:
                return access.name, session.in_maintenance(mode.drained), ""
        except DeployError as exc:
            return access.name, None, exc.message
        except Exception as exc:
            return access.name, None, describe(exc, access.timeout_s)

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(accesses)))) as pool:
        found = list(pool.map(one, accesses))
    return {n for n, drained, _ in found if drained}, {n: why for n, drained, why in found if drained is None}


def neighbours(plan: FabricPlan, drained: set[str]) -> list[str]:
    """The switches with a BGP session to a drained one (the drained ones left out), in plan order."""
    return [sw.name for sw in plan.switches if sw.name not in drained
            and any(n.peer_device in drained for n in sw.bgp.neighbors)]


def moved_rows(plan: FabricPlan, name: str, routes: Mapping[str, tuple[NextHop, ...]], watched: set[str],
               drained: set[str]) -> list[Row]:
    """One row per planned route of `name` that one of the `watched` switches (just drained or undrained) is a
    planned next hop of: the route must leave by its planned next hops that are not `drained` (the switches in
    maintenance now), no more and no fewer."""
    rows = []
    for route in routes_through(plan, plan.switch(name), watched):
        expected = [(port, peer) for port, peer in route.via if peer not in drained]
        if not expected:
            continue  # the drained switches are the only way there: they still carry it
        hops = routes.get(route.prefix, ())
        seen = {h.interface for h in hops if h.interface}
        ports = {port for port, _ in expected}
        left = sorted(seen - ports) if seen else []
        ok = len(hops) == len(expected) and not left and (not seen or ports <= seen)
        observed = f"{len(hops)} paths" + (f"; still by {', '.join(left)}" if left else "")
        rows.append(Row(name, route.prefix, "drained" if watched <= drained else "undrained",
                        f"{len(expected)} paths ({route.what})", observed, Verdict.PASS if ok else Verdict.FAIL))
    return rows


def wait_for_neighbours(plan: FabricPlan, accesses: Sequence[Access], sessions: SessionFactory, run_id: str,
                        watched: set[str], drained: set[str], timeout_s: float, poll_s: float = 2.0,
                        progress: Callable[[list[Row]], None] | None = None) -> list[Row]:
    """Read the neighbours of `watched` until their routes agree with `drained` (the switches in maintenance now)
    or `timeout_s` has passed; the last rows read."""
    names = set(neighbours(plan, watched))
    targets = [a for a in accesses if a.name in names]
    unreachable = sorted(names - {a.name for a in targets})
    if unreachable:  # a neighbour nobody can read proves nothing: said, never passed
        return [Row(name, "", "routes", "readable", "not in the inventory given", Verdict.FAIL) for name in unreachable]
    switches = {sw.name: sw for sw in plan.switches}
    prefixes = {a.name: [r.prefix for r in routes_through(plan, switches[a.name], watched)] for a in targets}
    deadline = time.monotonic() + timeout_s
    while True:
        rows: list[Row] = []
        with ThreadPoolExecutor(max_workers=max(1, min(32, len(targets)))) as pool:
            readings = list(pool.map(lambda a: read_device(a, switches[a.name], sessions, run_id, 0.0,
                                                           prefixes[a.name]), targets))
        for reading in readings:
            obs = reading.observation
            if isinstance(obs, SwitchObservation) and obs.routes is not None:
                rows += moved_rows(plan, reading.name, obs.routes, watched, drained)
            else:
                rows.append(Row(reading.name, "", "routes", "readable", reading.routes_error or reading.error
                                or "no routes read", Verdict.FAIL))
        if progress is not None:
            progress(rows)
        if not any(r.failed for r in rows) or time.monotonic() >= deadline:
            return rows
        time.sleep(poll_s)


def wait_until_quiet(plan: FabricPlan, accesses: Sequence[Access], sessions: SessionFactory, run_id: str,
                     drained: set[str], timeout_s: float, sample_s: float = 2.0) -> list[Row]:
    """Read the drained switches' counters twice `sample_s` apart until none paused or ECN-marked RoCE traffic in
    the window (a QoS change then finds no RoCE packet queued), or `timeout_s` has passed; the last rows read. A
    switch whose counters could not be read is a FAIL; counters it does not report, a WARN. A leaf is not waited
    for, only reported: a BGP drain moves what comes from the fabric, while its hosts keep sending on their bond
    member to it until the scheduler drains them."""
    from rocefab.deploy.verify.checks import lossless_class
    from rocefab.deploy.verify.counter_checks import quiet_row

    targets = [a for a in accesses if a.name in drained]
    switches = {sw.name: sw for sw in plan.switches}
    deadline = time.monotonic() + timeout_s
    while True:
        with ThreadPoolExecutor(max_workers=max(1, min(32, len(targets)))) as pool:
            readings = list(pool.map(lambda a: read_device(a, switches[a.name], sessions, run_id, sample_s), targets))
        rows = []
        for reading in readings:
            sw = switches[reading.name]
            if reading.counters is None:
                rows.append(Row(reading.name, "", "queue-quiet", "counters read twice", reading.counters_error
                                or reading.error or "no counters read", Verdict.FAIL))
                continue
            row = quiet_row(plan, sw, *reading.counters, lossless_class(plan, sw), sample_s)
            if row.failed and any(p.role is PortRole.HOST for p in sw.ports):
                row = Row(row.device, row.port, row.check, row.expected,
                          f"its hosts still send to it (drain them in the scheduler for a quiet queue): {row.observed}",
                          Verdict.WARN)
            rows.append(row)
        if not any(r.failed for r in rows) or time.monotonic() >= deadline:
            return rows
