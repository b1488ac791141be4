"""The lab's cables: which port of which emulated device faces which, and the faults that live in a cable or an
optic rather than in one device's configuration.

Every emulator asks the wiring what its ports see: whether a port has light (both ends enabled, the cable not
pulled), the speed the link trained at, the LLDP neighbour on the far end, and whether a BGP speaker there
answers. The far end's own configuration counts: a link is up only if the far end's port is enabled too, and a
BGP session comes up only when both ends configure each other with the right AS — so the lab cannot confirm a
renderer's mistake that only one side of a cable made.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from rocefab.lab.counters import Counters, PortCounters
from rocefab.renderers.plan import FabricPlan

End = tuple[str, str]  # (device, port)


@dataclass(frozen=True, slots=True)
class BgpPeerConfig:
    """One configured BGP neighbour, as the lab needs it to decide whether the session comes up."""

    key: str  # how the device names the session: a peer address, or the local interface (unnumbered)
    remote_asn: int
    interface: str | None  # unnumbered: the local port the session runs over
    address: str | None  # numbered: the peer's address


@dataclass(frozen=True, slots=True)
class BgpSpeaker:
    asn: int
    router_id: str
    peers: tuple[BgpPeerConfig, ...]
    addresses: dict[str, str]  # this device's interface addresses (without prefix length) -> interface
    networks: tuple[str, ...] = ()  # the prefixes it originates (network statements)
    aggregates: tuple[tuple[str, bool], ...] = ()  # (prefix, summary-only) of its aggregate-address lines
    # Maintenance mode, as the NOS drains BGP: GRACEFUL_SHUTDOWN (Cumulus, EOS: sessions stay, every route it
    # advertises carries the graceful-shutdown community, which receivers take at local preference 0) or ISOLATE
    # (NX-OS GIR's default profile: sessions stay, learned routes are withdrawn, its own are still advertised)
    maintenance: str | None = None


GRACEFUL_SHUTDOWN = "graceful-shutdown"
ISOLATE = "isolate"


def _accepts(configured: int, actual: int, own: int) -> bool:
    """Whether a neighbour configured with `configured` (-1: NVUE's `external`, any AS but the speaker's own)
    accepts a peer whose AS is `actual`."""
    return actual != own if configured == -1 else configured == actual


@dataclass
class Wiring:
    far: dict[End, End]
    planned_gbps: dict[End, int]
    pulled: set[End] = field(default_factory=set)  # cables out (both ends recorded)
    slow_gbps: dict[End, int] = field(default_factory=dict)  # an optic that trains lower, at one end
    bgp_down: set[tuple[str, str]] = field(default_factory=set)  # (device, peer device): that session stays idle
    counters: Counters = field(default_factory=Counters)
    lossless_class: int = 3  # the traffic class whose drops the lossless-queue counters report
    # every emulated device, by name; a switch answers `port_enabled(port)` (not shut down in its running config)
    # and `bgp_speaker()` (its BGP configuration, or None)
    devices: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    @classmethod
    def from_plan(cls, plan: FabricPlan) -> Wiring:
        far: dict[End, End] = {}
        speed: dict[End, int] = {}
        for link in plan.links:
            a, b = (link.a.device, link.a.port), (link.b.device, link.b.port)
            far[a], far[b] = b, a
            speed[a] = speed[b] = link.speed_gbps
        return cls(far, speed, lossless_class=plan.qos.roce_priority)

    # -- what a port sees ---------------------------------------------------------------------------------------------
    def peer(self, device: str, port: str) -> End | None:
        with self.lock:
            return self.far.get((device, port))

    def _enabled(self, end: End) -> bool:
        check = getattr(self.devices.get(end[0]), "port_enabled", None)
        return True if check is None else bool(check(end[1]))

    def _speaker(self, device: str) -> BgpSpeaker | None:
        found = getattr(self.devices.get(device), "bgp_speaker", None)
        return found() if found is not None else None

    def up(self, device: str, port: str) -> bool:
        """Light on the port: cabled, the cable in, and both ends enabled."""
        with self.lock:
            far = self.far.get((device, port))
            if far is None or (device, port) in self.pulled:
                return False
        # Asking the devices happens outside the lock: each answers from its own config, and a device busy in a
        # command of its own may be asking the wiring at the same moment.
        return self._enabled((device, port)) and self._enabled(far)

    def port_counters(self, device: str, port: str) -> PortCounters:
        with self.lock:
            far = self.far.get((device, port))
        carrying = far is None or (self._carries(device) and self._carries(far[0]))
        return self.counters.read((device, port), far, self.up(device, port), carrying)

    def _carries(self, device: str) -> bool:
        """Whether `device` still carries its ports' traffic: a switch in maintenance with only switches cabled to it
        (a spine) does not, its neighbours routing around it; a drained leaf still takes what its hosts send on
        their bond member (a BGP drain moves only what comes from the fabric)."""
        speaker = self._speaker(device)
        if speaker is None or speaker.maintenance is None:
            return True
        with self.lock:
            fars = [far[0] for (name, _), far in self.far.items() if name == device]
        return any(self._speaker(name) is None for name in fars)

    def speed_gbps(self, device: str, port: str) -> int | None:
        """The speed the link trained at (the slower optic of its two ends), or None when not cabled."""
        with self.lock:
            far = self.far.get((device, port))
            if far is None:
                return None
            planned = self.planned_gbps.get((device, port), 0)
            return min(self.slow_gbps.get((device, port), planned), self.slow_gbps.get(far, planned))

    def session_up(self, device: str, peer: BgpPeerConfig) -> tuple[bool, str]:
        """Whether `device`'s session to `peer` is established, and if not, why (for the lab's own log)."""
        # no lock held while the devices answer (see `up`)
        me = self._speaker(device)
        if me is None:
            return False, "no BGP on this device"
        far_end = self._far_speaker_end(device, peer)
        if far_end is None:
            return False, "nobody answers at that address or on that port"
        other, other_port = far_end
        with self.lock:
            cut = (device, other) in self.bgp_down or (other, device) in self.bgp_down
        if cut:
            return False, "the peer's BGP process does not answer (injected fault)"
        them = self._speaker(other)
        if them is None or not _accepts(peer.remote_asn, them.asn, me.asn):
            return False, f"the peer's AS is {them.asn if them else 'none'}, not {peer.remote_asn}"
        my_addresses = set(me.addresses)
        back = [p for p in them.peers
                if (p.interface is not None and p.interface == other_port)
                or (p.address is not None and p.address in my_addresses)]
        if not back:
            return False, "the peer has no neighbour configured back"
        if not any(_accepts(p.remote_asn, me.asn, them.asn) for p in back):
            return False, "the peer expects another AS"
        return True, ""

    def _far_speaker_end(self, device: str, peer: BgpPeerConfig) -> End | None:
        if peer.interface is not None:
            with self.lock:
                far = self.far.get((device, peer.interface))
            if far is None:  # an interface over a LAG (a peer link's VLAN subinterface): the device knows its far end
                logical = getattr(self.devices.get(device), "logical_peer", None)
                return logical(peer.interface) if logical is not None else None
            return far if self.up(device, peer.interface) else None
        for name in list(self.devices):
            found = self._speaker(name)
            if name != device and found is not None and peer.address in found.addresses:
                port = found.addresses[peer.address or ""]
                # a /31 on a cabled port needs that cable up; an SVI's address is reached over the VLAN
                with self.lock:
                    cabled = (name, port) in self.far
                return (name, port) if not cabled or self.up(name, port) else None
        return None

    # -- faults -------------------------------------------------------------------------------------------------------
    def pull(self, device: str, port: str) -> None:
        with self.lock:
            far = self._cabled(device, port)
            self.pulled |= {(device, port), far}

    def slow(self, device: str, port: str, gbps: int) -> None:
        with self.lock:
            self._cabled(device, port)
            self.slow_gbps[(device, port)] = gbps

    def swap(self, device: str, port_a: str, port_b: str) -> None:
        """Miscable: the cables of two ports of one device change places."""
        with self.lock:
            far_a, far_b = self._cabled(device, port_a), self._cabled(device, port_b)
            self.far[(device, port_a)], self.far[(device, port_b)] = far_b, far_a
            self.far[far_a], self.far[far_b] = (device, port_b), (device, port_a)

    def _cabled(self, device: str, port: str) -> End:
        far = self.far.get((device, port))
        if far is None:
            raise ValueError(f"{device} {port} has no cable in this lab")
        return far

    def clear(self, original: Wiring) -> None:
        with self.lock:
            self.far = dict(original.far)
            self.pulled.clear()
            self.slow_gbps.clear()
            self.bgp_down.clear()
        self.counters.clear()
