"""The work behind `rocefab verify` and `rocefab doctor`: inventory, reading the fleet, printing rows."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, err, out
from rocefab.deploy.inventory import CredentialError, PasswordSource
from rocefab.deploy.library_logs import capture_library_logs
from rocefab.deploy.session import new_run_id
from rocefab.deploy.targets import InventoryMismatch, device_kinds, open_session, plan_accesses
from rocefab.deploy.verify.checks import Row, Verdict
from rocefab.deploy.verify.diagnosis import Diagnosis
from rocefab.deploy.verify.doctor import diagnose
from rocefab.deploy.verify.run import check as check_rows
from rocefab.deploy.verify.run import read_fleet
from rocefab.deploy_flow import _inventory, _progress
from rocefab.pipeline_commands import checked_plan
from rocefab.renderers.plan import FabricPlan

capture_library_logs()
_STYLE = {Verdict.PASS: "green", Verdict.WARN: "yellow", Verdict.FAIL: "bold red"}


def _read(intent: Path, inventory_path: Path, only: str | None, concurrency: int,
          sample_s: float = 0.0) -> tuple[FabricPlan, list[Row]]:
    plan = checked_plan(intent)
    inventory = _inventory(inventory_path)
    wanted = {w.strip() for w in only.split(",") if w.strip()} if only else None
    unknown = sorted((wanted or set()) - set(device_kinds(plan)))
    if unknown:
        err.print(f"--only: the plan has no device {', '.join(unknown)}", markup=False)
        raise typer.Exit(EXIT_INPUT)
    try:
        accesses = plan_accesses(plan, inventory, PasswordSource(), wanted)
    except (InventoryMismatch, CredentialError) as exc:
        err.print(f"{inventory_path}: {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    progress = _progress(len(accesses), "reading")
    with progress:
        task = progress.task_ids[0]
        readings = read_fleet(plan, accesses, open_session, new_run_id(), concurrency,
                              lambda name: progress.update(task, advance=1, description=name), sample_s)
    return plan, check_rows(plan, readings)


def _summary(rows: list[Row]) -> str:
    counts = Counter(r.verdict for r in rows)
    devices = len({r.device for r in rows})
    failing = len({r.device for r in rows if r.failed})
    return (f"{len(rows)} checks on {devices} devices: {counts[Verdict.PASS]} passed, {counts[Verdict.FAIL]} failed "
            f"({failing} devices), {counts[Verdict.WARN]} warnings")


def verify(intent: Path, inventory: Path, only: str | None, concurrency: int, *, as_json: bool,
           show_all: bool, sample_s: float = 0.0) -> None:
    _, rows = _read(intent, inventory, only, concurrency, sample_s)
    if as_json:
        # A row's fields are strings (and a str enum): no deep copy, which dataclasses.asdict makes of each of
        # ~8,000 rows (a tenth of a 200-device verify's CPU).
        names = [f.name for f in dataclasses.fields(Row)]
        checks = [{name: getattr(r, name) for name in names} for r in rows]
        print(json.dumps({"checks": checks, "summary": _summary(rows),
                          "passed": not any(r.failed for r in rows)}, indent=2))
    else:
        shown = [r for r in rows if show_all or r.verdict is not Verdict.PASS]
        if shown:
            table = Table("device", "port", "check", "expected", "observed", "verdict")
            for r in shown:
                table.add_row(escape(r.device), escape(r.port), r.check, escape(r.expected), escape(r.observed),
                              f"[{_STYLE[r.verdict]}]{r.verdict}[/]")
            out.print(table)
        out.print(_summary(rows))
    if any(r.failed for r in rows):
        raise typer.Exit(EXIT_FINDINGS)


def _print_diagnosis(d: Diagnosis) -> None:
    where = f"{d.device} {d.port}".strip()
    out.print(f"[bold red]{escape(f'[{d.code}]')}[/] {escape(where)}: {escape(d.title)}")
    for line in d.evidence:
        out.print(f"    evidence: {escape(line)}")
    out.print(f"    symptom:  {escape(d.symptom)}")
    out.print(f"    fix:      {escape(d.fix)}")


def doctor(intent: Path, inventory: Path, only: str | None, concurrency: int, *, as_json: bool,
           sample_s: float = 0.0) -> None:
    plan, rows = _read(intent, inventory, only, concurrency, sample_s)
    found = diagnose(plan, rows, str(intent), str(inventory))
    if as_json:
        print(json.dumps({"diagnoses": [dataclasses.asdict(d) for d in found], "summary": _summary(rows)}, indent=2))
    else:
        for d in found:
            _print_diagnosis(d)
        head = f"{len(found)} diagnosis(es)" if found else "nothing to diagnose"
        out.print(f"{head}; {_summary(rows)}")
    if found:
        raise typer.Exit(EXIT_FINDINGS)
