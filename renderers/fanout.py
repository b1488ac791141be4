"""Render a large fabric straight into its output folder on several CPUs.

Forked workers inherit the plan instead of receiving it pickled, render a share of the devices each and
write those files themselves; only their manifest entries travel back. Shares are dealt round-robin, so every
worker gets its part of the expensive switches and the cheap hosts alike. The largest fabric-wide artifacts (the
monitoring folder, the bandwidth tests) are tasks of their own, and so is each part of plan/; meanwhile this
process renders and writes the other fabric-wide artifacts. A first render queues the artifacts' tasks before the
devices', and so does a render of an edited intent (the intent's hash is in the artifacts' key). A re-render of
the same intent (the folder's manifest has input keys, see input_keys.py) renders or keeps the devices first,
since their keys decide which of the rest changed. plan/'s parts follow the devices either way, their keys
being made of the devices'. The folder is the same, byte for byte, as a serial render's.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from rocefab.models.findings import Finding
from rocefab.renderers.input_keys import DeviceViews, code_fingerprint, fabric_key, links_digest
from rocefab.renderers.output import Entry, Filled, Source, publish, write_files
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.plan_parts import KIND as PLAN_PART
from rocefab.renderers.plan_parts import PlanPart, plan_parts
from rocefab.renderers.render import (
    PARTS,
    SUMMARY_PAGE,
    device_at,
    device_lines,
    fabric_files,
    fabric_part,
    files_of,
    plan_part_files,
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
_parts: list[PlanPart] = []


def render_devices(folder: Path, plan: FabricPlan, devices: Iterable[int], leave_out: frozenset[str],
                   unchanged: Unchanged | None) -> Filled:
    """Write the files of the devices numbered `devices` (render.device_at), but keep those of a device whose
    input key (input_keys.py) is the one the previous render recorded and whose files are still as it wrote them;
    returns the entries and each device's key."""
    views = DeviceViews(plan, leave_out)
    entries: list[Entry] = []
    keys: dict[str, str] = {}
    rendered: list[str] = []
    for i in devices:
        device = device_at(plan, i)
        key = keys[device.name] = views.key(device)
        kept = unchanged.keep(device.name, key) if unchanged is not None else None
        if kept is None:
            kept = write_files(folder, files_of(views, device, leave_out), unchanged)
            rendered.append(device.name)
        entries += kept
    return Filled(entries, keys, tuple(rendered))


def _render_share(folder: Path, devices: range) -> Filled:
    assert _plan is not None
    return render_devices(folder, _plan, devices, _leave_out, _unchanged)


def plan_part(folder: Path, part: PlanPart, device_keys: dict[str, str],
              unchanged: Unchanged | None) -> tuple[Filled, str]:
    """One of plan/'s parts (plan_parts.py), kept when its key is the previous render's and the file is as that
    render wrote it; `device_keys` holds the key of each of its devices. Also returns its links' digest, which the
    fabric-wide files' key is made of."""
    links = links_digest(part.links)
    key = part.key(code_fingerprint(), device_keys, links)
    kept = unchanged.keep_part(part.path, key) if unchanged is not None else None
    entries = kept if kept is not None else write_files(folder, plan_part_files([part]), unchanged)
    return Filled(entries, {part.path: key}), links


def _render_plan_part(folder: Path, index: int, device_keys: dict[str, str]) -> tuple[Filled, str]:
    return plan_part(folder, _parts[index], device_keys, _unchanged)


def _all_links(digests: Iterable[str]) -> str:
    """The digest of every link: each link is in one part, and the parts come in a fixed order."""
    return hashlib.sha256("\0".join(digests).encode()).hexdigest()


def _render_part(folder: Path, part: str) -> list[Entry]:
    assert _plan is not None
    return write_files(folder, fabric_part(_plan, part), _unchanged)


Checks = Callable[[], Sequence[Finding]]


def _fill(plan: FabricPlan, folder: Path, unchanged: Unchanged, jobs: int, min_devices: int,
          checks: Checks, leave_out: frozenset[str]) -> Filled:
    filled, summary, findings = _fill_files(plan, folder, unchanged, jobs, min_devices, checks, leave_out)
    lines = device_lines((e.device, e.lines) for e in filled.entries)
    summary_md = write_files(folder, [summary_file(plan, lines, findings, summary)], unchanged)
    return Filled(filled.entries + summary_md, filled.inputs, filled.rendered)


FabricFiles = Callable[[], list[Entry]]


# summary.md is made anew each time (it lists the findings); plan/'s parts have keys of their own
_NOT_FABRIC_KEYED = frozenset({SUMMARY_PAGE, PLAN_PART})


def _fabric(plan: FabricPlan, unchanged: Unchanged, leave_out: frozenset[str], keys: dict[str, str], links: str,
            render: FabricFiles, intact: Callable[[], list[Entry] | None] | None = None) -> list[Entry]:
    """The fabric-wide files: kept when their key (which covers every device's) is the previous render's and
    they are still as it wrote them (`intact()`, when the caller has that check under way), else `render()`. Adds
    their key to `keys`."""
    key = keys["fabric"] = fabric_key(plan, leave_out, keys, links)
    if unchanged.inputs.get("fabric") != key:
        return render()
    kept = intact() if intact is not None else unchanged.intact("fabric", _NOT_FABRIC_KEYED)
    return kept if kept is not None else render()


