"""PFC headroom: the bytes a no-drop queue must still take after it has asked its neighbour to pause.

From the moment a port's no-drop queue crosses its pause threshold, data keeps arriving for

- the PFC frame's wait behind the frame the port is itself sending (one MTU at line rate),
- the round trip on the cable: the pause travels to the neighbour, the last bits sent before it stopped
  travel back (2 x length x propagation delay),
- the neighbour's response: MAC, PHY and FEC latency at both ends plus the time to act on the pause
  (a fixed allowance, below), and
- the frame the neighbour is in the middle of sending when it acts (one more MTU).

    headroom = rate x (2 x length x 5 ns/m + response) + 2 x MTU

This is the shape of the public calculators (IEEE 802.1Qbb annex N, SONiC's `buffer_headroom_mellanox.lua`).
The response allowance is calibrated on SONiC's published test vectors (sonic-swss#3235: Spectrum-3 400G 300 m
xoff 272,384 B, Spectrum-4 800G 300 m 474,112 B): with 2 us and MTU 9216 the formula gives 268,432 B (-1.5 %)
and 518,432 B (+9 %). ASICs also round to their buffer cell size, which this leaves to the NOS. Broadcom and
others recommend measured headroom watermarks over any calculator: an intent's measured value replaces it.
"""

from __future__ import annotations

import math
from functools import lru_cache

from rocefab.renderers.record import record

PROPAGATION_NS_PER_M = 5  # light in fibre (group index ~1.47) takes 4.9 ns/m; twinax copper is faster
RESPONSE_NS = 2000  # MAC/PHY/FEC latency at both ends and the neighbour's reaction time, see above


@record
class Headroom:
    """The arithmetic for one port class, kept whole so `rocefab plan` and plan/ can show it."""

    speed_gbps: int
    cable_m: int
    mtu_bytes: int
    propagation_ns: int  # the round trip: 2 x cable_m x PROPAGATION_NS_PER_M
    response_ns: int
    bytes: int
    measured: bool = False  # the intent's measured value, not the formula's

    @property
    def formula(self) -> str:
        """The arithmetic, without its result (`bytes`)."""
        if self.measured:
            return f"{self.bytes} B measured (from the intent)"
        return (f"{self.speed_gbps}G x ({self.propagation_ns} ns cable round trip + {self.response_ns} ns "
                f"response) + 2 x {self.mtu_bytes} B")


@lru_cache(maxsize=4096)  # the planner asks once per link end; fabrics have a handful of distinct answers
def headroom(speed_gbps: int, cable_m: int, mtu_bytes: int, measured_bytes: int | None = None) -> Headroom:
    """The headroom one port needs on its no-drop priority.

    >>> headroom(400, 300, 9216).bytes
    268432
    >>> headroom(400, 3, 9216).bytes
    119932
    """
    propagation_ns = 2 * cable_m * PROPAGATION_NS_PER_M
    if measured_bytes is not None:
        return Headroom(speed_gbps, cable_m, mtu_bytes, propagation_ns, RESPONSE_NS, measured_bytes, measured=True)
    in_flight = math.ceil(speed_gbps * (propagation_ns + RESPONSE_NS) / 8)  # Gb/s x ns = bits
    return Headroom(speed_gbps, cable_m, mtu_bytes, propagation_ns, RESPONSE_NS, in_flight + 2 * mtu_bytes)
