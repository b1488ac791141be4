"""Render a large fabric straight into its output folder on several CPUs.

Forked workers inherit the plan instead of receiving it pickled, render a share of the devices each and
write those files themselves; only their manifest entries travel back. plan.json and the largest fabric-wide
parts (the monitoring folder, the bandwidth tests) are tasks of their own, queued first; meanwhile this process
renders and writes the other fabric-wide artifacts. Shares are dealt round-robin, so every worker gets its part of the
expensive switches and the cheap hosts alike. The folder is the same, byte for byte, as a serial render's.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rocefab.models.findings import Finding
from rocefab.renderers.output import Entry, Source, publish, write_files
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import (
    PARTS,
    device_lines,
    fabric_files,
    fabric_part,
    iter_device_files,
    plan_file,
    summary_file,
)
from rocefab.renderers.summary import FabricSummary, fabric_summary
from rocefab.renderers.unchanged import Unchanged

# Below this many devices a worker process costs more than it saves.
PARALLEL_MIN_DEVICES = 64
SHARES_PER_WORKER = 4

# set in the parent just before forking; workers read their inherited copies
_plan: FabricPlan | None = None
_unchanged: Unchanged | None = None
_leave_out: frozenset[str] = frozenset()


def _render_share(folder: Path, devices: range) -> list[Entry]:
    assert _plan is not None
    return write_files(folder, iter_device_files(_plan, devices, _leave_out), _unchanged)


def _render_plan_file(folder: Path) -> list[Entry]:
    assert _plan is not None
    return write_files(folder, [plan_file(_plan)], _unchanged)


def _render_part(folder: Path, part: str) -> list[Entry]:
    assert _plan is not None
    return write_files(folder, fabric_part(_plan, part), _unchanged)


Checks = Callable[[], Sequence[Finding]]


def _fill(plan: FabricPlan, folder: Path, unchanged: Unchanged, jobs: int, min_devices: int,
          checks: Checks, leave_out: frozenset[str]) -> list[Entry]:
    entries, summary, findings = _fill_files(plan, folder, unchanged, jobs, min_devices, checks, leave_out)
    lines = device_lines((e.device, e.lines) for e in entries)
    return entries + write_files(folder, [summary_file(plan, lines, findings, summary)], unchanged)


def _fill_files(plan: FabricPlan, folder: Path, unchanged: Unchanged, jobs: int, min_devices: int,
                checks: Checks, leave_out: frozenset[str]) -> tuple[list[Entry], FabricSummary, Sequence[Finding]]:
    """Every file but summary.md, the summary that summary.json and summary.md are both made from (made
    after the fork, so the workers need not wait for it), and what `checks` found."""
    count = len(plan.switches) + len(plan.hosts)
    workers = min(jobs, count)
    if workers < 2 or count < min_devices or "fork" not in multiprocessing.get_all_start_methods():
        findings = checks()
        summary = fabric_summary(plan)
        return write_files(folder, itertools.chain(iter_device_files(plan, range(count), leave_out),
                                                   fabric_files(plan, summary=summary)), unchanged), summary, findings
    global _plan, _unchanged, _leave_out
    _plan, _unchanged, _leave_out = plan, unchanged, leave_out
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            # plan.json, the largest single file, and the largest fabric-wide parts go first to the workers;
            # small shares of the devices let them even out while this process writes the other artifacts.
            shares = SHARES_PER_WORKER * workers
            tasks = [pool.submit(_render_plan_file, folder), *(pool.submit(_render_part, folder, p) for p in PARTS),
                     *(pool.submit(_render_share, folder, range(k, count, shares)) for k in range(shares))]
            try:
                findings = checks()  # while the workers render; what they wrote stays in staging if this raises
            except BaseException:
                for task in tasks:
                    task.cancel()  # the pool would otherwise run every queued share before letting go
                raise
            summary = fabric_summary(plan)
            fabric = write_files(folder, fabric_files(plan, with_plan=False, summary=summary, leave_out=PARTS),
                                 unchanged)
            return [entry for task in tasks for entry in task.result()] + fabric, summary, findings
    finally:
        _plan = _unchanged = None
        _leave_out = frozenset()


def render_to_folder(plan: FabricPlan, target: Path, jobs: int, min_devices: int = PARALLEL_MIN_DEVICES,
                     source: Source | None = None, checks: Checks = tuple,
                     leave_out: frozenset[str] = frozenset()) -> list[Entry]:
    """Render every file of `plan` into `target` (only rocefab's own files replaced, see `publish`) with up to
    `jobs` processes; returns the manifest entries. `checks` gives the findings summary.md lists; it runs once
    the workers have started, and if it raises, the render stops with nothing published. Device files of a kind
    in `leave_out` are not written."""
    return publish(target, lambda folder, unchanged: _fill(plan, folder, unchanged, jobs, min_devices, checks,
                                                           leave_out), source)
