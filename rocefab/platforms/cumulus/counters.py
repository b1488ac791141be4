"""What verify reads of a Cumulus switch's counters, in the shared words of deploy/verify/observation.py.

Per port, NVUE's own show commands as JSON:
- `nv show interface PORT counters -o json`: `in-pkts`, `in-errors`, `out-pkts` (the interface statistics NVUE's
  monitoring guide lists);
- `nv show interface PORT counters qos -o json`: `pfc-stats` -> `switch-priority` -> P -> `rx-pause-frames` /
  `tx-pause-frames`, and `egress-queue-stats` -> `traffic-class` -> TC -> `tx-uc-buffer-discards` (drops) and
  `ecn-marked-packets`;
- `nv show interface PORT qos pfc-watchdog status -o json`: `switch-priority` -> P -> `deadlock-count`, the times
  the watchdog found the queue deadlocked and shut it.
Unconfirmed against a 5.14 switch: the nesting and key names of the last two (taken from the NVUE QoS counter
tables as the guide prints them in text, hyphenated as NVUE's JSON keys are); the first is as documented.
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


def _int(value: object) -> int:
    return int(str(value)) if str(value).isdigit() else 0


def _per(tree: Any, key: str, field: str) -> dict[int, int]:
    found = (tree or {}).get(key) or {} if isinstance(tree, dict) else {}
    return {int(k): _int(v.get(field)) for k, v in found.items() if str(k).isdigit() and isinstance(v, dict)}


def port(general: Mapping[str, Any], qos: Mapping[str, Any], watchdog: Mapping[str, Any]) -> PortCounters:
    pfc = qos.get("pfc-stats") or {}
    egress = qos.get("egress-queue-stats") or {}
    rx = _per(pfc, "switch-priority", "rx-pause-frames")
    tx = _per(pfc, "switch-priority", "tx-pause-frames")
    return PortCounters(_int(general.get("in-pkts")), _int(general.get("in-errors")), sum(rx.values()),
                        sum(tx.values()), _per(egress, "traffic-class", "tx-uc-buffer-discards"), rx, tx,
                        _per(watchdog, "switch-priority", "deadlock-count"),
                        _per(egress, "traffic-class", "ecn-marked-packets"), _int(general.get("out-pkts")))


def parse(shown: Mapping[str, tuple[str, str, str]]) -> dict[str, PortCounters]:
    """From the text of the three commands per port."""
    return {name: port(*(json.loads(text or "{}") for text in texts)) for name, texts in shown.items()}
