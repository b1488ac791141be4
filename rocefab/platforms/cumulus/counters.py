"""What verify reads of a Cumulus switch's counters, in the shared words of deploy/verify/observation.py.

Per port, NVUE's own show commands as JSON:
- `nv show interface PORT counters -o json`: `in-pkts`, `in-errors`, `out-pkts` (the interface statistics NVUE's
  monitoring guide lists);
- `nv show interface PORT counters qos -o json`: `pfc-stats` -> `switch-priority` -> P -> `rx-pause-frames` /
  `tx-pause-frames`, and `egress-queue-stats` -> `traffic-class` -> TC -> `tx-uc-buffer-discards` (drops) and
  `ecn-marked-packets`;
- `nv show interface PORT qos pfc-watchdog status -o json`: `switch-priority` -> P -> `deadlock-count`, the times
  the watchdog found the queue deadlocked and shut it.
Unconfirmed: no `-o json` answer of these commands could be sourced (tests/fixtures/devices/cumulus/index.yaml
lists them as unsourced); the key names follow NVUE's counter tables as the user guide prints them in text,
hyphenated as NVUE's JSON keys are. So every value is None unless the answer has exactly this shape: a release
that names them otherwise reads "not reported", never 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rocefab.deploy.verify.observation import PortCounters


def commands(port: str) -> tuple[tuple[str, ...], ...]:
    return (("show", "interface", port, "counters", "-o", "json"),
            ("show", "interface", port, "counters", "qos", "-o", "json"),
            ("show", "interface", port, "qos", "pfc-watchdog", "status", "-o", "json"))


_GENERAL, _QOS = "nv show interface PORT counters", "nv show interface PORT counters qos"
SOURCES = {**dict.fromkeys(("in_packets", "in_errors", "out_packets"), _GENERAL),
           **dict.fromkeys(("pfc_rx", "pfc_tx", "pfc_rx_priority", "pfc_tx_priority", "queue_drops", "ecn_marked"),
                           _QOS),
           "watchdog_storms": "nv show interface PORT qos pfc-watchdog status"}


def _count(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _per(tree: Any, key: str, field: str) -> dict[int, int] | None:
    """Per priority or class, `field` of each entry under `key`; None without the table, and an entry whose field
    is missing or no count is left out (not reported)."""
    found = tree.get(key) if isinstance(tree, dict) else None
    if not isinstance(found, dict):
        return None
    return {int(k): n for k, v in found.items()
            if str(k).isdigit() and isinstance(v, dict) and (n := _count(v.get(field))) is not None}


def _total(per: dict[int, int] | None) -> int | None:
    return None if not per else sum(per.values())


def port(general: Mapping[str, Any], qos: Mapping[str, Any], watchdog: Mapping[str, Any]) -> PortCounters:
    pfc, egress = qos.get("pfc-stats"), qos.get("egress-queue-stats")
    rx = _per(pfc, "switch-priority", "rx-pause-frames")
    tx = _per(pfc, "switch-priority", "tx-pause-frames")
    return PortCounters(_count(general.get("in-pkts")), _count(general.get("in-errors")), _total(rx), _total(tx),
                        _per(egress, "traffic-class", "tx-uc-buffer-discards"), rx, tx,
                        _per(watchdog, "switch-priority", "deadlock-count"),
                        _per(egress, "traffic-class", "ecn-marked-packets"), _count(general.get("out-pkts")), SOURCES)


def _tree(text: str) -> dict[str, Any]:
    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def parse(shown: Mapping[str, tuple[str, str, str]]) -> dict[str, PortCounters]:
    """From the text of the three commands per port."""
    return {name: port(*(_tree(text) for text in texts)) for name, texts in shown.items()}