def _intact_fabric() -> list[Entry] | None:
    assert _unchanged is not None
    return _unchanged.intact("fabric", _NOT_FABRIC_KEYED)


def _fill_files(plan: FabricPlan, folder: Path, unchanged: Unchanged, jobs: int, min_devices: int,
                checks: Checks, leave_out: frozenset[str]) -> tuple[Filled, FabricSummary, Sequence[Finding]]:
    """Every file but summary.md, the input keys, the summary that summary.json and summary.md are both made
    from (made after the fork, so the workers need not wait for it), and what `checks` found."""
    count = len(plan.switches) + len(plan.hosts)
    workers = min(jobs, count)
    if workers < 2 or count < min_devices or "fork" not in multiprocessing.get_all_start_methods():
        findings = checks()
        summary = fabric_summary(plan)
        filled = render_devices(folder, plan, range(count), leave_out, unchanged)
        device_keys = dict(filled.inputs)
        digests = []
        for part in plan_parts(plan):
            done, links = plan_part(folder, part, device_keys, unchanged)
            filled.entries.extend(done.entries)
            filled.inputs.update(done.inputs)
            digests.append(links)
        filled.entries.extend(_fabric(plan, unchanged, leave_out, device_keys, _all_links(digests),
                                      lambda: write_files(folder, fabric_files(plan, with_plan=False, summary=summary),
                                                          unchanged)))
        filled.inputs["fabric"] = device_keys["fabric"]
        return filled, summary, findings
    global _plan, _unchanged, _leave_out, _parts
    _plan, _unchanged, _leave_out, _parts = plan, unchanged, leave_out, plan_parts(plan)
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            def fabric_tasks() -> list[Future[list[Entry]]]:
                return [pool.submit(_render_part, folder, p) for p in PARTS]

            def part_tasks(keys: dict[str, str]) -> list[Future[tuple[Filled, str]]]:
                return [pool.submit(_render_plan_part, folder, i, {d.name: keys[d.name] for d in p.devices})
                        for i, p in enumerate(_parts)]

            # A first render, or one of another intent (its hash is in the fabric-wide files' key, so they are
            # made again whatever the devices' keys say): the largest fabric-wide parts go first to the workers,
            # and small shares of the devices let them even out while this process writes the other artifacts.
            # A re-render of the same intent: the devices first, as their keys tell whether the others changed.
            # plan/'s parts (a pod each) come after the devices either way, as their keys are made of the devices'.
            fabric_first = not unchanged.inputs or unchanged.intent_sha256 != plan.source.intent_sha256
            early = fabric_tasks() if fabric_first else []
            shares = SHARES_PER_WORKER * workers
            tasks = [pool.submit(_render_share, folder, range(k, count, shares)) for k in range(shares)]
            try:
                findings = checks()  # while the workers render; what they wrote stays in staging if this raises
            except BaseException:
                # the pool would otherwise run every queued task before letting go
                cancels = [t.cancel for t in early] + [t.cancel for t in tasks]
                for cancel in cancels:
                    cancel()
                raise
            summary = fabric_summary(plan)

            def render() -> list[Entry]:
                return write_files(folder, fabric_files(plan, with_plan=False, summary=summary, leave_out=PARTS),
                                   unchanged)

            fabric = render() if fabric_first else []  # while the workers render the devices
            made: list[Entry] = []
            made_keys: dict[str, str] = {}
            rendered: list[str] = []
            for task in tasks:
                share = task.result()
                made += share.entries
                made_keys.update(share.inputs)
                rendered += share.rendered
            device_keys = dict(made_keys)
            # a re-render: whether the fabric-wide files are as written is read in a worker beside the parts
            intact = pool.submit(_intact_fabric) if not fabric_first else None
            digests = []
            for part_task in part_tasks(device_keys):  # quick: a part kept is its links' repr and a hash
                finished, links = part_task.result()
                made += finished.entries
                made_keys.update(finished.inputs)
                digests.append(links)
            if fabric_first:
                made += fabric + [entry for task in early for entry in task.result()]
                made_keys["fabric"] = fabric_key(plan, leave_out, device_keys, _all_links(digests))
            else:
                def rerender() -> list[Entry]:
                    late = fabric_tasks()
                    return render() + [entry for task in late for entry in task.result()]

                assert intact is not None
                made += _fabric(plan, unchanged, leave_out, device_keys, _all_links(digests), rerender, intact.result)
                made_keys["fabric"] = device_keys["fabric"]
            return Filled(made, made_keys, tuple(rendered)), summary, findings
    finally:
        _plan = _unchanged = None
        _leave_out = frozenset()
        _parts = []


def render_to_folder(plan: FabricPlan, target: Path, jobs: int, min_devices: int = PARALLEL_MIN_DEVICES,
                     source: Source | None = None, checks: Checks = tuple,
                     leave_out: frozenset[str] = frozenset()) -> Filled:
    """Render every file of `plan` into `target` (only rocefab's own files replaced, see `publish`) with up to
    `jobs` processes; returns the manifest entries. `checks` gives the findings summary.md lists; it runs once
    the workers have started, and if it raises, the render stops with nothing published. Device files of a kind
    in `leave_out` are not written."""
    return publish(target, lambda folder, unchanged: _fill(plan, folder, unchanged, jobs, min_devices, checks,
                                                           leave_out), source)
