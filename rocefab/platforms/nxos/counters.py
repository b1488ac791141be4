"""What verify reads of an NX-OS switch's counters, in the shared words of deploy/verify/observation.py.

Over NX-API (`| json`), every port at once; the shapes are the samples in tests/fixtures/devices/nxos/ (each one's
source and evidence level in its index.yaml):
- `show interface counters`: packets in and out (two rows per interface in each table: unicast, then multicast
  and broadcast: `eth_inucast`, `eth_inmcast`, `eth_inbcast`, `eth_outucast`, ...);
- `show interface counters errors`: `eth_rcv_err` (in the first of three rows per port), else FCS plus alignment;
- `show interface priority-flow-control`: TABLE_module / ROW_module / TABLE_pfc_interface, a row per port with
  `if_name_str`, `rx-stats` and `tx-stats`, its PFC frames on every priority;
- `show queuing interface`: TABLE_module / ROW_module / TABLE_queuing_interface, a row per port and direction
  (`dir`; `if_name_str` names the port in its first word, "Ethernet1/51 [System]"): the egress row's
  qos-groups (`eq-qosgrp`, a number; the CPU and SPAN groups are phrases) each with statistics typed by
  `eq-stat-type` + `eq-stat-units` ("WRED/AFD & Tail Drop" or "Tail Drop" packets: drops; "ECN" packets: marks);
  the ingress row's per-CoS pause counts (`cos`, `rx-pause-count`, `tx-pause-count`);
- `show queuing pfc-queue detail`: the PFC watchdog per port (`if_name_str` a phrase starting with the port) and
  qos-group (`eq-qosgrp` a phrase, "QOS GROUP 3"), shut-downs in the statistic row carrying `q-shutdown`.
The last three are reconstructed from Cisco's 9.3 key grammar and public NX-API collectors, not captured (see the
index). A table, row or key not in the answer is None ("not reported"), never 0: some releases print no ECN row at
all, and a renamed key must not read as a quiet queue.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rocefab.deploy.verify.observation import PortCounters, count

COUNTERS, ERRORS, PFC, QUEUING, WATCHDOG = (
    "show interface counters", "show interface counters errors", "show interface priority-flow-control",
    "show queuing interface", "show queuing pfc-queue detail")
COMMANDS = tuple(f"{c} | json" for c in (COUNTERS, ERRORS, PFC, QUEUING, WATCHDOG))
SOURCES = {"in_packets": COUNTERS, "out_packets": COUNTERS, "in_errors": ERRORS, "pfc_rx": PFC, "pfc_tx": PFC,
           "queue_drops": QUEUING, "ecn_marked": QUEUING, "pfc_rx_priority": QUEUING, "pfc_tx_priority": QUEUING,
           "watchdog_storms": WATCHDOG}
DROPS = ("WRED/AFD & Tail Drop", "Tail Drop")  # packets the queue dropped (`WD & Tail Drop`: the watchdog's own)
ECN = "ECN"
PACKETS = "Pkts"
_RX = ("eth_inucast", "eth_inmcast", "eth_inbcast")
_TX = ("eth_outucast", "eth_outmcast", "eth_outbcast")


def _rows(table: Any, row: str) -> list[dict[str, Any]]:
    """NX-API prints a one-row table as a dict and a longer one as a list; anything else holds no rows."""
    found = table.get(row) if isinstance(table, dict) else None
    if isinstance(found, dict):
        return [found]
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _modules(answer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-module rows the queuing and PFC commands nest their tables in."""
    return _rows(answer.get("TABLE_module"), "ROW_module")



def _port(name: object) -> str:
    """The port an `if_name_str` names: its first word ("Ethernet1/51 [System]" -> "Ethernet1/51")."""
    words = str(name or "").split()
    return words[0] if words else ""


def _group(text: object) -> int | None:
    """A qos-group number from "3" or "QOS GROUP 3 "; the CPU and SPAN groups ("CONTROL QOS GROUP") are None."""
    m = re.fullmatch(r"\s*(?:QOS GROUP\s+)?(\d)\s*", str(text or ""))
    return int(m.group(1)) if m else None


def _sums(rows: Iterable[dict[str, Any]], name_key: str, keys: Sequence[str]) -> dict[str, int | None]:
    """Per port, the sum of `keys` over its rows (each key is in one of them); None where one is missing from
    every row, or is not a count."""
    found: dict[str, dict[str, int | None]] = {}
    for row in rows:
        seen = found.setdefault(str(row.get(name_key, "")), {})
        seen.update({key: count(row[key]) for key in keys if key in row})
    out: dict[str, int | None] = {}
    for name, seen in found.items():
        values = [seen.get(k) for k in keys]
        out[name] = sum(v for v in values if v is not None) if None not in values else None
    return out


def _errors(answer: Mapping[str, Any]) -> dict[str, int | None]:
    """Input errors per port: `eth_rcv_err` from whichever of the port's rows carries it."""
    rcv: dict[str, int | None] = {}
    fcs_align: dict[str, dict[str, int | None]] = {}
    for row in _rows(answer.get("TABLE_interface"), "ROW_interface"):
        name = str(row.get("interface", ""))
        if "eth_rcv_err" in row:
            rcv[name] = count(row["eth_rcv_err"])
        for key in ("eth_fcs_err", "eth_align_err"):
            if key in row:
                fcs_align.setdefault(name, {})[key] = count(row[key])
    out = dict(rcv)
    for name, parts in fcs_align.items():
        if name not in out and len(parts) == 2 and None not in parts.values():
            out[name] = sum(v or 0 for v in parts.values())
    return out


