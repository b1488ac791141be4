"""`rocefab diff`, `rocefab apply` and `rocefab rollback`: their arguments and help; the work is in
`deploy_flow` and `rollback_flow`, imported only when one of them runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rocefab.console import EXIT_INPUT, err

INVENTORY_ENV = "ROCEFAB_INVENTORY"
InventoryOpt = Annotated[Path, typer.Option("--inventory", "-i", envvar=INVENTORY_ENV, show_envvar=True,
                                            help="inventory YAML: where each device is")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", "-j", min=1, max=256, help="devices at once")]
OnlyOpt = Annotated[str | None, typer.Option("--only", help="comma-separated device names")]
MergeOpt = Annotated[bool, typer.Option("--merge", help="add the rendered lines instead of replacing the config")]
StaleOpt = Annotated[bool, typer.Option("--clear-stale-sessions",
                                        help="EOS: abort pending NAPALM sessions a crashed run left behind")]
UnlockOpt = Annotated[bool, typer.Option(
    "--force-unlock", help="remove other runs' lock marks from the run's devices (once those runs are known to be "
                           "over)")]
RailLeavesOpt = Annotated[int, typer.Option(
    "--rail-leaves-at-once", min=1, max=1024,
    help="rail leaves drained in one step, each of another rail block (every node loses at most one rail NIC); the "
         "nodes losing one are named per step")]
JsonOpt = Annotated[bool, typer.Option(
    "--json", help="print one JSON document on stdout (per device: name, kind, status, diff lines, +/- counts, "
                   "error, seconds; the run's summary and exit code); progress and notes stay on stderr")]
ExitCodeOpt = Annotated[bool, typer.Option(
    "--exit-code", help="exit 1 when anything would change, 0 when nothing would (as `git diff --exit-code`)")]
RenderedOpt = Annotated[Path | None, typer.Option(
    "--rendered", metavar="OUT", file_okay=False,
    help="push the device files of this `rocefab render` folder as they were reviewed, instead of rendering "
         "again; refused if it was rendered from another intent or rocefab version, or a device file was edited")]
EditedOpt = Annotated[bool, typer.Option(
    "--allow-edited", help="with --rendered: push edited device files as they are (listed on stderr)")]
GroupsOpt = Annotated[bool, typer.Option(
    "--groups", help="print one device's diff per group of devices that change alike (names, addresses, ASNs and "
                     "ports set aside), naming the others, instead of every device's diff")]
BackupDirOpt = Annotated[Path, typer.Option("--backup-dir", help="where apply saves running configs first")]
DEFAULT_BACKUPS = Path("rocefab-backups")


def diff(intent: Annotated[Path, typer.Argument(help="intent YAML file")], inventory: InventoryOpt,
         concurrency: ConcurrencyOpt = 16, only: OnlyOpt = None, merge: MergeOpt = False,
         clear_stale_sessions: StaleOpt = False, force_unlock: UnlockOpt = False, as_json: JsonOpt = False,
         exit_code: ExitCodeOpt = False, rendered: RenderedOpt = None, allow_edited: EditedOpt = False,
         groups: GroupsOpt = False) -> None:
    """Show, per device, what applying the intent would change (running vs candidate, as unified diffs), and the
    groups of devices that change alike.
    Changes nothing. Exit 0 done (with --exit-code: nothing would change), 1 a device failed (with
    --exit-code: or something would change), 2 bad input or the inventory is locked, 3 a device's state is
    unknown."""
    from rocefab import deploy_flow

    deploy_flow.dry_run(intent, inventory, concurrency, only, merge, clear_stale_sessions, force_unlock,
                        deploy_flow.Shown(as_json, exit_code, groups), deploy_flow.Source(rendered, allow_edited))


def apply(
    intent: Annotated[Path, typer.Argument(help="intent YAML file")],
    inventory: InventoryOpt,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="stage, diff and discard: change nothing")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="apply without asking (needed without a terminal)")] = False,
    canary_groups: Annotated[int, typer.Option(
        "--canary", min=0, help="leaf groups (a ToR pair, or one leaf per rail) and their hosts first")] = 1,
    confirm_s: Annotated[int, typer.Option("--confirm", min=0, max=86399,
                                           help="revert window in seconds where the platform has one")] = 300,
    backup_dir: BackupDirOpt = DEFAULT_BACKUPS,
    concurrency: ConcurrencyOpt = 16,
    only: OnlyOpt = None,
    merge: MergeOpt = False,
    clear_stale_sessions: StaleOpt = False,
    force_unlock: UnlockOpt = False,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="skip the verify gate after each commit")] = False,
    accept_reload: Annotated[bool, typer.Option(
        "--accept-reload", help="push changes a switch applies only after a reload (NX-OS dynamic load balancing), "
                                "each in a step of its own after the other waves; the switch is not reloaded")] = False,
    drain: Annotated[bool, typer.Option(
        "--drain", help="drain each switch whose change is beyond hitless (its NOS's maintenance mode, the drain "
                        "plan's steps), commit and verify it, then undrain it; refused where the plan cannot spare a "
                        "switch")] = False,
    drain_timeout: Annotated[float, typer.Option(
        "--drain-timeout", min=1, help="seconds to wait for the neighbours' routes after a drain or undrain")] = 120.0,
    rail_leaves: RailLeavesOpt = 1,
    as_json: JsonOpt = False,
    exit_code: Annotated[bool, typer.Option(
        "--exit-code", help="with --dry-run: exit 1 when anything would change, 0 when nothing would")] = False,
    rendered: RenderedOpt = None,
    allow_edited: EditedOpt = False,
    groups: GroupsOpt = False,
) -> None:
    """Push the intent: on a terminal, first show what each device would change and ask (`--yes` skips the
    question; without a terminal it is required; a device whose diff changes after the question is not
    committed); a change a switch applies only after a reload is refused unless --accept-reload; back up every
    switch, then canary, then the rest (then each accepted reload-class change on its own); commit
    with a revert window, check that each device runs the candidate and passes verify's checks (across links
    only towards devices of this run already done), confirm; on a failure roll the wave back (and read each
    device back) and stop.
    Exit 0 done (or nothing to change), 1 stopped with every device's state known (or not confirmed; with
    --dry-run --exit-code: something would change), 2 bad input, no --yes without a terminal, or the
    inventory is locked, 3 a device's state is unknown (the output says how to check it)."""
    from rocefab import deploy_flow

    if exit_code and not dry_run:  # a push's exit status already says what happened; refuse rather than ignore
        err.print("--exit-code needs --dry-run (a push exits 0 done, 1 stopped, 3 state unknown)", markup=False)
        raise typer.Exit(EXIT_INPUT)
    if groups and not dry_run:
        err.print("--groups needs --dry-run (a push prints what it did per device)", markup=False)
        raise typer.Exit(EXIT_INPUT)
    shown, source = deploy_flow.Shown(as_json, exit_code, groups), deploy_flow.Source(rendered, allow_edited)
    if dry_run:
        deploy_flow.dry_run(intent, inventory, concurrency, only, merge, clear_stale_sessions, force_unlock, shown,
                            source, rail_leaves)
    else:
        deploy_flow.apply(intent, inventory, canary_groups, confirm_s, backup_dir, concurrency, only, merge,
                          clear_stale_sessions, force_unlock, verify=not no_verify, yes=yes, shown=shown,
                          source=source, accept_reload=accept_reload,
                          drain_timeout=drain_timeout if drain else None, rail_leaves_at_once=rail_leaves)


