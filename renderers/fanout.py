"""Render a large fabric straight into its output folder on several CPUs.

Forked workers inherit the plan instead of receiving it pickled, render a share of the devices each and
write those files themselves; only their manifest entries travel back. Shares are dealt round-robin, so every
worker gets its part of the expensive switches and the cheap hosts alike. The largest fabric-wide artifacts (the
monitoring folder, the bandwidth tests) are tasks of their own, keyed by the fabric's topology; so are the other
fabric-wide artifacts together, and each part of plan/. This process runs the plan's checks meanwhile and hands
out the tasks. A first render queues the fabric-wide tasks before the devices', and a render of an edited intent
the artifacts keyed by the intent's hash. A re-render of the same intent (the folder's manifest has input keys,
see input_keys.py) renders or keeps the devices first, since their keys decide which of the rest changed.
plan/'s parts follow the devices, their keys being made of the devices' (on a first render, with no key to keep
them by, they are queued at once, and this process works their keys out later). The folder is the same, byte
for byte, as a serial render's.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rocefab.models.findings import Finding
from rocefab.renderers.input_keys import (
    DeviceViews,
    code_fingerprint,
    fabric_key,
    links_cables_digest,
    links_digest,
    topology_key,
)
from rocefab.renderers.output import Entry, Filled, Source, publish, write_files
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.plan_parts import KIND as PLAN_PART
from rocefab.renderers.plan_parts import PlanPart, plan_parts
from rocefab.renderers.record import record
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


@record
class Devices:
    """What rendering (or keeping) some devices gives: the entries and keys, and each device's shape (the digest
    of its key text, which the topology key is made of, input_keys.topology_key)."""

    filled: Filled
    shapes: dict[str, str]


def render_devices(folder: Path, plan: FabricPlan, devices: Iterable[int], leave_out: frozenset[str],
                   unchanged: Unchanged | None) -> Devices:
    """Write the files of the devices numbered `devices` (render.device_at), but keep those of a device whose
    input key (input_keys.py) is the one the previous render recorded and whose files are still as it wrote them;
    returns the entries, each device's key and each device's shape."""
    views = DeviceViews(plan, leave_out)
    entries: list[Entry] = []
    keys: dict[str, str] = {}
    shapes: dict[str, str] = {}
    rendered: list[str] = []
    folders: set[str] = set()  # made already: not asked of the file system again for each device
    for i in devices:
        device = device_at(plan, i)
        key, shapes[device.name] = views.keys(device)
        keys[device.name] = key
        kept = unchanged.keep(device.name, key) if unchanged is not None else None
        if kept is None:
            kept = write_files(folder, files_of(views, device, leave_out), unchanged, folders)
            rendered.append(device.name)
        entries += kept
    return Devices(Filled(entries, keys, tuple(rendered)), shapes)


def _render_share(folder: Path, devices: range) -> Devices:
    assert _plan is not None
    return render_devices(folder, _plan, devices, _leave_out, _unchanged)


@record
class Links:
    """The digests of one part's links: of their key text (`shape`, input_keys.links_digest) and of both that
    and their cable values (`whole`)."""

    shape: str
    whole: str


def part_links(part: PlanPart) -> Links:
    """The digests of a part's links, which its key and the fabric-wide files' keys are made of."""
    shape = links_digest(part.links)
    return Links(shape, hashlib.sha256(f"{shape}\0{links_cables_digest(part.links)}".encode()).hexdigest())


def part_key(part: PlanPart, device_keys: dict[str, str], links: Links) -> str:
    """The key of one of plan/'s parts: made of its devices' keys (`device_keys` holds at least those) and its
    links' digests."""
    return part.key(code_fingerprint(), device_keys, links.whole)


def plan_part(folder: Path, part: PlanPart, key: str, unchanged: Unchanged | None) -> list[Entry]:
    """One of plan/'s parts (plan_parts.py), kept when its key (`part_key`) is the previous render's and the file
    is as that render wrote it, else written; `key` "" on a first render, where nothing is kept by key."""
    kept = unchanged.keep_part(part.path, key) if unchanged is not None else None
    return kept if kept is not None else write_files(folder, plan_part_files([part]), unchanged)


def _plan_part(folder: Path, index: int, key: str) -> list[Entry]:
    return plan_part(folder, _parts[index], key, _unchanged)


def _all_links(digests: Iterable[str]) -> str:
    """The digest of every link: each link is in one part, and the parts come in a fixed order."""
    return hashlib.sha256("\0".join(digests).encode()).hexdigest()


def topology_part(folder: Path, plan: FabricPlan, part: str, key: str, unchanged: Unchanged | None) -> list[Entry]:
    """The files of one of PARTS: kept when their topology key (input_keys.topology_key) is the previous
    render's and they are as it wrote them, else rendered."""
    kept = unchanged.keep_folder(PARTS[part], key) if unchanged is not None else None
    return kept if kept is not None else write_files(folder, fabric_part(plan, part), unchanged)


