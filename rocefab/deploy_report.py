"""How `rocefab diff`, `apply` and `rollback` show their results: unified diffs, the per-device table, the
rollout's waves, or one JSON document. Deciding is in `deploy_flow`; this module only prints what it is given.

With `--json`, stdout carries the JSON document and nothing else; progress and notes stay on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from rocefab.console import err, out
from rocefab.deploy import unified
from rocefab.deploy.diff_groups import DiffGroup, group_diffs
from rocefab.deploy.disruption import fabric_total
from rocefab.deploy.drain_limits import DrainPlan
from rocefab.deploy.fleet import DeviceResult, Status
from rocefab.renderers.slurm_topology import hostlist

_STYLE = {Status.UNCHANGED: "green", Status.PENDING: "yellow", Status.COMMITTED: "green",
          Status.ROLLED_BACK: "magenta", Status.NOT_STARTED: "dim", Status.FAILED: "bold red",
          Status.UNKNOWN: "bold red reverse", Status.AWAITING_REVERT: "bold yellow", Status.NOT_CHECKED: "dim"}
SHOWN_PER_WAVE = 4  # device names printed per wave before "and N more"


def _line_style(line: str) -> str:
    if line.startswith(("--- ", "+++ ")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("#"):
        return "yellow"
    return "green" if line.startswith("+") else "red" if line.startswith("-") else ""


def print_diffs(results: Sequence[DeviceResult]) -> None:
    """Every device's unified diff, one after the other: the output as a whole is one patch. Lines are never
    wrapped, so a review tool reads them as they are."""
    # Without colours (a pipe, a file, NO_COLOR) a printable diff is written as it is: the bytes rich would
    # write for it, without building its styled text (0.8 s of CPU for a 200-device fabric's 20,000 lines).
    # Tabs and control characters, which rich expands or drops, go through rich.
    plain = out.color_system is None
    for r in results:
        lines = r.diff.splitlines()
        if not lines:
            continue
        if plain and all(line.isprintable() for line in lines):
            out.file.write("\n".join(lines) + "\n")
            continue
        # One print per device, not per line: a rich print costs ~0.3 ms, and 200 devices' diffs are 20,000 lines.
        text = Text()
        for i, line in enumerate(lines):
            text.append(line, style=_line_style(line) or None)
            if i < len(lines) - 1:
                text.append("\n")
        out.print(text, soft_wrap=True)


def group_disruption(results: Sequence[DeviceResult], group: DiffGroup) -> str:
    """The worst disruption class of a group's members (alike by construction, the example's in practice)."""
    by_name = {r.name: r for r in results}
    classes = [d.disruption for n in group.members if (d := by_name[n].disruption) is not None]
    return max(classes, key=lambda d: d.rank).value if classes else "hitless"


def print_disruption_total(results: Sequence[DeviceResult]) -> None:
    """On stderr: how many changing devices fall in each disruption class, least disruptive first."""
    classes = [r.disruption.disruption for r in results if r.status is Status.PENDING and r.disruption is not None]
    if classes:
        total = fabric_total(classes)
        err.print("disruption: " + ", ".join(f"{n} {name}" for name, n in total.items()) + " (rocefab classes each "
                  "changed line by its platform's rules; --json has each device's lines)", markup=False,
                  soft_wrap=True)


def print_drain_plan(drain: DrainPlan, applying: bool = False) -> None:
    """On stderr: the steps in which the switches whose change is beyond hitless would be drained (`applying`:
    will be, by apply --drain), and those no drain can make safe."""
    if not drain.steps and not drain.refused:
        return
    count = sum(len(step.devices) for step in drain.steps)
    how = "apply --drain drains, commits, verifies and undrains each step in turn" if applying else \
        "apply --drain drains them step by step"
    err.print(f"drain plan: {count} switch(es) change beyond hitless, drainable in {len(drain.steps)} step(s) (no two "
              f"leaves of a pair or rail block, at most an eighth of a leaf's spines at a time; {how}):", markup=False,
              soft_wrap=True)
    for i, step in enumerate(drain.steps, 1):
        nodes = f"; drain nodes {hostlist(step.nodes_losing_a_rail)} in the scheduler first (they lose a rail)" \
            if step.nodes_losing_a_rail else ""
        err.print(f"  step {i}: {names(step.devices, 8)}{nodes}", markup=False, soft_wrap=True, highlight=False)
    for name, why in drain.refused.items():
        err.print(f"  not drainable: {name}: {why}; change it in a maintenance window", markup=False, soft_wrap=True)


def disruption_json(results: Sequence[DeviceResult]) -> dict[str, int]:
    """The fabric's total: changing devices per disruption class."""
    return fabric_total([r.disruption.disruption for r in results
                         if r.status is Status.PENDING and r.disruption is not None])


