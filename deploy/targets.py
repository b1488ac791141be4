"""From a rendered fabric and an inventory to the devices to push: sessions, candidates and waves."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rocefab.deploy.fleet import Target
from rocefab.deploy.inventory import Access, Inventory, PasswordSource
from rocefab.deploy.session import DeviceSession
from rocefab.platforms import UNITS, host_unit, unit
from rocefab.renderers.plan import FabricPlan, Role
from rocefab.renderers.render import RenderedFile


def session_classes() -> dict[str, type[DeviceSession]]:
    """The session class of each device kind, from its unit. Each unit imports its driver on first use:
    NAPALM alone takes a quarter of a second to import, which `rocefab render` and `plan` should not pay."""
    return {key: u.session() for key, u in UNITS.items()}


class InventoryMismatch(Exception):
    def __init__(self, missing: list[str]) -> None:
        super().__init__(f"the inventory has no entry for: {', '.join(missing)}")
        self.missing = missing


def open_session(access: Access, run_id: str | None = None) -> DeviceSession:
    # Only this kind's driver is imported; a run imports its kinds' drivers before its workers start
    # (deploy/preload.py), so no two worker threads import them at once.
    return UNITS[access.kind].session()(access, run_id)


def session_factory(clear_stale_sessions: bool = False) -> Callable[[Access, str], DeviceSession]:
    """Sessions for each device kind; optionally sessions that first abort stale sessions another tool (a
    crashed NAPALM client) left, on the platforms that have them."""
    if not clear_stale_sessions:
        return open_session
    classes = {key: type(f"Clearing{cls.__name__}", (cls,), {"clear_stale_sessions": True})
               if cls.clear_stale_sessions is not None else cls for key, cls in session_classes().items()}
    return lambda access, run_id: classes[access.kind](access, run_id)


def device_kinds(plan: FabricPlan) -> dict[str, str]:
    kinds = {sw.name: sw.platform for sw in plan.switches}
    kinds.update({host.name: host_unit().key for host in plan.hosts})
    return kinds


def plan_accesses(plan: FabricPlan, inventory: Inventory, passwords: PasswordSource,
                  only: set[str] | None = None) -> list[Access]:
    """How to reach each device of the plan (those in `only`, if given), in plan order; every one must have an
    inventory entry."""
    kinds = device_kinds(plan)
    wanted = [name for name in kinds if only is None or name in only]
    missing = [name for name in wanted if name not in inventory.devices]
    if missing:
        raise InventoryMismatch(missing)
    return [inventory.access(name, kinds[name], passwords) for name in wanted]


def build_targets(
    plan: FabricPlan, files: Sequence[RenderedFile], inventory: Inventory, passwords: PasswordSource,
    only: set[str] | None = None,
) -> list[Target]:
    """Each device of the plan (of `only`) with its candidate: its rendered file, assembled with the render's shared
    files where its platform takes it so (a host script gets its library's text, host.library.LibraryMismatch when
    the two do not go together)."""
    candidates = {(f.device, f.kind): f.content for f in files}
    by_path = {f.path: f.content for f in files}
    targets = []
    for access in plan_accesses(plan, inventory, passwords, only):
        u = unit(access.kind)
        rendered = candidates[(access.name, u.candidate_kind)]
        targets.append(Target(access, u.assemble()(rendered, by_path) if u.assemble else rendered))
    return targets


def rollout_waves(plan: FabricPlan, canary_groups: int) -> list[list[str]]:
    """Canary first: the leaves of the first leaf groups, then their hosts; then every other switch,
    then the remaining hosts. A leaf group is the set of leaves a host attaches to: a ToR pair, or in a
    rail-optimized fabric one leaf per rail serving the same block of nodes. Hosts never share a wave
    with switches, so a wave is all-transactional or all-idempotent."""
    groups: dict[frozenset[str], list[str]] = {}
    for host in plan.hosts:
        attached = frozenset([*(m.switch for bond in host.bonds for m in bond.members),
                              *(n.switch for n in host.nics)])
        groups.setdefault(attached, []).append(host.name)
    canary = list(groups.items())[:canary_groups]
    canary_leaves: set[str] = set().union(*(attached for attached, _ in canary))
    canary_hosts = {name for _, hosts in canary for name in hosts}
    # Leaf pairs without hosts still belong to their pair's canary.
    canary_pairs = {sw.pair for sw in plan.switches if sw.name in canary_leaves and sw.pair}
    canary_leaves |= {sw.name for sw in plan.switches if sw.pair in canary_pairs}
    first = [sw.name for sw in plan.switches if sw.name in canary_leaves]
    leaves = [sw.name for sw in plan.switches if sw.role is Role.LEAF and sw.name not in canary_leaves]
    upper = [sw.name for sw in plan.switches if sw.role is not Role.LEAF]
    hosts = [h.name for h in plan.hosts if h.name not in canary_hosts]
    return [wave for wave in (first, [h.name for h in plan.hosts if h.name in canary_hosts], leaves + upper, hosts)
            if wave]