def _topology_part(folder: Path, part: str, key: str) -> list[Entry]:
    """In a worker: one of PARTS, kept by its topology key or rendered (`key` "" on a first render, queued before
    any key is known: nothing is kept by it)."""
    assert _plan is not None
    return topology_part(folder, _plan, part, key, _unchanged)


def _render_rest(folder: Path) -> tuple[list[Entry], FabricSummary]:
    """In a worker: the fabric-wide files but plan/'s parts and PARTS, and the summary summary.json is made of
    (summary.md is made of it too, once every device's lines are counted)."""
    assert _plan is not None
    summary = fabric_summary(_plan)
    return write_files(folder, fabric_files(_plan, with_plan=False, summary=summary, leave_out=PARTS),
                       _unchanged), summary


Checks = Callable[[], Sequence[Finding]]


def _summary_md(folder: Path, plan: FabricPlan, entries: list[Entry], findings: Sequence[Finding],
                summary: FabricSummary, unchanged: Unchanged) -> list[Entry]:
    """summary.md, made anew each render: it lists the findings and counts the lines of the devices' files
    (`entries` holds those of every device; fabric-wide ones are not counted)."""
    lines = device_lines((e.device, e.lines) for e in entries)
    return write_files(folder, [summary_file(plan, lines, findings, summary)], unchanged)


FabricFiles = Callable[[], list[Entry]]


# summary.md is made anew each time (it lists the findings); plan/'s parts and PARTS' folders have keys of their own
_NOT_FABRIC_KEYED = frozenset({SUMMARY_PAGE, PLAN_PART})
_OWN_FOLDERS = tuple(PARTS.values())


def _fabric(plan: FabricPlan, unchanged: Unchanged, leave_out: frozenset[str], keys: dict[str, str], links: str,
            render: FabricFiles, intact: Callable[[], list[Entry] | None] | None = None) -> list[Entry]:
    """The fabric-wide files keyed together (all but summary.md, plan/'s parts and PARTS'): kept when their key
    (which covers every device's) is the previous render's and they are still as it wrote them (`intact()`, when
    the caller has that check under way), else `render()`. Adds their key to `keys`."""
    key = keys["fabric"] = fabric_key(plan, leave_out, keys, links)
    if unchanged.inputs.get("fabric") != key:
        return render()
    kept = intact() if intact is not None else unchanged.intact("fabric", _NOT_FABRIC_KEYED, _OWN_FOLDERS)
    return kept if kept is not None else render()


def _intact_fabric() -> list[Entry] | None:
    assert _unchanged is not None
    return _unchanged.intact("fabric", _NOT_FABRIC_KEYED, _OWN_FOLDERS)


def _fill_serially(plan: FabricPlan, folder: Path, unchanged: Unchanged, checks: Checks,
                   leave_out: frozenset[str]) -> Filled:
    findings = checks()
    summary = fabric_summary(plan)
    devices = render_devices(folder, plan, range(len(plan.switches) + len(plan.hosts)), leave_out, unchanged)
    filled = devices.filled
    device_keys = dict(filled.inputs)
    parts = plan_parts(plan)
    links = [part_links(part) for part in parts]
    for part, digests in zip(parts, links, strict=True):
        key = filled.inputs[part.path] = part_key(part, device_keys, digests)
        filled.entries.extend(plan_part(folder, part, key, unchanged))
    topology = topology_key(plan, leave_out, devices.shapes, _all_links(d.shape for d in links))
    for name, own in PARTS.items():
        filled.entries.extend(topology_part(folder, plan, name, topology, unchanged))
        filled.inputs[own] = topology
    filled.entries.extend(_fabric(plan, unchanged, leave_out, device_keys, _all_links(d.whole for d in links),
                                  lambda: write_files(folder, fabric_files(plan, with_plan=False, summary=summary,
                                                                           leave_out=PARTS), unchanged)))
    filled.inputs["fabric"] = device_keys["fabric"]
    filled.entries.extend(_summary_md(folder, plan, filled.entries, findings, summary, unchanged))
    return filled


