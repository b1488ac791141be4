"""Read every device of a plan over the inventory's sessions, at once up to a concurrency, and check each.

A device that cannot be read is a failed `read` row naming why — verify never passes a device it did not see.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from rocefab.deploy.inventory import Access
from rocefab.deploy.preload import preload
from rocefab.deploy.session import DeployError, DeviceSession, PendingCommit, describe
from rocefab.deploy.verify.checks import (
    Row,
    Verdict,
    counter_rows,
    driver_rows,
    firmware_rows,
    host_rows,
    switch_rows,
)
from rocefab.deploy.verify.ecmp import ecmp_rows, planned_routes
from rocefab.deploy.verify.host_counter_checks import host_counter_rows
from rocefab.deploy.verify.observation import (
    HostCounters,
    HostObservation,
    Observation,
    PortCounters,
    SwitchObservation,
)
from rocefab.renderers.plan import FabricPlan, Host, Switch

SessionFactory = Callable[[Access, str], DeviceSession]


@dataclass(frozen=True, slots=True)
class Reading:
    name: str
    observation: Observation | None
    error: str | None = None
    # two reads of a switch's counters `sample_s` apart, or why they could not be read
    counters: tuple[Mapping[str, PortCounters], Mapping[str, PortCounters]] | None = None
    counters_error: str | None = None
    sample_s: float = 0.0
    host_counters: tuple[HostCounters, HostCounters] | None = None  # a host's two reads
    routes_error: str | None = None  # a switch whose routes could not be read
    # a switch's commits awaiting their confirm (None: its platform has none, or they could not be read: see
    # `pending_error`)
    pending: tuple[PendingCommit, ...] | None = None
    pending_error: str | None = None


def _sample(session: DeviceSession, device: Switch | Host, sample_s: float) -> tuple[
        tuple[Mapping[str, PortCounters], Mapping[str, PortCounters]] | None, str | None]:
    if not sample_s or isinstance(device, Host):  # hosts' counters: not read yet
        return None, None
    try:
        first = session.counters(device)
        time.sleep(sample_s)
        return (first, session.counters(device)), None
    except DeployError as exc:
        return None, exc.message


def _sample_host(session: DeviceSession, host: Host, sample_s: float) -> tuple[
        tuple[HostCounters, HostCounters] | None, str | None]:
    if not sample_s:
        return None, None
    try:
        first = session.host_counters(host)
        time.sleep(sample_s)
        return (first, session.host_counters(host)), None
    except DeployError as exc:
        return None, exc.message


def _pending(session: DeviceSession) -> tuple[tuple[PendingCommit, ...] | None, str | None]:
    """A commit awaiting its confirm runs now but reverts by itself: what verify passes may vanish in seconds."""
    if not session.commit_confirm:
        return None, None
    try:
        return tuple(session.pending_commits()), None
    except DeployError as exc:
        return None, exc.message


def pending_rows(name: str, reading: Reading) -> list[Row]:
    check, expected = "commit-confirmed", "no commit awaiting its confirm"
    if reading.pending_error is not None:
        return [Row(name, "", check, expected, f"not read: {reading.pending_error}", Verdict.WARN)]
    if reading.pending is None:
        return []
    if not reading.pending:
        return [Row(name, "", check, expected, "none", Verdict.PASS)]
    return [Row(name, "", check, expected, p.describe(), Verdict.FAIL) for p in reading.pending]


def read_device(access: Access, device: Switch | Host, sessions: SessionFactory, run_id: str,
                sample_s: float = 0.0, prefixes: Sequence[str] = ()) -> Reading:
    """Read one device; a switch's routes to `prefixes` too (the ECMP check's)."""
    try:
        with sessions(access, run_id) as session:
            observation = session.observe(device)
            if isinstance(device, Host):
                host_counters, why = _sample_host(session, device, sample_s)
                return Reading(access.name, observation, None, None, why, sample_s, host_counters)
            routes_error = None
            if isinstance(observation, SwitchObservation) and prefixes:
                try:
                    observation = replace(observation, routes=session.routes(device, prefixes))
                except DeployError as exc:
                    routes_error = exc.message
            pending, pending_error = _pending(session)
            counters, why = _sample(session, device, sample_s)
            return Reading(access.name, observation, None, counters, why, sample_s, routes_error=routes_error,
                           pending=pending, pending_error=pending_error)
    except DeployError as exc:
        return Reading(access.name, None, exc.message)
    except Exception as exc:
        return Reading(access.name, None, describe(exc, access.timeout_s))


def read_fleet(plan: FabricPlan, accesses: Sequence[Access], sessions: SessionFactory, run_id: str,
               concurrency: int = 32, progress: Callable[[str], None] | None = None,
               sample_s: float = 0.0) -> list[Reading]:
    devices: dict[str, Switch | Host] = {sw.name: sw for sw in plan.switches}
    devices.update({h.name: h for h in plan.hosts})

    def one(access: Access) -> Reading:
        device = devices[access.name]
        prefixes = [r.prefix for r in planned_routes(plan, device)] if isinstance(device, Switch) else []
        reading = read_device(access, device, sessions, run_id, sample_s, prefixes)
        if progress is not None:
            progress(access.name)
        return reading

    preload(a.kind for a in accesses)  # before any worker thread imports a driver (deploy/preload.py)
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(accesses)))) as pool:
        return list(pool.map(one, accesses))


def check(plan: FabricPlan, readings: Sequence[Reading]) -> list[Row]:
    switches = {sw.name: sw for sw in plan.switches}
    hosts = {h.name: h for h in plan.hosts}
    rows: list[Row] = []
    observed_hosts: list[tuple[Host, HostObservation]] = []
    for reading in readings:
        obs = reading.observation
        if obs is None:
            rows.append(Row(reading.name, "", "read", "readable", reading.error or "no answer", Verdict.FAIL))
        elif isinstance(obs, SwitchObservation) and reading.name in switches:
            rows += switch_rows(plan, switches[reading.name], obs) + pending_rows(reading.name, reading)
            if obs.routes is not None:
                rows += ecmp_rows(plan, switches[reading.name], obs.routes)
            elif reading.routes_error is not None:
                rows.append(Row(reading.name, "", "ecmp", "routes read", reading.routes_error, Verdict.WARN))
            if reading.counters is not None:
                rows += counter_rows(plan, switches[reading.name], *reading.counters, reading.sample_s)
            elif reading.counters_error is not None:
                rows.append(Row(reading.name, "", "counters", f"read twice, {reading.sample_s:g} s apart",
                                reading.counters_error, Verdict.WARN))
        elif isinstance(obs, HostObservation) and reading.name in hosts:
            host = hosts[reading.name]
            rows += host_rows(plan, host, obs) + driver_rows(plan, host, obs)
            observed_hosts.append((host, obs))
            if reading.host_counters is not None:
                rows += host_counter_rows(plan, host, *reading.host_counters, reading.sample_s)
            elif reading.counters_error is not None:
                rows.append(Row(reading.name, "", "counters", f"read twice, {reading.sample_s:g} s apart",
                                reading.counters_error, Verdict.WARN))
    return rows + firmware_rows(observed_hosts)
