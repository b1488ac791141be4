"""Rack placement: which rack every server and switch stands in, so the cabling plan can say which cables
stay inside a rack (copper) and which cross the room (optics).

Servers fill compute racks `rack001`, `rack002`, ... in plan order; a new rack starts whenever the leaf pair
or pod changes, so one pair's servers never share a rack with another's. A ToR pair stands in the first
rack of its servers. Every other switch (spines, rail leaves, pair leaves without servers) fills network
racks `net001`, ... per pod, leaves before spines; super-spines fill their own network racks last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rocefab.renderers.plan import Role
from rocefab.renderers.record import record


@record
class Placed:
    """What placement needs to know of a switch or server."""

    name: str
    role: Role | None  # None for a server
    pod: int | None
    pair: str | None


def place(switches: Sequence[Placed], servers: Sequence[Placed], nodes_per_rack: int,
          switches_per_rack: int) -> dict[str, str]:
    """Rack of every switch and server, by name.

    >>> leaves = [Placed("l1a", Role.LEAF, None, "p1"), Placed("l1b", Role.LEAF, None, "p1")]
    >>> servers = [Placed(f"g{i}", None, None, "p1") for i in range(5)]
    >>> racks = place([*leaves, Placed("s1", Role.SPINE, None, None)], servers, 4, 8)
    >>> racks["g3"], racks["g4"], racks["l1b"], racks["s1"]
    ('rack001', 'rack002', 'rack001', 'net001')
    """
    racks: dict[str, str] = {}
    first_rack_of_pair: dict[str, str] = {}
    number, count, group = 0, 0, object()
    for server in servers:
        key = (server.pair, server.pod)
        if key != group or count == nodes_per_rack:
            number, count, group = number + 1, 0, key
        rack = f"rack{number:03d}"
        racks[server.name] = rack
        count += 1
        if server.pair is not None:
            first_rack_of_pair.setdefault(server.pair, rack)

    network: list[Placed] = []
    for switch in switches:
        pair_rack = first_rack_of_pair.get(switch.pair) if switch.pair else None
        if pair_rack is not None:
            racks[switch.name] = pair_rack
        else:
            network.append(switch)
    order = {Role.LEAF: 0, Role.SPINE: 1}
    by_pod: dict[int | None, list[Placed]] = {}
    core: list[Placed] = []
    for switch in network:
        (core if switch.role is Role.SUPERSPINE else by_pod.setdefault(switch.pod, [])).append(switch)
    groups = [sorted(members, key=lambda s: order.get(s.role, 2) if s.role else 2)
              for _, members in sorted(by_pod.items(), key=lambda item: -1 if item[0] is None else item[0])]
    number = 0
    for members in [*groups, core]:
        for start in range(0, len(members), switches_per_rack):
            number += 1
            racks.update(_assign(members[start:start + switches_per_rack], f"net{number:03d}"))
    return racks


def _assign(members: Iterable[Placed], rack: str) -> dict[str, str]:
    return {member.name: rack for member in members}
