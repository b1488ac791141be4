"""Load, check and plan an intent for a command, printing findings the same way for all of them."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rocefab import __version__
from rocefab.collector import collector_paused
from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, err
from rocefab.models.findings import Finding, Severity, dotted
from rocefab.models.loader import IntentLoadError, SourceMap
from rocefab.renderers.pipeline import Checked, check_file
from rocefab.renderers.plan import FabricPlan

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


MAX_PER_CODE = 20  # a fabric-wide mistake repeats on every port; the first few say it all


def print_findings(findings: list[Finding], source: SourceMap) -> None:
    ordered = sorted(findings, key=lambda f: (_SEVERITY_ORDER[f.severity], source.locate(f.path).line))
    shown: dict[str, int] = {}
    for f in ordered:
        shown[f.code] = shown.get(f.code, 0) + 1
        if shown[f.code] > MAX_PER_CODE:
            continue
        pos = source.locate(f.path)
        where = f"{source.file}:{pos.line}:{pos.col}:"
        field = f" {dotted(f.path)}:" if f.path else ""
        style = _SEVERITY_STYLE[f.severity]
        err.print(f"{escape(where)} [{style}]{f.severity.value}[/] {escape(f'[{f.code}]{field} {f.message}')}")
        if f.hint:
            err.print(f"    hint: {f.hint}", markup=False)
    for code, count in shown.items():
        if count > MAX_PER_CODE:
            err.print(f"... and {count - MAX_PER_CODE} more [{code}] finding(s) like these", markup=False)


def check(intent: Path, plan_checks: bool = True) -> Checked:
    """Run the pipeline, printing findings; exits with the documented codes on failure. `plan_checks=False`
    returns a valid intent's plan unprinted, with the plan's own checks left to `report(finish_checks(...))`."""
    try:
        with collector_paused():
            checked = check_file(intent, __version__, plan_checks)
    except IntentLoadError as exc:
        for error in exc.errors:
            err.print(f"{error}", markup=False)
        err.print(f"{len(exc.errors)} input error(s); nothing was written", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    if checked.plan_checked or not checked.ok:
        report(intent, checked)
    return checked


def report(intent: Path, checked: Checked) -> None:
    """Print the findings; exit with the documented code if any is an error."""
    print_findings(checked.findings, checked.loaded.source)
    if not checked.ok:
        errors = sum(f.is_error for f in checked.findings)
        err.print(f"{errors} error(s) in {intent}; nothing was written", markup=False)
        raise typer.Exit(EXIT_FINDINGS)


def checked_plan(intent: Path) -> FabricPlan:
    """The plan of a valid intent, or exit with the documented code after printing why not."""
    checked = check(intent)
    assert checked.plan is not None
    return checked.plan
