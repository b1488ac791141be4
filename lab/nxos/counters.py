"""An emulated NX-OS switch's counters, from the lab's counters model (lab/counters.py) through the wiring, in the
shapes of the NX-API samples in tests/fixtures/devices/nxos/ (tests/lab/test_emulator_conformance.py holds them to
it). Every cabled port is listed; the lossless class's queue carries the PFC, drops, ECN marks and watchdog events.
The ECN row is the one newer releases print ("ECN" packets); 9.3's text shows none."""

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


def _module(table: str, row: str, rows: list[dict[str, Any]], **module: str) -> dict[str, Any]:
    return {"TABLE_module": {"ROW_module": {**module, table: {row: rows}}}}


def pfc(dev: NxosDevice) -> dict[str, Any]:
    return _module("TABLE_pfc_interface", "ROW_pfc_interface", [
        {"if_name_str": port, "admin": "On", "oper": "On", "rx-stats": str(c.pfc_rx), "tx-stats": str(c.pfc_tx)}
        for port, c in _ports(dev)])


def _stat(kind: str, units: str, value: int) -> dict[str, str]:
    return {"eq-stat-type": kind, "eq-stat-units": units, "eq-uc-stat-value": str(value), "eq-mc-stat-value": "0"}


def queuing(dev: NxosDevice) -> dict[str, Any]:
    lossless = _lossless(dev)
    rows: list[dict[str, Any]] = []
    for port, c in _ports(dev):
        groups = []
        for group in range(8):
            on = group == lossless
            sent, dropped = (c.out_packets, c.lossless_drops) if on else (0, 0)
            groups.append({"eq-qosgrp": str(group), "TABLE_qosgrp_egress_stats_entry": {
                "ROW_qosgrp_egress_stats_entry": [
                    _stat("Tx", "Pkts", sent), _stat("Tx", "Byts", sent * 4200),
                    _stat("WRED/AFD & Tail Drop", "Pkts", dropped),
                    _stat("WRED/AFD & Tail Drop", "Byts", dropped * 4200),
                    _stat("Q Depth", "Byts", 0), _stat("WD & Tail Drop", "Pkts", 0),
                    _stat("ECN", "Pkts", c.ecn_marked if on else 0)]}})
        rows.append({"dir": "Egress", "if_name_str": f"{port} [System]",
                     "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": groups}})
        cos = [{"cos": str(p), "pfc-qosgrp": str(lossless if p == lossless else 0),
                "tx-pause-state": "Inactive", "tx-pause-count": str(c.pfc_tx if p == lossless else 0),
                "rx-pause-state": "Inactive", "rx-pause-count": str(c.pfc_rx if p == lossless else 0)}
               for p in range(8)]
        rows.append({"dir": "Ingress", "if_name_str": port, "TABLE_ingress_stats_entry": {"ROW_ingress_stats_entry": [
            {"ip-stat-type": "Ingress Overflow Drop", "ip-stat-units": "Pkts", "ip-stat-value": "0"}]},
            "tx-ppp": str(c.pfc_tx), "rx-ppp": str(c.pfc_rx), "TABLE_pfc_stats": {"ROW_pfc_stats": cos}})
    return _module("TABLE_queuing_interface", "ROW_queuing_interface", rows, module_number="1")


_WATCHDOG_STATS = (("Shutdown", "q-shutdown"), ("Restored", "q-restored"), ("Total pkts drained", "q-pkt-drained"),
                   ("Total pkts dropped", "q-pkt-dropped"))


def pfc_queue(dev: NxosDevice) -> dict[str, Any]:
    """The PFC watchdog of every port: its lossless qos-group, shut down and restored once per storm event."""
    lossless = _lossless(dev)
    rows = []
    for port, c in _ports(dev):
        values = {"q-shutdown": c.watchdog_storms, "q-restored": c.watchdog_storms, "q-pkt-drained": 0,
                  "q-pkt-dropped": 0}
        stats = [{"q-stat-type": label, key: str(values[key])} for label, key in _WATCHDOG_STATS]
        rows.append({"if_name_str": f"{port} Interface PFC watchdog", "wd-status": "Enabled",
                     "disable-action": "No", "intf-multi": "0", "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": [
                         {"eq-qosgrp": f"QOS GROUP {lossless} ", "eq-qosgrp-state": "Active", "pfc-configured": "YES",
                          "pfc-cos": str(lossless), "TABLE_qosgrp_stats_entry": {"ROW_qosgrp_stats_entry": stats}}]}})
    return _module("TABLE_queuing_interface", "ROW_queuing_interface", rows, **{
        "glb-wd-status": "Enabled", "glb-wd-force-status": "Disabled", "glb-wd-timer": "100",
        "glb-wd-timer-thresh": "100", "glb-auto-restore": "10", "glb-fixed-restore": "0", "glb-int-intf-multi": "1"})
