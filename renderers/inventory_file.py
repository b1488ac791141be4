"""`inventory.yaml`: how to reach every device of the plan, in rocefab's own inventory format.

A switch is reached at its planned management address (the intent's `management` subnet) and a host, whose
management network the intent does not describe, by its name; a switch without planned management
addressing is reached by its name too, which a site's DNS usually resolves. The transport is each
platform's first; credentials never appear: the password comes from ROCEFAB_PASSWORD, a keyring or a prompt.
"""

from __future__ import annotations

from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.record import record
from rocefab.renderers.yamltext import dump_block


@record
class PlannedDevice:
    name: str
    kind: str  # a platform unit's name: eos, nxos, cumulus or host
    role: str  # leaf, spine, super-spine or host
    address: str  # management address, or the name when none is planned
    planned_address: bool


def planned_devices(plan: FabricPlan) -> list[PlannedDevice]:
    from rocefab.platforms import host_unit  # here: the platform units import the renderers

    host = host_unit().key
    devices = [
        PlannedDevice(sw.name, sw.platform, sw.role.value,
                      sw.management.ipv4.split("/")[0] if sw.management else sw.name, sw.management is not None)
        for sw in plan.switches
    ]
    devices += [PlannedDevice(h.name, host, host, h.name, False) for h in plan.hosts]
    return devices


def render_inventory(plan: FabricPlan) -> str:
    from rocefab.platforms import unit

    devices = planned_devices(plan)
    by_name = sum(not d.planned_address for d in devices)
    head = [
        f"# How to reach the {len(devices)} devices of fabric {plan.source.fabric}: rocefab's inventory format",
        "# (rocefab diff|apply|verify -i inventory.yaml). Switches at their planned management address; hosts",
        "# and switches without one by name (DNS). Passwords: ROCEFAB_PASSWORD, a keyring or a prompt.",
    ]
    if by_name:
        head.append(f"# {by_name} device(s) reached by name")
    document = {
        "defaults": {"username": "admin", "password_env": "ROCEFAB_PASSWORD"},
        "devices": {d.name: {"host": d.address, "transport": unit(d.kind).transports[0]} for d in devices},
    }
    return "\n".join(head) + "\n" + dump_block(document)
