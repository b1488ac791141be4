"""Cabling plan: one row per connection, with the racks at both ends and the medium that spans them.

The medium follows from placement, as the planner decided it (renderers/cable_lengths.py): inside one rack a
passive copper DAC (NVIDIA sells 100G-PAM4 DACs and splitters up to 3 m); between racks of one pod multimode
optics (2x400G SR4, 50 m); between pods or up to the super-spines single-mode optics (2x400G DR4, 500 m).
Sources: device-catalogue.md section 8.1. `length_m` is the length PFC headroom was sized for.
Copper between broken-out cages is shared: a splitter serves every child of one cage (towards servers, or
towards unbroken switch ports), and a straight cable joins two broken-out cages child for child; rows on
one such cable share its id. Optics are per cage anyway (see bom.py), so fibre stays one per connection.
"""

from __future__ import annotations

from rocefab.models.media import REACH_M, Medium
from rocefab.renderers.plan import FabricPlan, Link, LinkKind, SwitchPort
from rocefab.renderers.record import record


@record
class Media:
    name: str  # the cabling plan's media column
    cable: str  # what is ordered per connection
    module: str | None  # what is ordered per cage or NIC port; None for copper
    reach: str

    @property
    def optical(self) -> bool:
        return self.module is not None


SPLITTER, CAGE_TO_CAGE = "splitter", "cage-to-cage"
COPPER = Media("copper DAC", "copper DAC", None, f"{REACH_M[Medium.COPPER]} m")
MULTIMODE = Media("multimode optics", "multimode fibre, MPO-12", "multimode transceiver (SR4)",
                  f"{REACH_M[Medium.MULTIMODE]} m")
SINGLE_MODE = Media("single-mode optics", "single-mode fibre, MPO-12", "single-mode transceiver (DR4)",
                    f"{REACH_M[Medium.SINGLE_MODE]} m")
MEDIA = {Medium.COPPER: COPPER, Medium.MULTIMODE: MULTIMODE, Medium.SINGLE_MODE: SINGLE_MODE}


@record
class Connection:
    cable: str  # rows of one copper splitter share it
    link: Link
    a_rack: str
    b_rack: str
    media: Media
    a_cage: int  # the switch end's front-panel cage
    a_cage_gbps: int  # that cage's full speed, for optics
    b_cage: int | None  # None: a server NIC port
    b_cage_gbps: int | None
    shared: str  # "splitter", "cage-to-cage" (copper serving several children of a cage), or "" (its own cable)
    cable_gbps: int  # the cable's own speed: a shared cable's cage speed, else the connection's

    @property
    def splitter(self) -> bool:
        return self.shared == SPLITTER


def connections(plan: FabricPlan) -> list[Connection]:
    switches = {s.name: s for s in plan.switches}
    # per switch, its ports and its broken-out cages' full speeds by name: string keys, as this runs once per
    # link (294,912 in a 98,304-GPU fabric)
    ports: dict[str, dict[str, SwitchPort]] = {s.name: {p.name: p for p in s.ports} for s in plan.switches}
    cage_gbps: dict[str, dict[int, int]] = {s.name: {b.cage: b.factor * b.child_speed_gbps for b in s.breakouts}
                                            for s in plan.switches}
    host_racks = {h.name: h.rack for h in plan.hosts}
    media_of = {medium.value: media for medium, media in MEDIA.items()}
    rows: list[Connection] = []
    shared_ids: dict[tuple[object, ...], str] = {}
    cables = 0
    for link in plan.links:
        a_name, b_name = link.a.device, link.b.device
        a_switch = switches[a_name]
        b_switch = switches.get(b_name)
        a_port = ports[a_name][link.a.port]
        a_rack = a_switch.rack
        media = media_of[link.medium]  # the planner decided it from the racks (renderers/cable_lengths.py)
        a_cage_gbps = cage_gbps[a_name].get(a_port.cage, a_port.speed_gbps)
        b_cage = b_cage_gbps = b_port = None
        if b_switch is not None:
            b_port = ports[b_name][link.b.port]
            b_rack = b_switch.rack
            b_cage, b_cage_gbps = b_port.cage, cage_gbps[b_name].get(b_port.cage, b_port.speed_gbps)
        else:
            b_rack = host_racks[b_name]

        shared, cable_gbps = "", link.speed_gbps
        key: tuple[object, ...] | None = None
        if media is COPPER:
            if a_port.broken_out and b_port is not None and b_port.broken_out:
                shared, cable_gbps, key = CAGE_TO_CAGE, a_cage_gbps, (a_name, a_port.cage, b_name, b_cage)
            elif a_port.broken_out:
                shared, cable_gbps, key = SPLITTER, a_cage_gbps, (a_name, a_port.cage)
            elif b_port is not None and b_port.broken_out and b_cage_gbps:
                shared, cable_gbps, key = SPLITTER, b_cage_gbps, (b_name, b_cage)
        cable = shared_ids.get(key, "") if key else ""
        if not cable:
            cables += 1
            cable = f"C{cables:05d}"
            if key:
                shared_ids[key] = cable
        rows.append(Connection(cable, link, a_rack, b_rack, media, a_port.cage, a_cage_gbps, b_cage, b_cage_gbps,
                               shared, cable_gbps))
    return rows


COLUMNS = ("cable", "kind", "a_device", "a_port", "a_rack", "b_device", "b_port", "b_rack", "speed_gbps",
           "media", "max_length", "length_m")


class _Cells(dict[str, str]):
    """Each distinct text as the cabling plan prints it, quoted or not, checked once: a row's cells repeat
    (device, port and rack names), and a lookup that finds one costs no Python call."""

    def __missing__(self, text: str) -> str:
        printed = self[text] = f'"{text.replace(QUOTE, QUOTE * 2)}"' if _NEEDS_QUOTES.intersection(text) else text
        return printed


def render_cabling_csv(plan: FabricPlan, rows: list[Connection] | None = None) -> str:
    """The cabling plan as CSV, a row per connection: comma-separated, a field quoted only when it holds a comma,
    a quote, a line feed or a carriage return, as `csv.writer` prints it (but for a lone carriage return, which
    Python 3.11's leaves bare). Each row is one format string: 294,912 rows at 98,304 GPUs cost a third more
    through the csv module. Cable ids are rocefab's own (C00001), never quoted; the media columns are made once
    per medium."""
    cell = _Cells()
    kinds = {kind: cell[kind.value] for kind in LinkKind}
    media_cells: dict[tuple[str, bool], str] = {}  # by the media's name: a record's hash is a Python call
    out = [",".join(COLUMNS) + "\n"]
    for row in rows if rows is not None else connections(plan):
        link = row.link
        a, b = link.a, link.b
        splitter = row.shared == SPLITTER
        media = media_cells.get((row.media.name, splitter))
        if media is None:
            name = f"{row.media.name} splitter" if splitter else row.media.name
            media = media_cells[(row.media.name, splitter)] = f"{cell[name]},{cell[row.media.reach]}"
        out.append(f"{row.cable},{kinds[link.kind]},{cell[a.device]},{cell[a.port]},{cell[row.a_rack]},"
                   f"{cell[b.device]},{cell[b.port]},{cell[row.b_rack]},{link.speed_gbps:d},{media},{link.length_m:d}\n")
    return "".join(out)


QUOTE = '"'
_NEEDS_QUOTES = frozenset(',"\r\n')
