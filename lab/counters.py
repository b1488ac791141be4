"""Port counters of the lab that advance with time, and the faults that make them misbehave.

Every live port carries traffic (packets in both directions), a little PFC now and then and some ECN marks, no
drops on the lossless queue and no input errors — a healthy lossless fabric under load. The faults add what a
sick one shows: a pause storm (a stuck receiver pausing its link partner without end), drops on the lossless
queue (headroom too small for the cable), input errors (a dirty connector or a failing optic).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

End = tuple[str, str]

PACKETS_PER_S = 1_000_000  # each direction of a live link
PFC_PER_S = 5  # a healthy lossless port pauses now and then
ECN_MARKS_PER_S = 50
STORM_PFC_PER_S = 200_000  # a stuck receiver: pause frames back to back
LOSSLESS_DROPS_PER_S = 2_000
ERROR_FRACTION = 0.0001  # 0.01 % of the packets in: ten times the seed's 0.001 % alarm
# A stormed queue: the watchdog sees it stuck (~200 ms detection), drops its traffic, restores it after ~200 ms,
# and finds it stuck again while the partner keeps pausing: about two shut-downs a second.
WATCHDOG_EVENTS_PER_S = 2.5
ECN_CONGESTED_FRACTION = 0.05  # a congested egress marks one packet in twenty of the RoCE queue


@dataclass(frozen=True, slots=True)
class PortCounters:
    in_packets: int
    out_packets: int
    in_errors: int
    pfc_rx: int
    pfc_tx: int
    lossless_drops: int
    ecn_marked: int
    watchdog_storms: int = 0  # times the PFC watchdog shut the lossless queue


@dataclass
class Counters:
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    storms: dict[End, float] = field(default_factory=dict)  # end -> when its partner started pausing it
    drops: dict[End, float] = field(default_factory=dict)
    errors: dict[End, float] = field(default_factory=dict)
    watchdogs: dict[End, float] = field(default_factory=dict)  # a storm the port's watchdog keeps shutting
    congested: dict[End, float] = field(default_factory=dict)  # egress congestion: ECN marks
    # A port with no traffic to carry (its switch drained, the fabric routing around it): since when, and the idle
    # time of earlier spells; its packets, pauses and marks stand still meanwhile (faults still count)
    idle_since: dict[End, float] = field(default_factory=dict)
    idle_before: dict[End, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def read(self, end: End, far: End | None, up: bool, carrying: bool = True) -> PortCounters:
        """The counters of `end` now; a port that is down counts nothing new (kept simple: it counts from zero), and
        one not `carrying` traffic stands still from the first read that says so until one says it carries again."""
        now = self.clock()
        with self.lock:
            if not carrying:
                self.idle_since.setdefault(end, now)
            elif end in self.idle_since:
                self.idle_before[end] = self.idle_before.get(end, 0.0) + now - self.idle_since.pop(end)
            idle = self.idle_before.get(end, 0.0) + (now - self.idle_since[end] if end in self.idle_since else 0.0)
        alive = now - self.started - idle if up else 0.0
        with self.lock:
            # a storm on `end` is received pause frames here, and the far end sends them
            storm_rx = now - self.storms[end] if end in self.storms and up else 0.0
            storm_tx = now - self.storms[far] if far in self.storms and up else 0.0
            dropped = now - self.drops[end] if end in self.drops and up else 0.0
            errored = now - self.errors[end] if end in self.errors and up else 0.0
            watched = now - self.watchdogs[end] if end in self.watchdogs and up else 0.0
            marking = now - self.congested[end] if end in self.congested and up else 0.0
        packets = int(alive * PACKETS_PER_S)
        return PortCounters(
            in_packets=packets, out_packets=packets, in_errors=int(errored * PACKETS_PER_S * ERROR_FRACTION),
            pfc_rx=int(alive * PFC_PER_S + (storm_rx + watched) * STORM_PFC_PER_S),
            pfc_tx=int(alive * PFC_PER_S + storm_tx * STORM_PFC_PER_S),
            lossless_drops=int(dropped * LOSSLESS_DROPS_PER_S),
            ecn_marked=int(alive * ECN_MARKS_PER_S + marking * PACKETS_PER_S * ECN_CONGESTED_FRACTION),
            watchdog_storms=int(watched * WATCHDOG_EVENTS_PER_S))

    def storm(self, end: End) -> None:
        with self.lock:
            self.storms.setdefault(end, self.clock())

    def drop(self, end: End) -> None:
        with self.lock:
            self.drops.setdefault(end, self.clock())

    def error(self, end: End) -> None:
        with self.lock:
            self.errors.setdefault(end, self.clock())

    def watchdog(self, end: End) -> None:
        """The far end pauses `end` without end and its PFC watchdog keeps shutting the queue."""
        with self.lock:
            self.watchdogs.setdefault(end, self.clock())

    def congest(self, end: End) -> None:
        with self.lock:
            self.congested.setdefault(end, self.clock())

    def clear(self) -> None:
        with self.lock:
            self.watchdogs.clear()
            self.congested.clear()
            self.storms.clear()
            self.drops.clear()
            self.errors.clear()
