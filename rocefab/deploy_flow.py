"""The work behind `rocefab diff` and `apply`: inventory, targets, fleet runs, the confirmation, exit codes.

Kept apart from the command signatures in `deploy_commands` so that the commands that never touch a device
(validate, plan, render) do not pay for importing the deploy layer. What is printed is in `deploy_report`;
`rollback` is in `rollback_flow`; pushing a rendered folder instead of rendering again is `deploy_rendered`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rocefab import deploy_report as report
from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, EXIT_UNKNOWN, err, out
from rocefab.deploy.device_lock import Mark, own_mark
from rocefab.deploy.drain import SessionFactory, cannot_drain, drained_now
from rocefab.deploy.drain_limits import drain_plan, plan_json
from rocefab.deploy.drain_run import drain_hooks, drain_waves
from rocefab.deploy.durable import MIN_FREE_BYTES, writable_with_room
from rocefab.deploy.fleet import DeviceResult, Fleet, Status, Target, WaveHooks, reload_refusal
from rocefab.deploy.inventory import Access, CredentialError, Inventory, PasswordSource, load_inventory
from rocefab.deploy.library_logs import capture_library_logs
from rocefab.deploy.session import new_run_id
from rocefab.deploy.stop import StopRequest, stop_on_signals
from rocefab.deploy.targets import InventoryMismatch, build_targets, plan_accesses, rollout_waves, session_factory
from rocefab.deploy.verify.gate import plan_gate
from rocefab.models.loader import IntentLoadError
from rocefab.pipeline_commands import checked_plan
from rocefab.platforms import unit
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import RenderedFile, device_files, shared_files

capture_library_logs()  # this module runs only in the command line's deploy commands


@dataclass(frozen=True)
class Shown:
    """How a run reports: `as_json` one JSON document on stdout; `exit_code` exit 1 when anything would change;
    `groups` one diff per group of devices that change alike, instead of every device's."""

    as_json: bool = False
    exit_code: bool = False
    groups: bool = False


PLAIN = Shown()


@dataclass(frozen=True)
class Source:
    """Where the candidates come from: rendered again from the intent, or a folder `rocefab render` wrote."""

    rendered: Path | None = None
    allow_edited: bool = False


RENDER = Source()


def _inventory(path: Path) -> Inventory:
    try:
        return load_inventory(path)
    except IntentLoadError as exc:
        for error in exc.errors:
            err.print(str(error), markup=False)
        raise typer.Exit(EXIT_INPUT) from None


def _wanted(only: str | None) -> set[str] | None:
    return {n.strip() for n in only.split(",") if n.strip()} if only else None


def _files(intent: Path, plan: FabricPlan, source: Source, only: str | None) -> list[RenderedFile]:
    if source.rendered is None:  # the devices' own files and what they share: never the fabric-wide artifacts
        return device_files(plan, range(len(plan.switches) + len(plan.hosts))) + shared_files(plan)
    from rocefab import deploy_rendered

    wanted = _wanted(only)
    return deploy_rendered.reviewed_files(intent, source.rendered, source.allow_edited,
                                          sorted(wanted) if wanted is not None else None)


