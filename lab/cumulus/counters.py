"""An emulated Cumulus switch's counters, from the lab's counters model (lab/counters.py) through the wiring, in the
shapes of the Cumulus corpus (tests/fixtures/devices/cumulus: `link stats` as NVIDIA prints it, the QoS and
watchdog views as reconstructed there from NVIDIA's tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocefab.lab.cumulus.nvue import CumulusDevice


def _read(dev: CumulusDevice, port: str) -> Any:
    wiring = dev.wiring
    if wiring is None or wiring.peer(dev.name, port) is None:
        return None
    return wiring.port_counters(dev.name, port)


def _lossless(dev: CumulusDevice) -> int:
    return dev.wiring.lossless_class if dev.wiring is not None else 3


def general(dev: CumulusDevice, port: str) -> dict[str, Any]:
    c = _read(dev, port)
    packets_in, packets_out, errors = (c.in_packets, c.out_packets, c.in_errors) if c else (0, 0, 0)
    return {"carrier-transitions": 1, "in-bytes": packets_in * 4200, "in-drops": 0, "in-errors": errors,
            "in-pkts": packets_in, "out-bytes": packets_out * 4200, "out-drops": 0, "out-errors": 0,
            "out-pkts": packets_out}


def qos(dev: CumulusDevice, port: str) -> dict[str, Any]:
    c, lossless = _read(dev, port), _lossless(dev)

    def on(value: int) -> bool:
        return value == lossless

    pfc = {str(p): {"rx-pause-duration": 0, "rx-pause-frames": c.pfc_rx if c and on(p) else 0,
                    "tx-pause-duration": 0, "tx-pause-frames": c.pfc_tx if c and on(p) else 0} for p in range(8)}
    egress = {str(tc): {"ecn-marked-frames": c.ecn_marked if c and on(tc) else 0, "tx-bytes": 0,
                        "tx-frames": c.out_packets if c and on(tc) else 0,
                        "tx-uc-buffer-discards": c.lossless_drops if c and on(tc) else 0, "wred-discards": 0}
              for tc in range(8)}
    ingress = {str(pg): {"rx-buffer-discards": 0, "rx-frames": 0, "rx-shared-buffer-discards": 0} for pg in range(8)}
    marked = c.ecn_marked if c else 0
    paused = (c.pfc_rx, c.pfc_tx) if c else (0, 0)
    return {"egress-queue-stats": egress, "ingress-buffer-stats": ingress, "pfc-stats": pfc,
            "port-stats": {"rx-stats": {"pause-frames": paused[0]},
                           "tx-stats": {"ecn-marked-packets": marked, "mc-buffer-discards": 0,
                                        "pause-frames": paused[1]}}}


def watchdog(dev: CumulusDevice, port: str) -> dict[str, Any]:
    c, lossless = _read(dev, port), _lossless(dev)
    storms = c.watchdog_storms if c else 0
    return {str(tc): {"deadlock-count": storms if tc == lossless else 0,
                      "status": "DEADLOCK" if tc == lossless and storms else "OK"} for tc in range(8)}
