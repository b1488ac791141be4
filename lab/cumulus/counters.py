"""An emulated Cumulus switch's counters, from the lab's counters model (lab/counters.py) through the wiring: the
NVUE JSON rocefab/platforms/cumulus/counters.py reads (see there which shapes are documented and which are not)."""

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
    pfc = {str(p): {"rx-pause-frames": c.pfc_rx if c and p == lossless else 0,
                    "tx-pause-frames": c.pfc_tx if c and p == lossless else 0,
                    "rx-pause-duration": 0, "tx-pause-duration": 0} for p in range(8)}
    egress = {str(tc): {"tx-frames": c.out_packets if c and tc == lossless else 0,
                        "tx-uc-buffer-discards": c.lossless_drops if c and tc == lossless else 0,
                        "ecn-marked-packets": c.ecn_marked if c and tc == lossless else 0} for tc in range(8)}
    return {"pfc-stats": {"switch-priority": pfc}, "egress-queue-stats": {"traffic-class": egress}}


def watchdog(dev: CumulusDevice, port: str) -> dict[str, Any]:
    c, lossless = _read(dev, port), _lossless(dev)
    return {"switch-priority": {str(lossless): {"deadlock-count": c.watchdog_storms if c else 0,
                                                "status": "deadlock" if c and c.watchdog_storms else "ok"}}}
