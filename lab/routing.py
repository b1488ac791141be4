"""The lab's BGP routing: which next hops a switch installs for a prefix, from the live sessions of the wiring.

Each switch originates what its running config's `network` statements name, and each of its aggregates once a
longer prefix it originates falls inside (the aggregate's contributor); a summary-only aggregate keeps the longer
prefixes inside it from its peers, so only the summary travels. Routes travel over established
sessions only (lab/wiring.py decides those: both ends configured, the link up, no `bgp-down` fault), one path per
session, each speaker advertising its best path with its AS prepended; a speaker refuses a path that already
carries its own AS (eBGP's loop check). A switch installs every session's path of the shortest AS-path length
(`maximum-paths` with multipath relax, as the rendered configs ask) — so a pulled cable or a stopped peer takes its
next hop away, and a renderer that forgot a `network` line leaves the prefix unrouted, whatever the plan says.
iBGP is not modelled (the plans' sessions are all eBGP), and only a switch's own networks count as contributors of
its aggregates (the plans aggregate nothing they learn).

A switch in maintenance drains as its NOS does: with graceful shutdown (Cumulus, EOS) every path it advertises
carries the graceful-shutdown community (RFC 8326), passed on by the speakers after it, and a receiver prefers any
path without it (local preference 0 against the default) before comparing AS-path lengths, so the drained switch
leaves its neighbours' ECMP groups while another path exists and still carries traffic where none does; isolated
(NX-OS GIR) it advertises only what it originates. The lab's receivers all honour the community.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass

from rocefab.lab.wiring import GRACEFUL_SHUTDOWN, ISOLATE, BgpPeerConfig, BgpSpeaker, Wiring


def link_local(device: str, port: str) -> str:
    """The IPv6 link-local address the lab gives `device`'s `port` (the same one EOS's BGP summary prints)."""
    digest = hashlib.sha256(f"{device} {port}".encode()).hexdigest()
    return f"fe80::{digest[0:4]}:{digest[4:8]}:{digest[8:12]}:{digest[12:16]}"


@dataclass(frozen=True, slots=True)
class Session:
    peer: str  # the far device
    interface: str  # the local interface the session (and its next hop) uses
    next_hop: str  # the far end's address: its /31 address, or its link-local one (unnumbered)


def _local_interface(speaker: BgpSpeaker, address: str) -> str | None:
    """The interface holding the /31 the peer's address is in (the plans number every routed link and peer
    VLAN with /31s; the speaker's addresses come without their length)."""
    peer = ipaddress.ip_address(address)
    for mine, interface in speaker.addresses.items():
        if mine != address and peer in ipaddress.ip_interface(f"{mine}/31").network:
            return interface
    return None


def sessions(wiring: Wiring, device: str, speaker: BgpSpeaker) -> list[Session]:
    """`device`'s established sessions, each with the interface and next hop its routes use."""
    out = []
    for peer in speaker.peers:
        if not wiring.session_up(device, peer)[0]:
            continue
        far = wiring._far_speaker_end(device, peer)
        if far is None:
            continue
        out.append(_session(speaker, peer, far))
    return out


def _session(speaker: BgpSpeaker, peer: BgpPeerConfig, far: tuple[str, str]) -> Session:
    if peer.interface is not None:
        return Session(far[0], peer.interface, link_local(*far))
    address = peer.address or ""
    return Session(far[0], _local_interface(speaker, address) or address, address)


def _inside(prefix: str, outer: str) -> bool:
    """Whether `prefix` is strictly longer than `outer` and within it (what an aggregate counts as its own).

    >>> _inside("10.2.0.2/31", "10.2.0.0/30"), _inside("10.2.0.0/30", "10.2.0.0/30")
    (True, False)
    """
    inner, agg = ipaddress.ip_network(prefix, strict=False), ipaddress.ip_network(outer, strict=False)
    if inner.version != agg.version or inner.prefixlen <= agg.prefixlen:
        return False
    return inner.supernet(new_prefix=agg.prefixlen) == agg


def active_aggregates(speaker: BgpSpeaker) -> list[tuple[str, bool]]:
    """The aggregates `speaker` originates: those with a contributor among its own networks."""
    return [(a, summary) for a, summary in speaker.aggregates if any(_inside(n, a) for n in speaker.networks)]


def originates(speaker: BgpSpeaker, prefix: str) -> bool:
    """Whether `speaker` has `prefix` in BGP of its own (a network statement or an active aggregate)."""
    return prefix in speaker.networks or any(a == prefix for a, _ in active_aggregates(speaker))


def suppresses(speaker: BgpSpeaker, prefix: str) -> bool:
    """Whether an active summary-only aggregate of `speaker` keeps `prefix` from its peers."""
    return any(summary and _inside(prefix, a) for a, summary in active_aggregates(speaker))


def next_hops(wiring: Wiring | None, device: str, prefix: str) -> list[Session] | None:
    """The sessions `device` routes `prefix` over (empty: no route); None when it originates the prefix."""
    if wiring is None:
        return []
    speakers = {name: found for name in list(wiring.devices) if (found := wiring._speaker(name)) is not None}
    if device not in speakers:
        return []
    if originates(speakers[device], prefix):
        return None
    live = {name: sessions(wiring, name, sp) for name, sp in speakers.items()}
    # best[name]: (drained, AS path) of the path `name` holds, its own AS first; `drained` when the path carries the
    # graceful-shutdown community. Rounds of advertisement until nothing changes. A speaker whose summary-only
    # aggregate covers the prefix holds it but tells no peer; an isolated one tells only what it originates.
    best: dict[str, tuple[bool, tuple[int, ...]]] = {
        n: (sp.maintenance == GRACEFUL_SHUTDOWN, (sp.asn,)) for n, sp in speakers.items()
        if originates(sp, prefix) and not suppresses(sp, prefix)}
    origins = set(best)
    silent = {n for n, sp in speakers.items() if suppresses(sp, prefix)
              or (sp.maintenance == ISOLATE and n not in origins)}

    def offered(peer: str) -> tuple[bool, tuple[int, ...]]:
        drained, path = best[peer]
        return drained or speakers[peer].maintenance == GRACEFUL_SHUTDOWN, path

    for _ in range(len(speakers) + 1):
        changed = False
        for name, sp in speakers.items():
            if name in origins:
                continue
            offers = [offered(s.peer) for s in live[name]
                      if s.peer in best and s.peer not in silent and sp.asn not in best[s.peer][1]]
            chosen = min(offers, key=lambda o: (o[0], len(o[1]), o[1])) if offers else None
            held = None if chosen is None else (chosen[0], (sp.asn, *chosen[1]))
            if held != best.get(name):
                changed = True
                if held is None:
                    best.pop(name, None)
                else:
                    best[name] = held
        if not changed:
            break
    me = speakers[device]
    usable = [(s, offered(s.peer)) for s in live[device]
              if s.peer in best and s.peer not in silent and me.asn not in best[s.peer][1]]
    if not usable:
        return []
    preferred = min((drained, len(path)) for _, (drained, path) in usable)
    return [s for s, (drained, path) in usable if (drained, len(path)) == preferred]