def rollback(
    inventory: InventoryOpt,
    backup: Annotated[Path | None, typer.Option("--backup", help="a backup folder written by `rocefab apply`")] = None,
    latest: Annotated[bool, typer.Option("--latest", help="the newest backup under --backup-dir")] = False,
    backup_dir: BackupDirOpt = DEFAULT_BACKUPS,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="show what the rollback would change (backup vs running); change nothing")] = False,
    concurrency: ConcurrencyOpt = 16,
    confirm_s: Annotated[int, typer.Option("--confirm", min=0, max=86399)] = 300,
    only: OnlyOpt = None,
    force_unlock: UnlockOpt = False,
    as_json: JsonOpt = False,
    exit_code: Annotated[bool, typer.Option(
        "--exit-code", help="with --dry-run: exit 1 when anything would change, 0 when nothing would")] = False,
) -> None:
    """Restore every switch of a backup (or those --only names) to the running config saved there. Hosts have
    no saved config: the output lists the backed-up run's hosts as left as they are.
    Exit 0 done (with --dry-run --exit-code: nothing would change), 1 a device failed (or would change), 2 bad
    input or the inventory is locked, 3 a device's state is unknown."""
    from rocefab import deploy_flow, rollback_flow

    rollback_flow.rollback(inventory, backup, latest, backup_dir, concurrency, confirm_s, only, force_unlock,
                           dry_run, deploy_flow.Shown(as_json, exit_code))
