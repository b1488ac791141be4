"""`rocefab drain` and `rocefab undrain`: a switch out of the traffic path with its NOS's maintenance mode, and back,
each time read on its neighbours (deploy/drain.py); what may be drained together is what-if's answer
(deploy/drain_limits.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, err, out
from rocefab.renderers.plan import FabricPlan

if TYPE_CHECKING:
    from rocefab.deploy.verify.checks import Row

IntentArg = Annotated[Path, typer.Argument(help="intent YAML file", show_default=False)]
InventoryOpt = Annotated[Path, typer.Option("--inventory", "-i", envvar="ROCEFAB_INVENTORY",
                                            help="how each device is reached")]
OnlyOpt = Annotated[str, typer.Option("--only", help="the switches, comma separated")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=1, help="seconds to wait for the neighbours' routes")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print the result as JSON")]
RailLeavesOpt = Annotated[int, typer.Option(
    "--rail-leaves-at-once", min=1, max=1024,
    help="rail leaves that may be drained together, each of another rail block")]


def drain(intent: IntentArg, inventory: InventoryOpt, only: OnlyOpt, timeout: TimeoutOpt = 120.0,
          as_json: JsonOpt = False, rail_leaves: RailLeavesOpt = 1) -> None:
    """Drain switches with their NOS's maintenance mode (EOS: the System unit quiesced; Cumulus 5.13+: the
    all-protocols unit; NX-OS: graceful removal, `system mode maintenance`, for switches that originate no prefix
    but their loopback), then read their BGP neighbours until every route leaves by the planned next hops minus the
    drained switches, and the drained switches' counters until their lossless queue is quiet (no pause frame or
    ECN mark in 2 s; a leaf is reported, not waited for: its hosts still send to it). Refused, with nothing
    changed, where the plan's redundancy does not allow it (a switch whose loss cuts a leaf or host off, both leaves
    of a pair, ...). Exit 0 drained and moved, 1 refused, or not moved or not quiet in time (the switches stay
    drained: `rocefab undrain` brings them back), 2 bad input."""
    _run(intent, inventory, only, timeout, as_json, drain=True, rail_leaves_at_once=rail_leaves)


def undrain(intent: IntentArg, inventory: InventoryOpt, only: OnlyOpt, timeout: TimeoutOpt = 120.0,
            as_json: JsonOpt = False) -> None:
    """End the maintenance mode of switches, then read their neighbours until every route is back on its planned
    next hops. Exit 0 back, 1 not back in time, 2 bad input."""
    _run(intent, inventory, only, timeout, as_json, drain=False)


def _run(intent: Path, inventory_path: Path, only: str, timeout: float, as_json: bool, drain: bool,
         rail_leaves_at_once: int = 1) -> None:
    from rocefab.deploy.drain import cannot_drain, drained_now, set_maintenance, wait_for_neighbours, wait_until_quiet
    from rocefab.deploy.inventory import CredentialError, PasswordSource, load_inventory
    from rocefab.deploy.session import new_run_id
    from rocefab.deploy.targets import InventoryMismatch, open_session, plan_accesses
    from rocefab.models.loader import IntentLoadError
    from rocefab.pipeline_commands import checked_plan

    plan = checked_plan(intent)
    names = [n for n in only.split(",") if n]
    switches = {sw.name for sw in plan.switches}
    unknown = [n for n in names if n not in switches]
    if not names or unknown:
        err.print(f"--only: {', '.join(unknown) or 'nothing'}: name switches of the plan", markup=False)
        raise typer.Exit(EXIT_INPUT)
    verb = "drain" if drain else "undrain"
    try:
        inventory = load_inventory(inventory_path)
        accesses = plan_accesses(plan, inventory, PasswordSource())
    except (IntentLoadError, InventoryMismatch, CredentialError) as exc:
        err.print(f"{inventory_path}: {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    if drain:
        unable = {a.name: why for a in accesses if a.name in names and (why := cannot_drain(plan, a)) is not None}
        for name, why in unable.items():
            err.print(f"{name}: not drained: {why}", markup=False)
        if unable:
            err.print("nothing was changed", markup=False)
            raise typer.Exit(EXIT_FINDINGS)
    run_id = new_run_id()
    # What is drained already counts: a drain that is safe alone may not be beside another one
    already, unread = drained_now([a for a in accesses if a.name in switches], open_session, run_id)
    if unread:
        for name, why in unread.items():
            err.print(f"{name}: its maintenance state could not be read: {why}", markup=False)
        err.print(f"nothing was changed: a {verb} needs to know which switches are drained", markup=False)
        raise typer.Exit(EXIT_FINDINGS)
    if already:
        err.print(f"in maintenance mode already: {', '.join(sorted(already))}", markup=False)
    if drain:
        _check_limits(plan, [*sorted(already - set(names)), *names], names, rail_leaves_at_once)
    chosen = [a for a in accesses if a.name in names]
    changed = set_maintenance(chosen, open_session, run_id, drain)
    failed = {c.name: c.error for c in changed if c.error is not None}
    for name, error in failed.items():
        err.print(f"{name}: {verb} failed: {error}", markup=False)
    done = {c.name for c in changed if c.error is None}
    still = (already | done) if drain else (already - done)
    rows = wait_for_neighbours(plan, accesses, open_session, run_id, done, still, timeout) if done else []
    moved = bool(done) and not failed and not any(r.failed for r in rows)
    # once the traffic has moved, nothing may be left queueing on the drained switches' lossless queue either
    quiet = wait_until_quiet(plan, accesses, open_session, run_id, done, timeout) if moved and drain else []
    settled = moved and not any(r.failed for r in quiet)
    if as_json:
        print(json.dumps({"command": verb, "devices": sorted(done), "failed": failed, "moved": moved,
                          "quiet": settled if drain and moved else None,
                          "checks": [_row_json(r, "prefix") for r in rows],
                          "queues": [_row_json(r, "port") for r in quiet]}, indent=2))
    for r in [*rows, *quiet]:
        if r.failed:
            err.print(f"{r.device} {r.port}: expected {r.expected}, observed {r.observed}", markup=False)
    said = err if as_json else out
    for r in quiet:
        said.print(f"{r.device}: lossless queue {'quiet' if r.verdict.value == 'pass' else 'not judged'}: "
                   f"{r.observed} (expected {r.expected})", markup=False)
    if settled:
        read = f"{len(rows)} route(s) on {len({r.device for r in rows})} neighbour(s) as expected" if rows else \
            "no planned route runs through it, so no neighbour had routes to read"
        said.print(f"{verb}ed {', '.join(sorted(done))}: {read}", markup=False)
        raise typer.Exit(EXIT_OK)
    if moved:
        err.print(f"{', '.join(sorted(done))} still drained: the routes moved, but the lossless queue was not quiet "
                  f"within {timeout:g} s", markup=False)
    elif done:
        state = "still drained" if drain else "out of maintenance mode, but"
        err.print(f"{', '.join(sorted(done))} {state}: the neighbours' routes did not agree within {timeout:g} s",
                  markup=False)
    raise typer.Exit(EXIT_FINDINGS)


def _row_json(r: Row, where: str) -> dict[str, str]:
    return {"device": r.device, where: r.port, "check": r.check, "expected": r.expected, "observed": r.observed,
            "verdict": r.verdict.value}


def _check_limits(plan: FabricPlan, together: list[str], names: list[str], rail_leaves_at_once: int) -> None:
    """Exit 1, nothing changed, unless `together` (the drained switches and `names`) may be drained at once."""
    from rocefab.deploy.drain_limits import drain_steps
    from rocefab.renderers.failure_impact import FabricIndex

    limits = drain_steps(FabricIndex(plan), together, rail_leaves_at_once=rail_leaves_at_once)
    refused = {n: why for n, why in limits.refused.items() if n in names}
    if not refused and len(limits.steps) == 1:
        rails = limits.steps[0].nodes_losing_a_rail
        if rails:
            from rocefab.renderers.slurm_topology import hostlist

            err.print(f"nodes {hostlist(rails)} lose a rail meanwhile: drain them in the scheduler first",
                      markup=False)
        return
    for name, why in refused.items():
        err.print(f"{name}: not drained: {why}; change it in a maintenance window", markup=False)
    if len(limits.steps) > 1:
        err.print("not drained together: " + "; then ".join(", ".join(s.devices) for s in limits.steps)
                  + " (the plan's redundancy allows these steps one after the other; a drained switch counts)",
                  markup=False)
    err.print("nothing was changed", markup=False)
    raise typer.Exit(EXIT_FINDINGS)