def _fill(plan: FabricPlan, folder: Path, unchanged: Unchanged, jobs: int, min_devices: int,
          checks: Checks, leave_out: frozenset[str]) -> Filled:
    """Every file and the input keys. The summary that summary.json and summary.md are both made from is made
    after the fork, so the workers need not wait for it."""
    count = len(plan.switches) + len(plan.hosts)
    workers = min(jobs, count)
    if workers < 2 or count < min_devices or "fork" not in multiprocessing.get_all_start_methods():
        return _fill_serially(plan, folder, unchanged, checks, leave_out)
    global _plan, _unchanged, _leave_out, _parts
    _plan, _unchanged, _leave_out, _parts = plan, unchanged, leave_out, plan_parts(plan)
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            def part_tasks(keys: list[str]) -> list[Future[list[Entry]]]:
                """plan/'s parts in their order, handed out largest first (the part outside any pod holds the
                super-spines: few links of its own, but the most ports), so that no worker is left with a large
                one at the end."""
                largest_first = sorted(range(len(_parts)), key=lambda i: -_parts[i].size)
                tasks = {i: pool.submit(_plan_part, folder, i, keys[i]) for i in largest_first}
                return [tasks[i] for i in range(len(_parts))]

            # What goes to the workers first. On a first render (no topology key in the folder's manifest):
            # monitoring and the bandwidth tests, the largest fabric-wide parts. On a first render or one of
            # another intent (its hash is in their key): the other fabric-wide artifacts. Then shares of the
            # devices, and on a first render (no part's key in the manifest) plan/'s parts, which are small and
            # let the workers even out; on a re-render, plan/'s parts once the devices' keys are in (theirs are
            # made of them). PARTS when their topology key changed (a measured cable or one switch's raw lines
            # leave it as it is), and on a re-render of the same intent the other fabric-wide artifacts when the
            # devices' keys changed, once those keys are known. This process runs the plan's checks meanwhile,
            # works out the keys and hands out the next tasks as soon as what they need is in.
            fabric_first = not unchanged.inputs or unchanged.intent_sha256 != plan.source.intent_sha256
            parts_first = not all(own in unchanged.inputs for own in PARTS.values())
            early = {name: pool.submit(_topology_part, folder, name, "") for name in PARTS} if parts_first else {}
            rest = pool.submit(_render_rest, folder) if fabric_first else None
            shares = SHARES_PER_WORKER * workers
            tasks = [pool.submit(_render_share, folder, range(k, count, shares)) for k in range(shares)]
            # nothing of plan/ can be kept by a key the manifest does not hold
            parts_early = not any(part.path in unchanged.inputs for part in _parts)
            early_parts = part_tasks([""] * len(_parts)) if parts_early else []
            try:
                findings = checks()  # while the workers render; what they wrote stays in staging if this raises
            except BaseException:
                # the pool would otherwise run every queued task before letting go
                queued: list[Future[Any]] = [*early.values(), *tasks, *early_parts]
                for task in queued if rest is None else [*queued, rest]:
                    task.cancel()
                raise
            links = [part_links(part) for part in _parts]  # here, while the workers render the devices
            made: list[Entry] = []
            made_keys: dict[str, str] = {}
            shapes: dict[str, str] = {}
            rendered: list[str] = []
            for task in tasks:
                share = task.result()
                made += share.filled.entries
                made_keys.update(share.filled.inputs)
                shapes.update(share.shapes)
                rendered += share.filled.rendered
            device_keys = dict(made_keys)
            # the topology key as soon as the devices' shapes are in: PARTS kept or rendered beside plan/'s parts
            topology = topology_key(plan, leave_out, shapes, _all_links(d.shape for d in links))
            late = {} if parts_first else {name: pool.submit(_topology_part, folder, name, topology)
                                            for name in PARTS}
            # a re-render: whether the fabric-wide files are as written is read in a worker beside the parts
            intact = pool.submit(_intact_fabric) if rest is None else None
            part_keys = [part_key(part, device_keys, digests) for part, digests in zip(_parts, links, strict=True)]
            part_results = early_parts or part_tasks(part_keys)
            whole = _all_links(d.whole for d in links)
            summaries: list[FabricSummary] = []

            def render() -> list[Entry]:
                entries, summary = (rest or pool.submit(_render_rest, folder)).result()
                summaries.append(summary)
                return entries

            summary_md: list[Entry] = []
            if rest is not None:
                made += render()
                made_keys["fabric"] = fabric_key(plan, leave_out, device_keys, whole)
                # every device's lines are counted and the summary is in: summary.md while the workers finish
                summary_md = _summary_md(folder, plan, made, findings, summaries[0], unchanged)
            for part, key, part_task in zip(_parts, part_keys, part_results, strict=True):
                made += part_task.result()  # quick on a re-render: a part kept is a hash of its file
                made_keys[part.path] = key
            if rest is None:
                assert intact is not None
                made += _fabric(plan, unchanged, leave_out, device_keys, whole, render, intact.result)
                made_keys["fabric"] = device_keys["fabric"]
            for name, own in PARTS.items():
                made += (early or late)[name].result()
                made_keys[own] = topology
            if rest is None:  # the summary of the files kept, or of those render() made
                summary = summaries[0] if summaries else fabric_summary(plan)
                summary_md = _summary_md(folder, plan, made, findings, summary, unchanged)
            return Filled(made + summary_md, made_keys, tuple(rendered))
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
