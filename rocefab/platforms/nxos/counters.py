"""What verify reads of an NX-OS switch's counters, in the shared words of deploy/verify/observation.py.

Over NX-API (`| json`), every port at once:
- `show interface counters`: packets in and out (NX-OS prints two rows per interface in each table, unicast with
  bytes, then multicast and broadcast: `eth_inucast`, `eth_inmcast`, `eth_inbcast`, `eth_outucast`, ...);
- `show interface counters errors`: `eth_rcv_err` (else FCS plus alignment errors) as input errors;
- `show interface priority-flow-control`: `rxppp`/`txppp`, the port's PFC frames (all priorities);
- `show queuing interface`: per port and qos-group (`eq-qosgrp`) its egress statistics as `eq-stat-type` /
  `eq-uc-stat-value` rows ("WRED/AFD & Tail Drop Pkts", "ECN Marked Pkts"), and its PFC frames per CoS
  (`eq-pfc-cos`, `eq-pfc-rx-ppp`, `eq-pfc-tx-ppp`);
- `show queuing pfc-queue detail`: the PFC watchdog's shut-downs per port and qos-group (`shutdown-events`).
Unconfirmed against a switch: the key names of the last three (NX-API's TABLE_/ROW_ nesting as the other NX-OS
commands print it; the statistic names as `show queuing interface` prints them in text); the counters and
errors tables are the shapes NX-OS documents.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rocefab.deploy.verify.observation import PortCounters

COMMANDS = ("show interface counters | json", "show interface counters errors | json",
            "show interface priority-flow-control | json", "show queuing interface | json",
            "show queuing pfc-queue detail | json")
DROPS = "WRED/AFD & Tail Drop Pkts"
ECN = "ECN Marked Pkts"


def _rows(table: Any, row: str) -> list[dict[str, Any]]:
    """NX-API prints a one-row table as a dict and a longer one as a list."""
    found = (table or {}).get(row, []) if isinstance(table, dict) else []
    return [found] if isinstance(found, dict) else list(found)


def _int(value: object) -> int:
    return int(str(value)) if str(value).isdigit() else 0


def parse(answers: Sequence[dict[str, Any]], ports: Sequence[str]) -> dict[str, PortCounters]:
    counters, errors, pfc, queuing, watchdog = answers
    rx: dict[str, int] = {}
    tx: dict[str, int] = {}
    for row in _rows(counters.get("TABLE_rx_counters"), "ROW_rx_counters"):
        name = str(row.get("interface_rx", ""))
        rx[name] = rx.get(name, 0) + sum(_int(row.get(k)) for k in ("eth_inucast", "eth_inmcast", "eth_inbcast"))
    for row in _rows(counters.get("TABLE_tx_counters"), "ROW_tx_counters"):
        name = str(row.get("interface_tx", ""))
        tx[name] = tx.get(name, 0) + sum(_int(row.get(k)) for k in ("eth_outucast", "eth_outmcast", "eth_outbcast"))
    bad = {str(r.get("interface")): _int(r["eth_rcv_err"]) if "eth_rcv_err" in r
           else _int(r.get("eth_fcs_err")) + _int(r.get("eth_align_err"))
           for r in _rows(errors.get("TABLE_interface"), "ROW_interface")}
    frames = {str(r.get("ifname")): (_int(r.get("rxppp")), _int(r.get("txppp")))
              for r in _rows(pfc.get("TABLE_pfc"), "ROW_pfc")}
    queues: dict[str, dict[str, dict[int, int]]] = {}
    for port_row in _rows(queuing.get("TABLE_queuing_interface"), "ROW_queuing_interface"):
        name = str(port_row.get("if_name_str", ""))
        seen = queues.setdefault(name, {"drops": {}, "ecn": {}, "rx": {}, "tx": {}})
        for group in _rows(port_row.get("TABLE_qosgrp_egress_stats"), "ROW_qosgrp_egress_stats"):
            klass = _int(group.get("eq-qosgrp"))
            for stat in _rows(group.get("TABLE_qosgrp_egress_stats_entry"), "ROW_qosgrp_egress_stats_entry"):
                kind = {DROPS: "drops", ECN: "ecn"}.get(str(stat.get("eq-stat-type")))
                if kind:
                    seen[kind][klass] = _int(stat.get("eq-uc-stat-value"))
        for cos in _rows(port_row.get("TABLE_pfc_stats"), "ROW_pfc_stats"):
            seen["rx"][_int(cos.get("eq-pfc-cos"))] = _int(cos.get("eq-pfc-rx-ppp"))
            seen["tx"][_int(cos.get("eq-pfc-cos"))] = _int(cos.get("eq-pfc-tx-ppp"))
    storms: dict[str, dict[int, int]] = {}
    for row in _rows(watchdog.get("TABLE_pfc_queue"), "ROW_pfc_queue"):
        storms.setdefault(str(row.get("ifname")), {})[_int(row.get("qos-group"))] = _int(row.get("shutdown-events"))
    out = {}
    for port in ports:
        q = queues.get(port, {"drops": {}, "ecn": {}, "rx": {}, "tx": {}})
        rx_frames, tx_frames = frames.get(port, (0, 0))
        out[port] = PortCounters(rx.get(port, 0), bad.get(port, 0), rx_frames, tx_frames, q["drops"], q["rx"],
                                 q["tx"], storms.get(port, {}), q["ecn"], tx.get(port, 0))
    return out


def read(driver: Any, ports: Sequence[str]) -> dict[str, PortCounters]:
    """Through an open NAPALM `nxos` driver: one NX-API request."""
    answers = driver.cli(list(COMMANDS))
    return parse([json.loads(str(answers[c]) or "{}") for c in COMMANDS], ports)
