"""The work behind `rocefab diff`, `apply` and `rollback`: inventory, targets, fleet runs, printed results.

Kept apart from the command signatures in `deploy_commands` so that the commands that never touch a device
(validate, plan, render) do not pay for importing the deploy layer.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, EXIT_UNKNOWN, err, out
from rocefab.deploy.fleet import DeviceResult, Fleet, Status, Target, capture_library_logs
from rocefab.deploy.inventory import CredentialError, Inventory, PasswordSource, load_inventory
from rocefab.deploy.lock import LockError, fleet_lock
from rocefab.deploy.session import new_run_id
from rocefab.deploy.targets import InventoryMismatch, build_targets, open_session, rollout_waves, session_factory
from rocefab.deploy.verify.gate import plan_gate
from rocefab.models.loader import IntentLoadError
from rocefab.pipeline_commands import checked_plan
from rocefab.platforms import unit
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import render_fabric

capture_library_logs()  # this module runs only in the command line's deploy commands

_STYLE = {Status.UNCHANGED: "green", Status.PENDING: "yellow", Status.COMMITTED: "green",
          Status.ROLLED_BACK: "magenta", Status.NOT_STARTED: "dim", Status.FAILED: "bold red",
          Status.UNKNOWN: "bold red reverse"}


def _inventory(path: Path) -> Inventory:
    try:
        return load_inventory(path)
    except IntentLoadError as exc:
        for error in exc.errors:
            err.print(str(error), markup=False)
        raise typer.Exit(EXIT_INPUT) from None


def _targets(plan: FabricPlan, inventory: Inventory, only: str | None) -> list[Target]:
    wanted = {n.strip() for n in only.split(",")} if only else None
    try:
        return build_targets(plan, render_fabric(plan), inventory, PasswordSource(), wanted)
    except (InventoryMismatch, CredentialError) as exc:
        err.print(f"{inventory.file}: {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None


def _progress(total: int, verb: str) -> Progress:
    progress = Progress(TextColumn(f"{verb}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                        TimeElapsedColumn(), console=err, transient=True)
    progress.add_task("", total=total)
    return progress


def _run(progress: Progress, fleet: Fleet) -> Fleet:
    task = progress.task_ids[0]
    fleet.progress = lambda device, event: progress.update(task, advance=1, description=f"{device} {event}")
    return fleet


def _print_diffs(results: Sequence[DeviceResult]) -> None:
    for r in results:
        if not r.diff:
            continue
        out.print(f"[bold]--- {escape(r.name)} ({r.kind})[/]")
        for line in r.diff.splitlines():
            style = "green" if line.startswith(("+", "nv set")) else "red" if line.startswith(("-", "nv unset")) \
                else "yellow" if line.startswith("DRIFT") else ""
            out.print(f"[{style}]{escape(line)}[/]" if style else escape(line))


def _table(results: Sequence[DeviceResult], title: str) -> None:
    table = Table(title=title, title_justify="left")
    for column in ("device", "kind", "status", "+", "-", "seconds", "detail"):
        table.add_column(column, justify="right" if column in ("+", "-", "seconds") else "left")
    for r in results:
        lines = r.diff.splitlines()
        plus = sum(line.startswith(("+", "nv set", "DRIFT")) for line in lines)
        minus = sum(line.startswith(("-", "nv unset")) for line in lines)
        detail = r.error or ""
        if r.library_said and r.status in (Status.FAILED, Status.UNKNOWN):
            detail += f" [library: {'; '.join(r.library_said)}]"
        table.add_row(r.name, r.kind, f"[{_STYLE[r.status]}]{escape(r.status.value)}[/]", str(plus), str(minus),
                      f"{r.seconds:.1f}", escape(detail))
    out.print(table)
    for r in results:
        for note in r.cleaned:
            err.print(f"{r.name}: {note}", markup=False)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    out.print(", ".join(f"{n} {status}" for status, n in counts.items()))


def _exit_for(results: Sequence[DeviceResult], intent: Path | None, inventory: Path,
              backup: Path | None) -> None:
    """Exit 3 when any device's state is unknown (saying how to find out), 1 when anything failed."""
    unknown = [r.name for r in results if r.status is Status.UNKNOWN]
    if unknown:
        names = ",".join(unknown)
        err.print(f"state unknown for {len(unknown)} device(s): {', '.join(unknown)}", markup=False)
        if intent is not None:
            err.print(f"  see what each runs now against the intent: rocefab diff {intent} -i {inventory} "
                      f"--only {names}", markup=False)
        if backup is not None:
            err.print(f"  put them back as they were before this run: rocefab rollback -i {inventory} --backup "
                      f"{backup} --only {names}", markup=False)
        raise typer.Exit(EXIT_UNKNOWN)
    if any(r.status is Status.FAILED for r in results):
        raise typer.Exit(EXIT_FINDINGS)


