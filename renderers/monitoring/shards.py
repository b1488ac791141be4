"""The plan's series split among Prometheus instances at scale: one shard per set of devices, each shard's
Prometheus scraping its own gnmic (its switches), its hosts' node_exporters and its own plan textfile.

Every alert rule joins series of one device only (on device and port, neighbor, queue or device), so a device's
streamed series and its plan series must only land in the same shard. A shard holds whole pods where it can (the
pod's spines, leaves and hosts together, in the plan's order; the devices of no pod, such as super-spines, after
them), and a pod too large for one shard is cut between devices. At most SERIES_PER_SHARD plan series a shard: a
98,304-GPU fabric's 1.7 million series in one textfile cost every scrape a 200 MB parse and one Prometheus all of
them. A fabric below the limit keeps one shard, written as before (monitoring/prometheus.yml and its neighbours).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from rocefab.renderers.monitoring.plan_series import host_series, switch_series
from rocefab.renderers.plan import FabricPlan, Host, Switch
from rocefab.renderers.record import record

SERIES_PER_SHARD = 200_000


@record
class Shard:
    switches: tuple[Switch, ...]
    hosts: tuple[Host, ...]
    series: int  # plan series of its devices


def shards(plan: FabricPlan, limit: int = SERIES_PER_SHARD) -> list[Shard]:
    """The shards of `plan`'s devices, each of at most `limit` plan series (a device alone above it is a shard of
    its own), whole pods kept together where they fit."""
    roles = {sw.name: sw.role for sw in plan.switches}
    devices: list[tuple[int | None, Switch | Host, int]] = [(sw.pod, sw, switch_series(plan, sw, roles))
                                                            for sw in plan.switches]
    devices += [(h.pod, h, host_series(h)) for h in plan.hosts]
    # pods in their order of appearance, the devices of no pod last
    order = {pod: i for i, pod in enumerate(dict.fromkeys(pod for pod, _, _ in devices if pod is not None))}
    devices.sort(key=lambda d: (d[0] is None, 0 if d[0] is None else order[d[0]]))
    out: list[list[tuple[Switch | Host, int]]] = [[]]
    size = 0  # of out[-1], kept as it grows: summed again per device, it was quadratic in a shard's devices
    for _, group in groupby(devices, key=lambda d: d[0]):
        members = [(device, n) for _, device, n in group]
        total = sum(n for _, n in members)
        if out[-1] and size + total > limit:
            out.append([])  # the whole group goes into a shard of its own rather than being cut
            size = 0
        for device, n in members:
            if out[-1] and size + n > limit:
                out.append([])
                size = 0
            out[-1].append((device, n))
            size += n
    return [Shard(tuple(d for d, _ in s if isinstance(d, Switch)), tuple(d for d, _ in s if isinstance(d, Host)),
                  _size(s)) for s in out if s]


def _size(shard: Sequence[tuple[Switch | Host, int]]) -> int:
    return sum(n for _, n in shard)
