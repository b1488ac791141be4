"""An emulated NX-OS switch's counters, from the lab's counters model (lab/counters.py) through the wiring: the
NX-API bodies rocefab/platforms/nxos/counters.py reads (see there which shapes are documented and which are not).
Every cabled port is listed; the lossless class's queue carries the PFC, drops, ECN marks and watchdog events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocefab.lab.counters import PortCounters

if TYPE_CHECKING:
    from rocefab.lab.nxos.device import NxosDevice


def _ports(dev: NxosDevice) -> list[tuple[str, PortCounters]]:
    wiring = dev.wiring
    if wiring is None:
        return []
    ports = sorted({port for (device, port) in wiring.far if device == dev.name})
    return [(port, wiring.port_counters(dev.name, port)) for port in ports]


def _lossless(dev: NxosDevice) -> int:
    return dev.wiring.lossless_class if dev.wiring is not None else 3


def interface_counters(dev: NxosDevice) -> dict[str, Any]:
    rx, tx = [], []
    for port, c in _ports(dev):
        rx += [{"interface_rx": port, "eth_inbytes": c.in_packets * 4200, "eth_inucast": c.in_packets},
               {"interface_rx": port, "eth_inmcast": 0, "eth_inbcast": 0}]
        tx += [{"interface_tx": port, "eth_outbytes": c.out_packets * 4200, "eth_outucast": c.out_packets},
               {"interface_tx": port, "eth_outmcast": 0, "eth_outbcast": 0}]
    return {"TABLE_rx_counters": {"ROW_rx_counters": rx}, "TABLE_tx_counters": {"ROW_tx_counters": tx}}


def error_counters(dev: NxosDevice) -> dict[str, Any]:
    return {"TABLE_interface": {"ROW_interface": [
        {"interface": port, "eth_align_err": 0, "eth_fcs_err": c.in_errors, "eth_xmit_err": 0,
         "eth_rcv_err": c.in_errors, "eth_undersize": 0, "eth_outdisc": 0} for port, c in _ports(dev)]}}


def pfc(dev: NxosDevice) -> dict[str, Any]:
    return {"TABLE_pfc": {"ROW_pfc": [
        {"ifname": port, "adminmode": "On", "opermode": "On", "vlbmap": str(1 << _lossless(dev)),
         "rxppp": c.pfc_rx, "txppp": c.pfc_tx} for port, c in _ports(dev)]}}


def queuing(dev: NxosDevice) -> dict[str, Any]:
    lossless = _lossless(dev)
    rows = []
    for port, c in _ports(dev):
        groups = []
        for group in range(8):
            on = group == lossless
            groups.append({"eq-qosgrp": str(group), "TABLE_qosgrp_egress_stats_entry": {
                "ROW_qosgrp_egress_stats_entry": [
                    {"eq-stat-type": "Tx Pkts", "eq-uc-stat-value": str(c.out_packets if on else 0)},
                    {"eq-stat-type": "WRED/AFD & Tail Drop Pkts",
                     "eq-uc-stat-value": str(c.lossless_drops if on else 0)},
                    {"eq-stat-type": "ECN Marked Pkts", "eq-uc-stat-value": str(c.ecn_marked if on else 0)}]}})
        cos = [{"eq-pfc-cos": str(p), "eq-pfc-rx-ppp": str(c.pfc_rx if p == lossless else 0),
                "eq-pfc-tx-ppp": str(c.pfc_tx if p == lossless else 0)} for p in range(8)]
        rows.append({"if_name_str": port, "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": groups},
                     "TABLE_pfc_stats": {"ROW_pfc_stats": cos}})
    return {"TABLE_queuing_interface": {"ROW_queuing_interface": rows}}


def pfc_queue(dev: NxosDevice) -> dict[str, Any]:
    return {"TABLE_pfc_queue": {"ROW_pfc_queue": [
        {"ifname": port, "qos-group": str(_lossless(dev)), "shutdown-events": str(c.watchdog_storms),
         "restore-events": str(c.watchdog_storms)} for port, c in _ports(dev)]}}
