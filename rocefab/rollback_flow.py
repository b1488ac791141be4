"""The work behind `rocefab rollback`: put the switches of a backup back to the running configs saved there.

Hosts are not rolled back, and the output says so for each host the backed-up run touched. A host has no
running config to save: its script converges runtime state (NIC QoS and DCQCN, bonds, addresses, routes,
nccl.conf's block) that no device-side revision holds, and what a host ran before is the previous intent's
script, not something read off the host. Rolling a host back would mean recording every setting's earlier
value before each run and a second script to write them back, without the switches' guarantee (a config
read back and compared) that it worked. Instead rollback lists the hosts it left as they are, with why, and
how to put them back: apply the previous intent to them (`rocefab apply <previous intent> --only <hosts>`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from rocefab import deploy_report as report
from rocefab.console import EXIT_INPUT, EXIT_UNKNOWN, err, out
from rocefab.deploy.device_lock import own_mark
from rocefab.deploy.fleet import Fleet, Status, Target
from rocefab.deploy.inventory import CredentialError, PasswordSource
from rocefab.deploy.session import new_run_id
from rocefab.deploy.stop import StopRequest, stop_on_signals
from rocefab.deploy.targets import open_session
from rocefab.deploy_flow import (
    PLAIN,
    Shown,
    _inventory,
    _progress,
    _run,
    explain_unknown,
    marks_left,
    outcome,
    release_marks,
)

HOST_WHY = "hosts have no running config to save or restore; re-apply the previous intent to them"


@dataclass(frozen=True)
class Backup:
    folder: Path
    devices: dict[str, str]  # name -> kind, each with <name>.cfg
    without_backup: dict[str, str]  # the run's devices it could not save (hosts): left as they are


def _index(folder: Path) -> Backup:
    """The backup `folder`'s index, backup.json; OSError, ValueError, KeyError or TypeError when it has none."""
    index: dict[str, Any] = json.loads((folder / "backup.json").read_text(encoding="utf-8"))
    devices = {str(k): str(v) for k, v in dict(index["devices"]).items()}
    hosts = {str(k): str(v) for k, v in dict(index.get("without_backup", {})).items()}
    return Backup(folder, devices, hosts)


def incomplete(folder: Path) -> str | None:
    """Why `folder` is not a whole backup (no readable index, a listed config missing or empty), or None."""
    try:
        devices = _index(folder).devices
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"no readable backup.json ({exc})"
    for name in devices:
        config = folder / f"{name}.cfg"
        if not config.is_file() or config.stat().st_size == 0:
            return f"{config.name} missing or empty"
    return None


def latest(backup_dir: Path) -> Path:
    """The newest whole backup under `backup_dir` (run ids start with their UTC time, so the last name is the
    newest); newer folders that are not whole (a run stopped by a full disk) are skipped, and said so."""
    folders = sorted((p for p in backup_dir.glob("*") if p.is_dir()), key=lambda p: p.name, reverse=True)
    for folder in folders:
        why = incomplete(folder)
        if why is None:
            return folder
        if (folder / "backup.json").exists() or any(folder.glob("*.cfg")):
            err.print(f"{folder}: skipped, not a whole backup: {why}", markup=False)
    err.print(f"{backup_dir}: holds no whole rocefab backup (a folder with backup.json and every config it "
              "lists)", markup=False)
    raise typer.Exit(EXIT_INPUT)