@contextlib.contextmanager
def _locked(inventory: Path, command: str, run_id: str, force_unlock: bool) -> Iterator[None]:
    try:
        with fleet_lock(inventory, command, run_id, force_unlock) as notes:
            for note in notes:
                err.print(note, markup=False)
            yield
    except LockError as exc:
        err.print(f"{exc}; nothing was changed", markup=False)
        raise typer.Exit(EXIT_INPUT) from None


def dry_run(intent: Path, inventory_path: Path, concurrency: int, only: str | None, merge: bool,
             clear_stale: bool, force_unlock: bool = False) -> None:
    plan = checked_plan(intent)
    inventory = _inventory(inventory_path)
    targets = _targets(plan, inventory, only)
    run_id = new_run_id()
    with _locked(inventory_path, "diff", run_id, force_unlock), _progress(len(targets), "dry run") as progress:
        fleet = Fleet(targets, session_factory(clear_stale), concurrency, replace=not merge, run_id=run_id,
                      clean_leftovers=True)
        results = _run(progress, fleet).dry_run()
    _print_diffs(results)
    _table(results, "dry run: staged, diffed and discarded - nothing was changed")
    _exit_for(results, intent, inventory_path, None)


def apply(intent: Path, inventory: Path, canary_groups: int, confirm_s: int, backup_dir: Path, concurrency: int,
          only: str | None, merge: bool, clear_stale: bool, force_unlock: bool = False, verify: bool = True) -> None:
    sessions = session_factory(clear_stale)
    plan = checked_plan(intent)
    targets = _targets(plan, _inventory(inventory), only)
    names = {t.name for t in targets}
    waves = [[n for n in wave if n in names] for wave in rollout_waves(plan, canary_groups)]
    waves = [wave for wave in waves if wave]
    run_id = new_run_id()
    folder = backup_dir / run_id
    switches = [t for t in targets if unit(t.access.kind).session().has_backup]
    with _locked(inventory, "apply", run_id, force_unlock):
        with _progress(len(switches), "backup") as progress:
            backups = _run(progress, Fleet(switches, sessions, concurrency, run_id=run_id,
                                           clean_leftovers=True)).backup(folder)
        if any(r.status is not Status.UNCHANGED for r in backups):
            _table(backups, f"backup to {folder} failed - nothing was changed")
            raise typer.Exit(EXIT_FINDINGS)
        err.print(f"running configs of {len(switches)} switches saved in {folder}", markup=False)
        with _progress(len(targets) * 2, "apply") as progress:
            # the gate waits for sessions to settle up to a quarter of the revert window (a minute at most)
            fleet = Fleet(targets, sessions, concurrency, replace=not merge, run_id=run_id,
                          gate=plan_gate(plan) if verify else None,
                          settle_s=min(60.0, confirm_s / 4) if confirm_s else 60.0)
            results = _run(progress, fleet).apply(waves, confirm_s or None)
    _print_diffs([r for r in results if r.status in (Status.COMMITTED, Status.FAILED, Status.UNKNOWN)])
    _table(results, f"apply in {len(waves)} wave(s): {' | '.join(str(len(w)) for w in waves)} devices")
    if any(r.status in (Status.FAILED, Status.UNKNOWN) for r in results):
        err.print(f"stopped; restore everything with: rocefab rollback --inventory {inventory} --backup {folder}",
                  markup=False)
    _exit_for(results, intent, inventory, folder)


def rollback(inventory: Path, backup: Path, concurrency: int, confirm_s: int, only: str | None = None,
             force_unlock: bool = False) -> None:
    try:
        index = json.loads((backup / "backup.json").read_text(encoding="utf-8"))["devices"]
    except (OSError, ValueError, KeyError) as exc:
        err.print(f"{backup}: not a rocefab backup ({exc})", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    if only:
        wanted = {n.strip() for n in only.split(",")}
        missing = sorted(wanted - set(index))
        if missing:
            err.print(f"{backup}: holds no backup of: {', '.join(missing)}", markup=False)
            raise typer.Exit(EXIT_INPUT)
        index = {name: kind for name, kind in index.items() if name in wanted}
    inv = _inventory(inventory)
    missing = [name for name in index if name not in inv.devices]
    if missing:
        err.print(f"{inv.file}: the inventory has no entry for: {', '.join(missing)}", markup=False)
        raise typer.Exit(EXIT_INPUT)
    passwords = PasswordSource()
    try:
        targets = [Target(inv.access(name, kind, passwords), (backup / f"{name}.cfg").read_text(encoding="utf-8"))
                   for name, kind in sorted(index.items())]
    except CredentialError as exc:
        err.print(str(exc), markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    run_id = new_run_id()
    with _locked(inventory, "rollback", run_id, force_unlock), _progress(len(targets), "rollback") as progress:
        fleet = Fleet(targets, open_session, concurrency, run_id=run_id, clean_leftovers=True)
        results = _run(progress, fleet).apply([[t.name for t in targets]], confirm_s or None)
    _table(results, f"rollback to {backup}")
    _exit_for(results, None, inventory, None)
