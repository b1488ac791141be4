"""Bill of materials: switches per model, cables per medium and speed, optics per cage and NIC port.

Counted from the cabling plan, so the order list and the technicians' sheet cannot disagree. An optical
module serves a whole switch cage (a twin-port 800G module carries both 400G children of a broken-out
cage), so switch-side optics are counted per cage; server-side optics per NIC port.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

from rocefab.models.catalogue import PLATFORMS
from rocefab.renderers.cabling import Connection, connections
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.record import record


@record
class Item:
    category: str  # switch, cable, optic
    item: str
    speed_gbps: int | None
    quantity: int
    note: str


def bill_of_materials(plan: FabricPlan, rows: list[Connection] | None = None) -> list[Item]:
    rows = rows if rows is not None else connections(plan)
    items: list[Item] = []

    models: dict[str, list[str]] = {}
    for switch in plan.switches:
        models.setdefault(switch.model, []).append(switch.role.value)
    for model, roles in sorted(models.items(), key=lambda m: natural_key(m[0])):
        platform = next(s for s in plan.switches if s.model == model).platform
        spec = PLATFORMS[platform]
        tiers = ", ".join(f"{n} {role}" for role, n in sorted(Counter(roles).items()))
        items.append(Item("switch", model, None, len(roles), f"{spec.display_name} {spec.release}; {tiers}"))

    cables: Counter[tuple[str, int, str]] = Counter()
    counted: set[str] = set()  # shared copper cables already counted
    optic_of_cage: dict[tuple[str, int], tuple[str, int]] = {}  # (switch, cage) -> (module, cage speed)
    nic_optics: Counter[tuple[str, int]] = Counter()
    for row in rows:
        link, media = row.link, row.media
        if not row.shared:
            cables[(media.cable, row.cable_gbps, media.reach)] += 1
        elif row.cable not in counted:  # rows sharing a copper cable count it once
            counted.add(row.cable)
            name = media.cable
            if row.splitter:
                name += f" splitter 1x{row.cable_gbps}G to {row.cable_gbps // link.speed_gbps}x{link.speed_gbps}G"
            cables[(name, row.cable_gbps, media.reach)] += 1
        module = media.module
        if module is None:
            continue
        optic_of_cage.setdefault((link.a.device, row.a_cage), (module, row.a_cage_gbps))
        if row.b_cage is not None and row.b_cage_gbps is not None:
            optic_of_cage.setdefault((link.b.device, row.b_cage), (module, row.b_cage_gbps))
        else:
            nic_optics[(module, link.speed_gbps)] += 1
    switch_optics = Counter(optic_of_cage.values())

    for (name, speed, reach), n in sorted(cables.items()):
        items.append(Item("cable", name, speed, n, f"up to {reach}"))
    for (name, speed), n in sorted(switch_optics.items()):
        items.append(Item("optic", f"{name}, switch cage", speed, n,
                          "one per switch cage; a broken-out cage's ports share it"))
    for (name, speed), n in sorted(nic_optics.items()):
        items.append(Item("optic", f"{name}, server NIC port", speed, n, "one per NIC port"))
    return items


COLUMNS = ("category", "item", "speed_gbps", "quantity", "note")


def render_bom_csv(plan: FabricPlan, rows: list[Connection] | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for item in bill_of_materials(plan, rows):
        writer.writerow((item.category, item.item, "" if item.speed_gbps is None else item.speed_gbps,
                         item.quantity, item.note))
    return out.getvalue()
