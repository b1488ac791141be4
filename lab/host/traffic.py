"""A lab GPU host's RDMA and NIC counters, advancing with time, and the faults that make them misbehave.

As on the switches (counters.py): every ACTIVE RDMA port sends RoCE at a steady rate, a few ECN-marked packets
arrive and each is answered with a CNP, and each NIC port pauses a few times a second on the priorities its PFC is
on — a healthy host under load. The faults add what a sick one shows: retransmissions (a lossy path: 0.1 % of the
packets sent, ten times the intent's default threshold) and a pause storm (a NIC that cannot drain pauses its leaf
without end on its lossless priorities).

A kernel computes counters when they are read; the fake host's sysfs is plain files, so `render` writes them as of
now — the mlx5 hw_counters and port_xmit_packets of each RDMA device, and the statistics the ethtool stub prints
(.stubstate/stats/<netdev>) — and the lab host calls it before each command that reads them (`reads_counters`:
writing them for every command would cost each a few milliseconds, more under load).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocefab.lab.host import fakehost

PACKETS_PER_S = 1_000_000  # RoCE packets each ACTIVE port sends
ECN_MARKED_PER_S = 50
CNP_HANDLED_PER_S = 40  # its peers' CNPs, for what this host sends into congestion
PAUSE_PER_S = 5  # per PFC priority and direction: a healthy lossless port pauses now and then
RETRANSMIT_FRACTION = 0.001
# how a lossy path's retransmissions show: gaps the responder sees, NAKs the requester gets, ACKs that time out
RETRANSMIT_SPLIT = {"out_of_sequence": 0.6, "packet_seq_err": 0.3, "local_ack_timeout_err": 0.1}
STORM_PAUSE_PER_S = 200_000


def reads_counters(command: str) -> bool:
    """Whether a shell command reads what `render` writes: the RDMA counters in sysfs, or `ethtool -S`."""
    return "hw_counters" in command or "port_xmit_packets" in command or "ethtool -S" in command \
        or "ethtool --statistics" in command


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a tool reading at the same time sees the old counters or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.traffic.tmp")
    tmp.write_text(text)
    tmp.replace(path)


@dataclass
class HostTraffic:
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    retransmits: dict[str, float] = field(default_factory=dict)  # RDMA device -> since when
    storms: dict[str, float] = field(default_factory=dict)  # netdev -> since when
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def retransmit(self, rdma: str) -> None:
        with self.lock:
            self.retransmits.setdefault(rdma, self.clock())

    def storm(self, netdev: str) -> None:
        with self.lock:
            self.storms.setdefault(netdev, self.clock())

    def clear(self) -> None:
        with self.lock:
            self.retransmits.clear()
            self.storms.clear()

    def rdma(self, name: str, active: bool, now: float) -> dict[str, int]:
        """The counters of an RDMA device's port 1, by their path below ports/1; a port that is not ACTIVE counts
        nothing new (kept simple: it counts from zero)."""
        alive = now - self.started if active else 0.0
        lossy = now - self.retransmits[name] if name in self.retransmits and active else 0.0
        marked = int(alive * ECN_MARKED_PER_S)
        out = {"counters/port_xmit_packets": int(alive * PACKETS_PER_S),
               "hw_counters/np_ecn_marked_roce_packets": marked, "hw_counters/np_cnp_sent": marked,
               "hw_counters/rp_cnp_handled": int(alive * CNP_HANDLED_PER_S),
               "hw_counters/roce_adp_retrans": 0}
        for counter, share in RETRANSMIT_SPLIT.items():
            out[f"hw_counters/{counter}"] = int(lossy * PACKETS_PER_S * RETRANSMIT_FRACTION * share)
        return out

    def pause(self, netdev: str, up: bool, pfc: list[int], now: float) -> dict[str, int]:
        """A NIC port's ethtool statistics (mlx5 names): pauses both ways on its PFC priorities, and the storm's."""
        alive = now - self.started if up else 0.0
        storm = now - self.storms[netdev] if netdev in self.storms and up else 0.0
        out = {"rx_packets_phy": int(alive * PACKETS_PER_S), "tx_packets_phy": int(alive * PACKETS_PER_S)}
        for p in range(8):
            on = bool(pfc[p]) if p < len(pfc) else False
            out[f"rx_prio{p}_pause"] = int(alive * PAUSE_PER_S) if on else 0
            out[f"tx_prio{p}_pause"] = int(alive * PAUSE_PER_S + storm * STORM_PAUSE_PER_S) if on else 0
        return out

    def render(self, root: Path) -> None:
        """Write the counters of the fake host at `root` (lab/host/fakehost.py) as of now."""
        sysfs = root / "sys"
        now = self.clock()
        with self.lock:
            ib = sysfs / "class" / "infiniband"
            for device in sorted(ib.iterdir()) if ib.is_dir() else []:
                port = device / "ports" / "1"
                try:
                    active = "ACTIVE" in (port / "state").read_text()
                except OSError:
                    continue
                for rel, value in self.rdma(device.name, active, now).items():
                    _write(port / rel, f"{value}\n")
            netdevs: Mapping[str, dict[str, object]] = fakehost.state(root)["netdevs"]
            for name, dev in netdevs.items():
                folder = sysfs / "class" / "net" / name
                if dev.get("kind") != "physical" or not folder.is_dir():
                    continue
                try:
                    up = (folder / "operstate").read_text().strip() == "up"
                except OSError:
                    up = False
                dcb = dev.get("dcb")
                pfc = list(dcb.get("pfc", [])) if isinstance(dcb, dict) else []
                stats = self.pause(name, up, pfc, now)
                _write(sysfs / ".stubstate" / "stats" / name, "".join(f"{k} {v}\n" for k, v in stats.items()))