def _targets(plan: FabricPlan, files: Sequence[RenderedFile], inventory: Inventory, only: str | None) -> list[Target]:
    from rocefab.platforms.host.library import LibraryMismatch

    try:
        return build_targets(plan, files, inventory, PasswordSource(), _wanted(only))
    except (InventoryMismatch, CredentialError) as exc:
        err.print(f"{inventory.file}: {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    except LibraryMismatch as exc:
        err.print(f"{exc}; nothing was changed", markup=False)
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


def outcome(results: Sequence[DeviceResult], changes_fail: bool = False) -> int:
    """3 when any device's state is unknown, 1 when any failed or awaits a revert (or, with `changes_fail`, would
    change), else 0."""
    if any(r.status is Status.UNKNOWN for r in results):
        return EXIT_UNKNOWN
    if any(r.status in (Status.FAILED, Status.AWAITING_REVERT) for r in results):
        return EXIT_FINDINGS
    if changes_fail and any(r.status is Status.PENDING for r in results):
        return EXIT_FINDINGS
    return EXIT_OK


def explain_unknown(results: Sequence[DeviceResult], intent: Path | None, inventory: Path,
                    backup: Path | None) -> None:
    """On stderr: which devices' state is unknown and what to run to find out."""
    unknown = [r.name for r in results if r.status is Status.UNKNOWN]
    if not unknown:
        return
    names = ",".join(unknown)
    err.print(f"state unknown for {len(unknown)} device(s): {', '.join(unknown)}", markup=False)
    if intent is not None:
        err.print(f"  see what each runs now against the intent: rocefab diff {intent} -i {inventory} "
                  f"--only {names}", markup=False)
    if backup is not None:
        err.print(f"  put them back as they were before this run: rocefab rollback -i {inventory} --backup "
                  f"{backup} --only {names}", markup=False)


def release_marks(fleet: Fleet) -> None:
    """End of a run that changes devices: its lock mark comes off every device that carries it; one that could not
    be removed is said, with how it goes away."""
    failed = fleet.release_marks()
    for name, why in sorted(failed.items()):
        err.print(f"{name}: this run's lock mark stays on it ({why}); the next rocefab run from this host removes "
                  "it, a run from elsewhere needs --force-unlock", markup=False)


def marks_left(fleet: Fleet | None) -> None:
    """Said on a second signal, which exits without removing the run's lock marks."""
    if fleet is not None and fleet.claimed:
        err.print(f"this run's lock mark stays on {len(fleet.claimed)} device(s); the next rocefab run from this host "
                  "removes it (this process is gone by then)", markup=False)


def on_terminal() -> bool:
    """Someone is there to answer: stdin and stdout are both a terminal."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _dry_run(targets: Sequence[Target], clear_stale: bool, concurrency: int, merge: bool,
             run_id: str, mark: Mark | None = None, force_unlock: bool = False) -> list[DeviceResult]:
    with _progress(len(targets), "dry run") as progress:
        # Read-only: what earlier runs left on a device (files, sessions, a commit awaiting its confirm, a lock
        # mark) is reported, never removed or settled here. A device another run holds is not compared.
        fleet = Fleet(targets, session_factory(clear_stale), concurrency, replace=not merge, run_id=run_id,
                      mark=mark, force_unlock=force_unlock)
        return _run(progress, fleet).dry_run()


def _stop_before_change(stop: StopRequest, targets: Sequence[Target], shown: Shown, run_id: str, when: str) -> None:
    """A signal arrived before any commit: end here, saying so, with every device as it was (pending commits
    settled excepted, which the preflight printed)."""
    if not stop.requested:
        return
    results = [DeviceResult(t.name, t.access.kind, Status.NOT_STARTED, error=f"{stop.reason()} {when}")
               for t in targets]
    if shown.as_json:
        report.print_json("apply", results, stop.exit_code, run_id=run_id, stage="stopped", backup=None)
    else:
        report.print_table(results, f"{stop.reason()} {when} - no device was changed")
    raise typer.Exit(stop.exit_code)


def _preflight(fleet: Fleet, shown: Shown) -> dict[str, list[str]]:
    """Before anything changes: every device of the run is reached and logged in to and carries the run's lock mark,
    and every commit awaiting its confirm is settled (kept if it is what this run pushes and passes the gate, else
    reverted) and said so. A device not reached or held by another run stops the run with nothing changed (exit
    1); one left in doubt exits 3. `--yes` does not skip this. What was settled or removed, per device."""
    targets, run_id = fleet.targets, fleet.run_id
    with _progress(len(targets), "reaching and locking every device") as progress:
        results = _run(progress, fleet).preflight()
    report.print_cleaned(results)
    stopped = [r for r in results if r.status is not Status.NOT_CHECKED]
    if stopped:
        code = outcome(stopped)
        for r in results:
            if r.status is Status.NOT_CHECKED:
                r.status = Status.NOT_STARTED
        title = (f"{len(stopped)} of {len(results)} device(s) could not be reached, locked or settled before the "
                 "first commit - nothing was changed" + (" except the pending commits settled above" if any(
                     r.cleaned for r in results) else ""))
        if shown.as_json:
            report.print_json("apply", results, code, run_id=run_id, stage="preflight", backup=None)
        else:
            report.print_table(stopped, title)
        raise typer.Exit(code)
    return {r.name: r.cleaned for r in results if r.cleaned}


def dry_run(intent: Path, inventory_path: Path, concurrency: int, only: str | None, merge: bool,
            clear_stale: bool, force_unlock: bool = False, shown: Shown = PLAIN,
            source: Source = RENDER, rail_leaves_at_once: int = 1) -> None:
    plan = checked_plan(intent)
    inventory = _inventory(inventory_path)
    targets = _targets(plan, _files(intent, plan, source, only), inventory, only)
    run_id = new_run_id()
    results = _dry_run(targets, clear_stale, concurrency, merge, run_id, force_unlock=force_unlock)
    report.print_cleaned(results)
    code = outcome(results, shown.exit_code)
    explain_unknown(results, intent, inventory_path, None)
    groups = report.diff_groups(results, [sw.name for sw in plan.switches] + [h.name for h in plan.hosts])
    drain = drain_plan(plan, {r.name: r.disruption.disruption for r in results
                              if r.status is Status.PENDING and r.disruption is not None}, rail_leaves_at_once)
    if shown.as_json:
        report.print_json("diff", results, code, run_id=run_id, groups=report.group_json(groups, results),
                          disruption=report.disruption_json(results), drain=plan_json(drain))
    else:
        if shown.groups:
            report.print_group_diffs(results, groups)
        else:
            report.print_diffs(results)
        report.print_replace_previews(results)
        report.print_groups(groups, results=results)
        report.print_disruption_total(results)
        report.print_drain_plan(drain)
        report.print_table(results, "dry run: staged, diffed and discarded - nothing was changed")
    raise typer.Exit(code)


def _refuse_unconfirmed() -> None:
    err.print("apply changes devices and asks first on a terminal; there is none here (stdin or stdout is not "
              "a terminal): pass --yes to apply without asking. Nothing was changed.", markup=False)
    raise typer.Exit(EXIT_INPUT)


def _confirmed(targets: Sequence[Target], clear_stale: bool, concurrency: int, merge: bool, mark: Mark,
               shown: Shown) -> tuple[bool, list[DeviceResult], frozenset[str]]:
    """The review pass on a terminal: what each device would change, then one question per group of devices that
    change alike (one member's diff shown above it). Returns whether to go on, the pass's results and the devices
    whose group was approved; (False, ...) when there is nothing to change (said so); exits when the pass failed or
    every group was declined."""
    run_id = mark.run_id
    results = _dry_run(targets, clear_stale, concurrency, merge, run_id, mark)
    changing = [r for r in results if r.status is Status.PENDING]
    screen = err if shown.as_json else out
    if shown.as_json:
        err.print(report.summary(results), markup=False)
    else:
        report.print_replace_previews(results)
        report.print_table(results, "what apply would change (rocefab diff shows the lines)")
    code = outcome(results)
    if code != EXIT_OK:
        screen.print("the review pass failed: nothing was changed", markup=False)
    elif not changing:
        screen.print(f"nothing to change on {len(results)} device(s)", markup=False)
        return False, results, frozenset()
    else:
        approved = _ask_per_group(results, [t.name for t in targets], shown)
        if approved:
            return True, results, approved
        screen.print("not applied: nothing was changed", markup=False)
        code = EXIT_FINDINGS
    if shown.as_json:
        report.print_json("apply", results, code, run_id=run_id, stage="review", backup=None)
    raise typer.Exit(code)


def _ask_per_group(results: Sequence[DeviceResult], names: Sequence[str], shown: Shown) -> frozenset[str]:
    """One question per group of devices whose changes are alike: the devices of the groups answered yes. With
    several groups each question follows its group's example diff (on a JSON run the diff would break the
    document on stdout, so only the group's line is shown, on stderr)."""
    groups = report.diff_groups(results, names)
    approved: set[str] = set()
    for i, group in enumerate(groups, 1):
        if len(groups) > 1:
            if shown.as_json:
                report.print_groups([group], first=i, total=len(groups), results=results)
            else:
                report.print_group_diffs(results, [group], first=i, total=len(groups))
            question = (f"Apply group {i} of {len(groups)}: these changes to {len(group.members)} {group.kind} "
                        "device(s)?")
        else:
            question = f"Apply these changes to {len(group.members)} devices?"
        if typer.confirm(question, default=False, err=shown.as_json):
            approved.update(group.members)
        elif len(groups) > 1:
            err.print(f"group {i} declined: {report.names(group.members, 6)} stay as they are", markup=False,
                      soft_wrap=True)
    return frozenset(approved)


def _reload_step(fleet: Fleet, shown: Shown, accept: bool) -> frozenset[str]:
    """Before the review and the backup: the devices whose change the switch applies only after a reload, read from
    their running configs. Without `accept` such a run is refused with nothing changed (exit 1), saying what to do;
    with it, those devices are what the run may commit them on."""
    read = fleet.reload_changes()
    failed = [r for r in read if r.status not in (Status.PENDING, Status.UNCHANGED)]
    needing = [r for r in read if r.status is Status.PENDING and r.reload]
    if failed:
        if shown.as_json:
            report.print_json("apply", failed, EXIT_FINDINGS, run_id=fleet.run_id, stage="reload-check", backup=None)
        else:
            report.print_table(failed, "the devices could not be diffed to find changes that need a reload - "
                                       "nothing was changed")
        raise typer.Exit(EXIT_FINDINGS)
    if needing and not accept:
        for r in needing:
            r.status, r.error = Status.FAILED, reload_refusal(r.name, r.reload)
            err.print(f"{r.name}: {r.error}", markup=False, soft_wrap=True)
        if shown.as_json:
            report.print_json("apply", needing, EXIT_FINDINGS, run_id=fleet.run_id, stage="reload-check",
                              backup=None)
        else:
            report.print_table(needing, f"{len(needing)} device(s) would change what the switch applies only after a "
                                        "reload - nothing was changed")
        raise typer.Exit(EXIT_FINDINGS)
    for r in needing:
        err.print(f"{r.name}: changes {', '.join(r.reload)}, which the switch applies only after a reload; pushed in a "
                  "step of its own after the other waves (--accept-reload)", markup=False)
    return frozenset(r.name for r in needing)


def _every_switch(plan: FabricPlan, inventory: Inventory) -> list[Access]:
    """How to reach every switch of the plan, in the run or not: a drain reads the neighbours of what it drains."""
    try:
        return [a for a in plan_accesses(plan, inventory, PasswordSource()) if unit(a.kind).is_switch]
    except (InventoryMismatch, CredentialError) as exc:
        err.print(f"{inventory.file}: {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None


def _drain_step(plan: FabricPlan, locking: Fleet, targets: Sequence[Target], every: Sequence[Access],
                waves: list[list[str]],
                reviewed: Sequence[DeviceResult] | None, sessions: SessionFactory, run_id: str, timeout_s: float,
                shown: Shown, rail_leaves_at_once: int = 1) -> tuple[list[list[str]], WaveHooks | None]:
    """apply --drain, before the backup: each switch's disruption class (from the review, or staged and discarded
    now), the drain plan, and the waves with its steps; refused with nothing changed where a switch cannot be
    drained or is drained already."""
    known = list(reviewed) if reviewed else locking.switch_changes()
    failed = [r for r in known if r.status not in (Status.PENDING, Status.UNCHANGED)]
    if failed:
        report.print_table(failed, "the switches could not be diffed to find what needs draining - nothing was "
                                   "changed")
        raise typer.Exit(EXIT_FINDINGS)
    switch_accesses = list(every)
    already, unread = drained_now(switch_accesses, sessions, run_id)
    classes = {r.name: r.disruption.disruption for r in known if r.status is Status.PENDING and r.disruption}
    drains = drain_plan(plan, classes, rail_leaves_at_once)
    problems = [f"{name}: its maintenance state could not be read: {why}" for name, why in unread.items()]
    problems += [f"{name}: drained already: undrain it first, or apply without --drain" for name in sorted(already)]
    problems += [f"{name}: not drainable: {why}; apply it without --drain in a maintenance window"
                 for name, why in drains.refused.items()]
    stepped = {d for s in drains.steps for d in s.devices}
    problems += [f"{a.name}: not drainable: {why}; apply it without --drain in a maintenance window"
                 for a in switch_accesses if a.name in stepped and (why := cannot_drain(plan, a)) is not None]
    if problems:
        for line in problems:
            err.print(line, markup=False, soft_wrap=True)
        err.print("apply --drain refused: nothing was changed", markup=False)
        raise typer.Exit(EXIT_FINDINGS)
    if not shown.as_json:
        report.print_drain_plan(drains, applying=True)
    steps = [list(step.devices) for step in drains.steps]
    hooks = drain_hooks(plan, switch_accesses, sessions, run_id, steps, timeout_s,
                        lambda text: err.print(text, markup=False, soft_wrap=True))
    return drain_waves(waves, steps), hooks


def _reload_last(waves: list[list[str]], reloading: frozenset[str]) -> list[list[str]]:
    """Each reload-class device in a step of its own, right after the rest of its wave (so hosts still follow their
    leaves, and a pair's two switches go one after the other).

    >>> _reload_last([["leaf1-a", "leaf1-b"], ["gpu001"], ["spine1", "spine2"]], frozenset({"leaf1-a", "spine1"}))
    [['leaf1-b'], ['leaf1-a'], ['gpu001'], ['spine2'], ['spine1']]
    """
    out: list[list[str]] = []
    for wave in waves:
        ordinary = [n for n in wave if n not in reloading]
        out += [ordinary] if ordinary else []
        out += [[n] for n in wave if n in reloading]
    return out


def apply(intent: Path, inventory: Path, canary_groups: int, confirm_s: int, backup_dir: Path, concurrency: int,
          only: str | None, merge: bool, clear_stale: bool, force_unlock: bool = False, verify: bool = True,
          yes: bool = False, shown: Shown = PLAIN, source: Source = RENDER, accept_reload: bool = False,
          drain_timeout: float | None = None, rail_leaves_at_once: int = 1) -> None:
    if not yes and not on_terminal():
        _refuse_unconfirmed()
    sessions = session_factory(clear_stale)
    plan = checked_plan(intent)
    # The backups are the way back: a folder that cannot take them stops the run before any device is reached.
    problem = writable_with_room(backup_dir, max(MIN_FREE_BYTES, len(plan.switches) * 2**20))
    if problem is not None:
        err.print(f"{backup_dir}: backups cannot be saved: {problem}; nothing was changed", markup=False)
        raise typer.Exit(EXIT_INPUT)
    loaded = _inventory(inventory)
    targets = _targets(plan, _files(intent, plan, source, only), loaded, only)
    names = {t.name for t in targets}
    waves = [[n for n in wave if n in names] for wave in rollout_waves(plan, canary_groups)]
    waves = [wave for wave in waves if wave]
    run_id = new_run_id()
    mark = own_mark(run_id)
    folder = backup_dir / run_id
    switches = [t for t in targets if unit(t.access.kind).session().has_backup]
    hosts = [t for t in targets if not unit(t.access.kind).session().has_backup]
    gate = plan_gate(plan) if verify else None
    locking = Fleet(targets, sessions, concurrency, replace=not merge, run_id=run_id, gate=gate, mark=mark,
                    force_unlock=force_unlock)
    current: list[Fleet] = []  # the fleet applying the waves, once there is one: what a second signal leaves unknown

    def signals() -> contextlib.AbstractContextManager[StopRequest]:
        return stop_on_signals(lambda text: err.print(text, markup=False),
                               lambda: current[0].unsettled() if current else [], lambda: marks_left(locking))

    try:
        with signals() as stop:
            done = _preflight(locking, shown)
        _stop_before_change(stop, targets, shown, run_id, "while every device was reached")
        reloading = _reload_step(locking, shown, accept_reload)
        waves = _reload_last(waves, reloading)
        approved: dict[str, str] | None = None
        reviewed: list[DeviceResult] = []
        if not yes:  # Ctrl-C at the question aborts as it always does: nothing has changed
            go, reviewed, accepted = _confirmed(targets, clear_stale, concurrency, merge, mark, shown)
            if not go:
                if shown.as_json:
                    report.print_json("apply", reviewed, EXIT_OK, run_id=run_id, waves=waves, backup=None)
                raise typer.Exit(EXIT_OK)
            # a declined group's devices leave the run; those with nothing to change stay (they are checked)
            declined = {r.name for r in reviewed if r.status is Status.PENDING and r.name not in accepted}
            targets = [t for t in targets if t.name not in declined]
            switches = [t for t in switches if t.name not in declined]
            hosts = [t for t in hosts if t.name not in declined]
            waves = [kept for wave in waves if (kept := [n for n in wave if n not in declined])]
            approved = {r.name: r.diff for r in reviewed if r.name not in declined}
        hooks = None
        if drain_timeout is not None:
            waves, hooks = _drain_step(plan, locking, targets, _every_switch(plan, loaded), waves,
                                       reviewed if not yes else None, sessions, run_id, drain_timeout, shown,
                                       rail_leaves_at_once)
        with signals() as stop:
            with _progress(len(switches), "backup") as progress:
                backups = _run(progress, Fleet(switches, sessions, concurrency, run_id=run_id,
                                               clean_leftovers=True)).backup(folder, without_backup=hosts)
            if any(r.status is not Status.NOT_CHECKED for r in backups):
                if shown.as_json:
                    report.print_json("apply", backups, EXIT_FINDINGS, run_id=run_id, waves=waves,
                                      backup=str(folder), stage="backup")
                else:
                    report.print_table(backups, f"backup to {folder} failed - nothing was changed")
                raise typer.Exit(EXIT_FINDINGS)
            _stop_before_change(stop, targets, shown, run_id, f"after the backup to {folder}")
            report.print_cleaned(backups)
            for r in backups:
                done.setdefault(r.name, []).extend(r.cleaned)
            err.print(f"running configs of {len(switches)} switches saved in {folder}", markup=False)
            with _progress(len(targets) * 2, "apply") as progress:
                # the gate waits for sessions to settle up to a quarter of the revert window (a minute at most)
                fleet = Fleet(targets, sessions, concurrency, replace=not merge, run_id=run_id,
                              clean_leftovers=True, gate=gate,
                              settle_s=min(60.0, confirm_s / 4) if confirm_s else 60.0, reviewed=approved, stop=stop,
                              mark=mark, accept_reload=reloading, hooks=hooks)
                current.append(fleet)
                results = _run(progress, fleet).apply(waves, confirm_s or None)
    finally:
        with signals():
            release_marks(locking)
    report.print_cleaned(results)
    for r in results:  # what was done before the waves belongs to each device's line too
        r.cleaned[:0] = done.get(r.name, [])
    code = outcome(results)
    if stop.requested and code != EXIT_UNKNOWN:
        code = stop.exit_code
    if stop.requested or any(r.status in (Status.FAILED, Status.UNKNOWN) for r in results):
        err.print(f"stopped; restore everything with: rocefab rollback --inventory {inventory} --backup {folder}",
                  markup=False)
    explain_unknown(results, intent, inventory, folder)
    for r in results:
        if r.status is Status.COMMITTED and r.reload:
            err.print(f"{r.name}: {', '.join(r.reload)} committed; the switch applies it only after a reload: drain "
                      f"{r.name}, then reload it", markup=False)
    if shown.as_json:
        report.print_json("apply", results, code, run_id=run_id, waves=waves, backup=str(folder))
    else:
        report.print_diffs([r for r in results if r.status in (Status.COMMITTED, Status.FAILED, Status.UNKNOWN)])
        out.print(report.wave_line(waves), soft_wrap=True, markup=False)
        report.print_table(results, "apply")
    raise typer.Exit(code)
