"""Read every device of a plan over the inventory's sessions, at once up to a concurrency, and check each.

A device that cannot be read is a failed `read` row naming why — verify never passes a device it did not see.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rocefab.deploy.inventory import Access
from rocefab.deploy.session import DeployError, DeviceSession, describe
from rocefab.deploy.verify.checks import Row, Verdict, host_rows, switch_rows
from rocefab.deploy.verify.observation import HostObservation, Observation, SwitchObservation
from rocefab.renderers.plan import FabricPlan, Host, Switch

SessionFactory = Callable[[Access, str], DeviceSession]


@dataclass(frozen=True, slots=True)
class Reading:
    name: str
    observation: Observation | None
    error: str | None = None


def read_device(access: Access, device: Switch | Host, sessions: SessionFactory, run_id: str) -> Reading:
    try:
        with sessions(access, run_id) as session:
            return Reading(access.name, session.observe(device))
    except DeployError as exc:
        return Reading(access.name, None, exc.message)
    except Exception as exc:
        return Reading(access.name, None, describe(exc, access.timeout_s))


def read_fleet(plan: FabricPlan, accesses: Sequence[Access], sessions: SessionFactory, run_id: str,
               concurrency: int = 32, progress: Callable[[str], None] | None = None) -> list[Reading]:
    devices: dict[str, Switch | Host] = {sw.name: sw for sw in plan.switches}
    devices.update({h.name: h for h in plan.hosts})

    def one(access: Access) -> Reading:
        reading = read_device(access, devices[access.name], sessions, run_id)
        if progress is not None:
            progress(access.name)
        return reading

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(accesses)))) as pool:
        return list(pool.map(one, accesses))


def check(plan: FabricPlan, readings: Sequence[Reading]) -> list[Row]:
    switches = {sw.name: sw for sw in plan.switches}
    hosts = {h.name: h for h in plan.hosts}
    rows: list[Row] = []
    for reading in readings:
        obs = reading.observation
        if obs is None:
            rows.append(Row(reading.name, "", "read", "readable", reading.error or "no answer", Verdict.FAIL))
        elif isinstance(obs, SwitchObservation) and reading.name in switches:
            rows += switch_rows(plan, switches[reading.name], obs)
        elif isinstance(obs, HostObservation) and reading.name in hosts:
            rows += host_rows(plan, hosts[reading.name], obs)
    return rows