def diff_groups(results: Sequence[DeviceResult], device_names: Sequence[str] = ()) -> list[DiffGroup]:
    """The devices that would change, grouped by what they change once their own values are set aside."""
    names = [*device_names, *(r.name for r in results)]
    return group_diffs([(r.name, r.kind, r.diff) for r in results if r.status is Status.PENDING], names)


def print_group_diffs(results: Sequence[DeviceResult], groups: Sequence[DiffGroup], first: int = 1,
                      total: int | None = None) -> None:
    """One member's diff per group (`--groups`), under a note naming the others that change alike. `first` and
    `total` number the groups when only some of them are printed."""
    by_name = {r.name: r for r in results}
    for i, group in enumerate(groups, first):
        others = group.members[1:]
        note = f"# group {i} of {total or len(groups)} ({group_disruption(results, group)}): {group.example}" + (
            f" and {len(others)} more {group.kind} device(s) change alike: {names(others, 12)}" if others else "")
        out.print(note, markup=False, soft_wrap=True, highlight=False)
        print_diffs([by_name[group.example]])


def print_groups(groups: Sequence[DiffGroup], first: int = 1, total: int | None = None,
                 results: Sequence[DeviceResult] = ()) -> None:
    """On stderr (stdout stays one patch and the table): the groups in a line each — how many devices, which kind,
    the first few names, how many distinct lines each changes. Given `total`, only the lines (numbered from
    `first`) of some of the groups."""
    if not groups:
        return
    if total is None:
        changing = sum(len(g.members) for g in groups)
        err.print(f"{changing} device(s) would change, in {len(groups)} group(s) that change alike (names, addresses, "
                  "ASNs and ports set aside):", markup=False, soft_wrap=True)
    for i, g in enumerate(groups, first):
        plus = sum(line.startswith("+") for line in g.key)
        minus = sum(line.startswith("-") for line in g.key)
        disruption = f", {group_disruption(results, g)}" if results else ""
        err.print(f"  group {i}: {len(g.members)} {g.kind} ({names(g.members, 6)}): {plus} distinct line(s) added, "
                  f"{minus} removed{disruption}", markup=False, soft_wrap=True, highlight=False)


def group_json(groups: Sequence[DiffGroup], results: Sequence[DeviceResult] = ()) -> list[dict[str, Any]]:
    return [{"kind": g.kind, "example": g.example, "members": list(g.members), "lines": list(g.key),
             "disruption": group_disruption(results, g) if results else None} for g in groups]


def summary(results: Sequence[DeviceResult]) -> str:
    """`7 would change`, `3 committed, 4 unchanged`: how many devices ended in each state."""
    return ", ".join(f"{n} {status.value}" for status, n in _by_status(results).items())


def print_table(results: Sequence[DeviceResult], title: str) -> None:
    table = Table(title=title, title_justify="left")
    for column in ("device", "kind", "status", "+", "-", "disruption", "seconds", "detail"):
        table.add_column(column, justify="right" if column in ("+", "-", "seconds") else "left")
    for r in results:
        lines = unified.counts(r.diff)
        # what was done to the device besides the run's own change (a pending commit settled, leftovers removed)
        detail = r.error or "; ".join(r.cleaned)
        if r.reload and not r.error:
            detail = "; ".join(filter(None, [f"needs a reload: {', '.join(r.reload)}", detail]))
        if r.library_said and r.status in (Status.FAILED, Status.UNKNOWN):
            detail += f" [library: {'; '.join(r.library_said)}]"
        table.add_row(r.name, r.kind, f"[{_STYLE[r.status]}]{escape(r.status.value)}[/]", str(lines.added),
                      str(lines.removed), "" if r.disruption is None else r.disruption.disruption.value,
                      f"{r.seconds:.1f}", escape(detail))
    out.print(table)
    out.print(summary(results))


