"""`rocefab diff`, `rocefab apply` and `rocefab rollback`: their arguments and help; the work is in
`deploy_flow`, imported only when one of them runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

InventoryOpt = Annotated[Path, typer.Option("--inventory", "-i", help="inventory YAML: where each device is")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", "-j", min=1, max=256, help="devices at once")]
OnlyOpt = Annotated[str | None, typer.Option("--only", help="comma-separated device names")]
MergeOpt = Annotated[bool, typer.Option("--merge", help="add the rendered lines instead of replacing the config")]
StaleOpt = Annotated[bool, typer.Option("--clear-stale-sessions",
                                        help="EOS: abort pending NAPALM sessions a crashed run left behind")]
UnlockOpt = Annotated[bool, typer.Option(
    "--force-unlock", help="take over an inventory lock another host wrote (once that run is known to be over)")]


def diff(intent: Annotated[Path, typer.Argument(help="intent YAML file")], inventory: InventoryOpt,
         concurrency: ConcurrencyOpt = 16, only: OnlyOpt = None, merge: MergeOpt = False,
         clear_stale_sessions: StaleOpt = False, force_unlock: UnlockOpt = False) -> None:
    """Show, per device, what applying the intent would change (rendered vs running). Changes nothing."""
    from rocefab import deploy_flow

    deploy_flow.dry_run(intent, inventory, concurrency, only, merge, clear_stale_sessions, force_unlock)


def apply(
    intent: Annotated[Path, typer.Argument(help="intent YAML file")],
    inventory: InventoryOpt,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="stage, diff and discard: change nothing")] = False,
    canary_groups: Annotated[int, typer.Option(
        "--canary", min=0, help="leaf groups (a ToR pair, or one leaf per rail) and their hosts first")] = 1,
    confirm_s: Annotated[int, typer.Option("--confirm", min=0, max=86399,
                                           help="revert window in seconds where the platform has one")] = 300,
    backup_dir: Annotated[Path, typer.Option("--backup-dir", help="where running configs are saved first")] = Path(
        "rocefab-backups"),
    concurrency: ConcurrencyOpt = 16,
    only: OnlyOpt = None,
    merge: MergeOpt = False,
    clear_stale_sessions: StaleOpt = False,
    force_unlock: UnlockOpt = False,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="skip the verify gate after each commit")] = False,
) -> None:
    """Push the intent: back up every device, then canary, then the rest; commit with a revert window,
    check that each device runs the candidate and passes verify's checks (across links only towards devices of
    this run already done),
    confirm; on a failure roll the wave back (and read each device back) and stop.
    Exit 0 done, 1 stopped with every device's state known, 2 bad input or the inventory is locked,
    3 a device's state is unknown (the output says how to check it)."""
    from rocefab import deploy_flow

    if dry_run:
        deploy_flow.dry_run(intent, inventory, concurrency, only, merge, clear_stale_sessions, force_unlock)
    else:
        deploy_flow.apply(intent, inventory, canary_groups, confirm_s, backup_dir, concurrency, only, merge,
                          clear_stale_sessions, force_unlock, verify=not no_verify)


def rollback(
    inventory: InventoryOpt,
    backup: Annotated[Path, typer.Option("--backup", help="a backup folder written by `rocefab apply`")],
    concurrency: ConcurrencyOpt = 16,
    confirm_s: Annotated[int, typer.Option("--confirm", min=0, max=86399)] = 300,
    only: OnlyOpt = None,
    force_unlock: UnlockOpt = False,
) -> None:
    """Restore every device of a backup (or those --only names) to the running config saved there."""
    from rocefab import deploy_flow

    deploy_flow.rollback(inventory, backup, concurrency, confirm_s, only, force_unlock)
