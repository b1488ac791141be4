"""Intent file -> checked findings -> plan: the path every command walks before printing or writing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocefab.models.checks import check_intent
from rocefab.models.findings import Finding, has_errors
from rocefab.models.loader import LoadedIntent, load_intent
from rocefab.models.types import file_label
from rocefab.renderers.plan import FabricPlan, Source
from rocefab.renderers.plan_checks import check_plan
from rocefab.renderers.planner import PlanningError, plan_fabric


@dataclass(frozen=True)
class Checked:
    loaded: LoadedIntent
    findings: list[Finding]
    plan: FabricPlan | None  # None when any finding is an error
    plan_checked: bool = True  # False: `finish_checks` is still to run the plan's own checks

    @property
    def ok(self) -> bool:
        return self.plan is not None


def check_file(path: str | Path, version: str, plan_checks: bool = True) -> Checked:
    """Load, schema-validate, check and plan; raises `IntentLoadError` for unreadable or schema-invalid files.

    `plan_checks=False` leaves the checks on the finished plan to `finish_checks`: a render starts its worker
    processes first and runs them meanwhile (over a second for a 98,304-GPU plan), publishing nothing unless
    they pass."""
    loaded = load_intent(path)
    resolution, findings = check_intent(loaded.intent)
    if has_errors(findings) or resolution.fabric is None:
        return Checked(loaded, findings, None)
    intent = loaded.intent
    source = Source(intent.fabric.name, intent.fabric.description, file_label(loaded.file_name), loaded.sha256, version)
    try:
        plan = plan_fabric(intent, resolution.fabric, source)
    except PlanningError as exc:
        return Checked(loaded, findings + exc.findings, None)
    checked = Checked(loaded, findings, plan, plan_checked=False)
    return finish_checks(checked) if plan_checks else checked


def finish_checks(checked: Checked) -> Checked:
    """`checked` with the checks on its plan run, if they were left out; without a plan if any fails."""
    if checked.plan_checked or checked.plan is None:
        return checked
    findings = checked.findings + check_plan(checked.plan)
    return Checked(checked.loaded, findings, None if has_errors(findings) else checked.plan)