def read_backup(folder: Path) -> Backup:
    try:
        return _index(folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        err.print(f"{folder}: not a rocefab backup ({exc})", markup=False)
        raise typer.Exit(EXIT_INPUT) from None


def _only(backup: Backup, only: str | None) -> Backup:
    if not only:
        return backup
    wanted = {n.strip() for n in only.split(",") if n.strip()}
    hosts = sorted(wanted & set(backup.without_backup))
    missing = sorted(wanted - set(backup.devices) - set(hosts))
    if missing:
        err.print(f"{backup.folder}: holds no backup of: {', '.join(missing)}", markup=False)
        raise typer.Exit(EXIT_INPUT)
    return Backup(backup.folder, {n: k for n, k in backup.devices.items() if n in wanted},
                  {n: backup.without_backup[n] for n in hosts})


def rollback(inventory: Path, backup: Path | None, use_latest: bool, backup_dir: Path, concurrency: int,
             confirm_s: int, only: str | None = None, force_unlock: bool = False, dry_run: bool = False,
             shown: Shown = PLAIN) -> None:
    if (backup is None) == (not use_latest):
        err.print("rollback takes one of --backup FOLDER or --latest (the newest under --backup-dir)", markup=False)
        raise typer.Exit(EXIT_INPUT)
    chosen = _only(read_backup(backup if backup is not None else latest(backup_dir)), only)
    if use_latest:
        err.print(f"latest backup: {chosen.folder}", markup=False)
    inv = _inventory(inventory)
    missing = [name for name in chosen.devices if name not in inv.devices]
    if missing:
        err.print(f"{inv.file}: the inventory has no entry for: {', '.join(missing)}", markup=False)
        raise typer.Exit(EXIT_INPUT)
    passwords = PasswordSource()
    try:
        targets = [Target(inv.access(name, kind, passwords),
                          (chosen.folder / f"{name}.cfg").read_text(encoding="utf-8"))
                   for name, kind in sorted(chosen.devices.items())]
    except CredentialError as exc:
        err.print(str(exc), markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    except OSError as exc:
        err.print(f"{chosen.folder}: {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    run_id = new_run_id()
    stopped: StopRequest | None = None
    with _progress(len(targets), "rollback dry run" if dry_run else "rollback") as progress:
        # A dry run is read-only: leftovers, commits awaiting their confirm and lock marks are reported, not
        # touched; a device another run holds is not compared.
        fleet = _run(progress, Fleet(targets, open_session, concurrency, run_id=run_id, clean_leftovers=not dry_run,
                                     mark=None if dry_run else own_mark(run_id), force_unlock=force_unlock,
                                     # the way back is never refused; a reload-class section it restores is
                                     # marked in the device's diff and table row
                                     accept_reload=True))
        if dry_run:
            results = fleet.dry_run()
        else:
            # Signals stop it as they stop apply (deploy/stop.py): the restore in progress is undone, said so.
            with stop_on_signals(lambda text: err.print(text, markup=False), fleet.unsettled,
                                 lambda: marks_left(fleet)) as stop:
                stopped, fleet.stop = stop, stop
                # Every switch of the backup is reached first; a commit awaiting its confirm is reverted (the
                # backup is what the devices go back to).
                try:
                    results = fleet.preflight(keep_planned=False)
                    done = {r.name: r.cleaned for r in results}
                    if stop.requested or any(r.status is not Status.NOT_CHECKED for r in results):
                        for r in results:  # nothing was restored
                            if r.status is Status.NOT_CHECKED:
                                r.status = Status.NOT_STARTED
                                r.error = stop.reason() if stop.requested else r.error
                    else:
                        results = fleet.apply([[t.name for t in targets]], confirm_s or None)
                        for r in results:
                            r.cleaned[:0] = done.get(r.name, [])
                finally:
                    release_marks(fleet)
    report.print_cleaned(results)
    code = outcome(results, shown.exit_code and dry_run)
    if stopped is not None and stopped.requested and code != EXIT_UNKNOWN:
        code = stopped.exit_code
    explain_unknown(results, None, inventory, None)
    untouched = [{"name": n, "kind": k, "why": HOST_WHY} for n, k in sorted(chosen.without_backup.items())]
    if shown.as_json:
        report.print_json("rollback", results, code, run_id=run_id, backup=str(chosen.folder), dry_run=dry_run,
                          untouched=untouched)
    else:
        report.print_diffs(results if dry_run else [r for r in results if r.status not in
                                                     (Status.UNCHANGED, Status.NOT_STARTED)])
        report.print_table(results, f"rollback dry run: {chosen.folder} against what runs now - nothing was changed"
                           if dry_run else f"rollback to {chosen.folder}")
        if untouched:
            out.print(f"left as they are: {report.names([u['name'] for u in untouched])} ({HOST_WHY})",
                      soft_wrap=True, markup=False)
    raise typer.Exit(code)