def print_replace_previews(results: Sequence[DeviceResult], shown: int = 8) -> None:
    """Per device, what a replace does to the running config outside rocefab's candidate: the device-local
    blocks it keeps (accounts, management access, AAA keys) and the blocks it removes (rocefab owns the rest).
    Only for devices the replace changes: on the others it does nothing. On stderr, with the other notes:
    stdout stays one patch and the table."""
    for r in results:
        if r.status is not Status.PENDING:
            continue
        if r.dropped:
            err.print(f"{r.name}: the replace removes {len(r.dropped)} running block(s) the intent does not have: "
                      f"{_first(r.dropped, shown)}", markup=False, soft_wrap=True)
        if r.kept:
            err.print(f"{r.name}: the replace keeps {len(r.kept)} device-local block(s): {_first(r.kept, shown)}",
                      markup=False, soft_wrap=True)


def _first(items: Sequence[str], shown: int) -> str:
    text = "; ".join(items[:shown])
    return text + (f"; and {len(items) - shown} more (--json lists all)" if len(items) > shown else "")


def print_cleaned(results: Sequence[DeviceResult]) -> None:
    for r in results:
        for note in r.cleaned:
            err.print(f"{r.name}: {note}", markup=False)


def names(devices: Sequence[str], shown: int = SHOWN_PER_WAVE) -> str:
    """A list of device names, shortened for a big fabric.

    >>> names(["leaf1-a", "leaf1-b"])
    'leaf1-a, leaf1-b'
    >>> names([f"gpu{i:03}" for i in range(1, 129)])
    'gpu001, gpu002, gpu003, gpu004 and 124 more'
    """
    if len(devices) <= shown + 1:
        return ", ".join(devices)
    return f"{', '.join(devices[:shown])} and {len(devices) - shown} more"


def wave_line(waves: Sequence[Sequence[str]]) -> str:
    """The rollout's order, each wave by its members.

    >>> wave_line([["leaf1-a", "leaf1-b"], ["gpu001"], ["spine1"]])
    'apply in 3 wave(s): leaf1-a, leaf1-b | gpu001 | spine1'
    """
    return f"apply in {len(waves)} wave(s): {' | '.join(names(wave) for wave in waves)}"


def device_json(r: DeviceResult) -> dict[str, Any]:
    lines = unified.counts(r.diff)
    return {"name": r.name, "kind": r.kind, "status": r.status.name.lower(), "status_text": r.status.value,
            "added": lines.added, "removed": lines.removed, "diff": r.diff.splitlines(), "error": r.error,
            "seconds": round(r.seconds, 3), "cleaned": r.cleaned, "library_said": r.library_said,
            "replace_keeps": list(r.kept), "replace_removes": list(r.dropped), "needs_reload": list(r.reload),
            "disruption": None if r.disruption is None else {
                "class": r.disruption.disruption.value, "lines": r.disruption.counts,
                "worst": [{"line": f"{c.sign}{c.path}", "source": c.source} for c in r.disruption.worst_lines[:20]]}}


def print_json(command: str, results: Sequence[DeviceResult], exit_code: int, **extra: Any) -> None:
    """The one document `--json` prints: every device, the run's summary, and the exit code it ends with."""
    document = {
        "command": command,
        **extra,
        "devices": [device_json(r) for r in results],
        "summary": {"text": summary(results), "by_status": {s.name.lower(): n for s, n in
                                                            _by_status(results).items()},
                    "would_change": would_change(results), "exit_code": exit_code},
    }
    print(json.dumps(document, indent=2))


def would_change(results: Sequence[DeviceResult]) -> int | None:
    """How many devices a run would change; None (unknown, never 0) while any device was not compared with its
    candidate: never reached or started, its state unknown, or failed before its diff."""
    unknown = any(r.status in (Status.NOT_CHECKED, Status.NOT_STARTED, Status.UNKNOWN)
                  or (r.status is Status.FAILED and not r.diff) for r in results)
    return None if unknown else sum(r.status is Status.PENDING for r in results)


def _by_status(results: Sequence[DeviceResult]) -> dict[Status, int]:
    counts: dict[Status, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return counts