class _Queues:
    """What `show queuing interface` says of one port."""

    def __init__(self) -> None:
        self.drops: dict[int, int] | None = None
        self.ecn: dict[int, int] | None = None
        self.rx: dict[int, int] | None = None
        self.tx: dict[int, int] | None = None


def _queuing(answer: Mapping[str, Any]) -> dict[str, _Queues]:
    ports: dict[str, _Queues] = {}
    for module in _modules(answer):
        for row in _rows(module.get("TABLE_queuing_interface"), "ROW_queuing_interface"):
            q = ports.setdefault(_port(row.get("if_name_str")), _Queues())
            direction = str(row.get("dir", "")).lower()
            groups = _rows(row.get("TABLE_qosgrp_egress_stats"), "ROW_qosgrp_egress_stats")
            if direction == "egress" or groups:
                _egress(q, groups)
            cos_rows = _rows(row.get("TABLE_pfc_stats"), "ROW_pfc_stats")
            if cos_rows:
                q.rx, q.tx = q.rx or {}, q.tx or {}
                for cos_row in cos_rows:
                    cos = count(cos_row.get("cos"))
                    rx, tx = count(cos_row.get("rx-pause-count")), count(cos_row.get("tx-pause-count"))
                    if cos is not None and rx is not None:
                        q.rx[cos] = rx
                    if cos is not None and tx is not None:
                        q.tx[cos] = tx
    return ports


def _egress(q: _Queues, groups: list[dict[str, Any]]) -> None:
    for group_row in groups:
        group = _group(group_row.get("eq-qosgrp"))
        if group is None:
            continue
        for stat in _rows(group_row.get("TABLE_qosgrp_egress_stats_entry"), "ROW_qosgrp_egress_stats_entry"):
            if stat.get("eq-stat-units") != PACKETS:
                continue
            value = count(stat.get("eq-uc-stat-value"))
            kind = stat.get("eq-stat-type")
            if value is None:
                continue
            if kind in DROPS:
                q.drops = q.drops or {}
                q.drops[group] = q.drops.get(group, 0) + value
            elif kind == ECN:
                q.ecn = q.ecn or {}
                q.ecn[group] = value


def _watchdog(answer: Mapping[str, Any]) -> dict[str, dict[int, int]]:
    """Per port and qos-group, the times the watchdog shut the queue (the statistic row with `q-shutdown`)."""
    out: dict[str, dict[int, int]] = {}
    for module in _modules(answer):
        for row in _rows(module.get("TABLE_queuing_interface"), "ROW_queuing_interface"):
            groups = out.setdefault(_port(row.get("if_name_str")), {})
            for group_row in _rows(row.get("TABLE_qosgrp_stats"), "ROW_qosgrp_stats"):
                group = _group(group_row.get("eq-qosgrp"))
                stats = _rows(group_row.get("TABLE_qosgrp_stats_entry"), "ROW_qosgrp_stats_entry")
                shut = next((count(s["q-shutdown"]) for s in stats if "q-shutdown" in s), None)
                if group is not None and shut is not None:
                    groups[group] = shut
    return out


def parse(answers: Sequence[Mapping[str, Any]], ports: Sequence[str]) -> dict[str, PortCounters]:
    """From the JSON bodies of COMMANDS, in that order."""
    counters, errors, pfc, queuing, watchdog = answers
    rx = _sums(_rows(counters.get("TABLE_rx_counters"), "ROW_rx_counters"), "interface_rx", _RX)
    tx = _sums(_rows(counters.get("TABLE_tx_counters"), "ROW_tx_counters"), "interface_tx", _TX)
    bad = _errors(errors)
    frames = {_port(r.get("if_name_str")): (count(r.get("rx-stats")), count(r.get("tx-stats")))
              for m in _modules(pfc) for r in _rows(m.get("TABLE_pfc_interface"), "ROW_pfc_interface")}
    queues = _queuing(queuing)
    storms = _watchdog(watchdog)
    out = {}
    for port in ports:
        q = queues.get(port, _Queues())
        rx_frames, tx_frames = frames.get(port, (None, None))
        out[port] = PortCounters(rx.get(port), bad.get(port), rx_frames, tx_frames, q.drops, q.rx, q.tx,
                                 storms.get(port), q.ecn, tx.get(port), SOURCES)
    return out


def read(driver: Any, ports: Sequence[str]) -> dict[str, PortCounters]:
    """Through an open NAPALM `nxos` driver: one NX-API request."""
    answers = driver.cli(list(COMMANDS))
    return parse([_body(answers.get(c)) for c in COMMANDS], ports)


def _body(text: object) -> dict[str, Any]:
    """A command's JSON body; an empty or unparsable answer reads as an empty body (every field: not reported)."""
    try:
        found = json.loads(str(text or "") or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
