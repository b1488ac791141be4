"""What verify reads of an EOS switch's counters, in the shared words of deploy/verify/observation.py.

One eAPI request (JSON) for every port; the shapes are the samples in tests/fixtures/devices/eos/ (sources and
evidence levels in its index.yaml):
- `show interfaces`: per port `interfaceCounters` with `inUcastPkts`, `inMulticastPkts`, `inBroadcastPkts`,
  `totalInErrors` and the `out...Pkts` three (what NAPALM's get_interfaces_counters reads, -1 there when absent);
- `show priority-flow-control counters`: `interfaceCounters` -> PORT -> `rxFrames` / `txFrames`, PFC frames on
  every priority (the keys ANTA's PFC counter test reads);
- `show interfaces counters queue detail`: `egressQueueCounters` -> `interfaces` -> PORT -> `ucastQueues` ->
  `trafficClasses` -> "TC3" or a range "TC0-2" -> `dropPrecedences` -> "DP0" or "DP0-2" -> `droppedPackets`. A
  class's drops are the sum over its drop precedences; a range's count is every class in it (it cannot say which
  one dropped, so the lossless class is charged with all of them: never a drop hidden);
- `show qos interfaces ecn counters queue`: `intfQueueCounters` -> PORT -> `queueCounters` -> queue -> marks, or
  "-" where the queue does not mark (not reported, not 0). EOS sends queue q's traffic class q.
Per-priority PFC frames and PFC watchdog events are not read. No captured answer to `show priority-flow-control
counters detail` or `... counters watchdog` was found, only shapes reconstructed from another project's reader
(tests/fixtures/devices/eos/taac-fields), and by that reader's account EOS lists a port under `watchdog` only after
its first event: an absent port would have to read as no events, which nothing can tell from a port key EOS
renamed. So the pause check uses the totals, and the watchdog check says "not reported" rather than pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rocefab.deploy.verify.observation import PortCounters, count

INTERFACES, PFC, QUEUES, ECN = ("show interfaces", "show priority-flow-control counters",
                                "show interfaces counters queue detail", "show qos interfaces ecn counters queue")
COMMANDS = (INTERFACES, PFC, QUEUES, ECN)
SOURCES = {"in_packets": INTERFACES, "out_packets": INTERFACES, "in_errors": INTERFACES, "pfc_rx": PFC,
           "pfc_tx": PFC, "queue_drops": QUEUES, "ecn_marked": ECN,
           "pfc_rx_priority": "show priority-flow-control counters detail (not read: no captured answer)",
           "pfc_tx_priority": "show priority-flow-control counters detail (not read: no captured answer)",
           "watchdog_storms": "show priority-flow-control counters watchdog (not read: no captured answer)"}
_IN = ("inUcastPkts", "inMulticastPkts", "inBroadcastPkts")
_OUT = ("outUcastPkts", "outMulticastPkts", "outBroadcastPkts")



def _get(tree: Any, *path: str) -> Any:
    for key in path:
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def _total(counters: Any, keys: Sequence[str]) -> int | None:
    values = [count(_get(counters, k)) for k in keys]
    return None if None in values else sum(v for v in values if v is not None)


def _members(key: str, prefix: str) -> range | None:
    """"TC3" -> 3..3, "TC0-2" -> 0..2; another key -> None."""
    m = re.fullmatch(rf"{prefix}(\d+)(?:-(\d+))?", key)
    return range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1) if m else None


def _drops(classes: Any) -> dict[int, int] | None:
    """Dropped packets per traffic class, all drop precedences; a class whose count cannot be read is left out
    (not reported)."""
    if not isinstance(classes, dict):
        return None
    out: dict[int, int] = {}
    for key, entry in classes.items():
        members = _members(str(key), "TC")
        precedences = _get(entry, "dropPrecedences")
        if members is None or not isinstance(precedences, dict) or not precedences:
            continue
        counts = [count(_get(p, "droppedPackets")) for dp, p in precedences.items() if _members(str(dp), "DP")]
        if not counts or None in counts:
            continue
        for tc in members:
            out[tc] = out.get(tc, 0) + sum(c for c in counts if c is not None)
    return out


def _marks(queues: Any) -> dict[int, int] | None:
    if not isinstance(queues, dict):
        return None
    return {int(q): n for q, v in queues.items() if str(q).isdigit() and (n := count(v)) is not None}


def parse(answers: Sequence[Mapping[str, Any]], ports: Sequence[str]) -> dict[str, PortCounters]:
    """From the JSON answers to COMMANDS, in that order."""
    interfaces, pfc, queues, ecn = answers
    out = {}
    for port in ports:
        general = _get(interfaces, "interfaces", port, "interfaceCounters")
        frames = _get(pfc, "interfaceCounters", port)
        classes = _get(queues, "egressQueueCounters", "interfaces", port, "ucastQueues", "trafficClasses")
        out[port] = PortCounters(
            _total(general, _IN), count(_get(general, "totalInErrors")), count(_get(frames, "rxFrames")),
            count(_get(frames, "txFrames")), _drops(classes), None, None, None,
            _marks(_get(ecn, "intfQueueCounters", port, "queueCounters")), _total(general, _OUT), SOURCES)
    return out


def read(driver: Any, ports: Sequence[str]) -> dict[str, PortCounters]:
    """Through an open NAPALM `eos` driver: one eAPI request."""
    answers = driver.device.run_commands(list(COMMANDS), encoding="json")
    return parse([a if isinstance(a, dict) else {} for a in answers], ports)
