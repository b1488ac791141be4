"""What verify reads of a Cumulus switch's counters, in the shared words of deploy/verify/observation.py.

Per port, NVUE's own show commands as JSON (their evidence: tests/fixtures/devices/cumulus/index.yaml):
- `nv show interface PORT link stats -o json`: `in-pkts`, `in-errors`, `out-pkts` (NVIDIA prints this answer);
- `nv show interface PORT counters qos -o json` (5.5 and later): `pfc-stats` -> switch priority -> `rx-pause-frames`
  / `tx-pause-frames`, and `egress-queue-stats` -> traffic class -> `tx-uc-buffer-discards` (frames, whatever unit
  the text view prints) and `ecn-marked-frames`. Reconstructed from NVIDIA's text tables and a collector run on a
  real switch; NVIDIA's own examples count ECN marks per port only, and a per-port count cannot say how many
  were RoCE's, so a release without the per-class key reads ECN marking as not reported;
- `nv show interface PORT qos pfc-watchdog status -o json` (5.6 and later): traffic class -> `deadlock-count`,
  the times the watchdog found that queue deadlocked.
Every value is None unless the answer has exactly this shape, and a command the switch refuses (a release without
it) leaves its fields None: not reported, never 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rocefab.deploy.verify.observation import PortCounters, count


def commands(port: str) -> tuple[tuple[str, ...], ...]:
    return (("show", "interface", port, "link", "stats", "-o", "json"),
            ("show", "interface", port, "counters", "qos", "-o", "json"),
            ("show", "interface", port, "qos", "pfc-watchdog", "status", "-o", "json"))


_GENERAL, _QOS = "nv show interface PORT link stats", "nv show interface PORT counters qos"
SOURCES = {**dict.fromkeys(("in_packets", "in_errors", "out_packets"), _GENERAL),
           **dict.fromkeys(("pfc_rx", "pfc_tx", "pfc_rx_priority", "pfc_tx_priority", "queue_drops", "ecn_marked"),
                           _QOS),
           "watchdog_storms": "nv show interface PORT qos pfc-watchdog status"}



def _per(table: Any, field: str) -> dict[int, int] | None:
    """Per priority or class (the table's keys), `field` of each entry; None without the table or when no entry
    has the field, and an entry whose field is missing or no count is left out (not reported)."""
    if not isinstance(table, dict):
        return None
    found = {int(k): n for k, v in table.items()
             if str(k).isdigit() and isinstance(v, dict) and (n := count(v.get(field))) is not None}
    return found or None


def _total(per: dict[int, int] | None) -> int | None:
    return None if not per else sum(per.values())


def port(general: Mapping[str, Any], qos: Mapping[str, Any], watchdog: Mapping[str, Any]) -> PortCounters:
    pfc, egress = qos.get("pfc-stats"), qos.get("egress-queue-stats")
    rx, tx = _per(pfc, "rx-pause-frames"), _per(pfc, "tx-pause-frames")
    return PortCounters(count(general.get("in-pkts")), count(general.get("in-errors")), _total(rx), _total(tx),
                        _per(egress, "tx-uc-buffer-discards"), rx, tx, _per(watchdog, "deadlock-count"),
                        _per(egress, "ecn-marked-frames"), count(general.get("out-pkts")), SOURCES)


def _tree(text: str) -> dict[str, Any]:
    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def parse(shown: Mapping[str, tuple[str, str, str]]) -> dict[str, PortCounters]:
    """From the text of the three commands per port."""
    return {name: port(*(_tree(text) for text in texts)) for name, texts in shown.items()}
