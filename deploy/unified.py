"""Unified diffs for review: every device's diff has the same two headers and `@@` hunks, whatever its
platform shows natively, so `patch`, `delta` or a code-review tool reads a whole run's output.

    --- leaf1-a (running)
    +++ leaf1-a (candidate)
    @@ -3,2 +3,3 @@

Lines before a device's `---` header are notes (`# ...`): what a device reported that is not a line of
either document. Review tools skip text between file diffs, as they skip a commit message.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def labels(device: str) -> tuple[str, str]:
    """The two file names of a device's diff.

    >>> labels("leaf1-a")
    ('leaf1-a (running)', 'leaf1-a (candidate)')
    """
    return f"{device} (running)", f"{device} (candidate)"


def _notes(notes: Iterable[str]) -> list[str]:
    return [f"# {line}" for note in notes for line in note.splitlines()]


def from_lines(device: str, running: Sequence[str], candidate: Sequence[str], notes: Iterable[str] = (),
               context: int = 3, indented: bool = False) -> str:
    """The unified diff of two documents given as lines; empty when they are equal and there are no notes. An
    `indented` config (EOS, NX-OS) gets each hunk's enclosing sections after its `@@` position, as `git diff`
    names a hunk's function, so the reader (and the disruption classes) know where a hunk's lines live.

    >>> print(from_lines("gpu001", ["NCCL_IB_TC=104"], ["NCCL_IB_TC=106"]))
    --- gpu001 (running)
    +++ gpu001 (candidate)
    @@ -1 +1 @@
    -NCCL_IB_TC=104
    +NCCL_IB_TC=106
    >>> config = ["interface Ethernet1", "   description a", "   speed 400g", "   mtu 9214", "   no shutdown"]
    >>> print(from_lines("s", config, config[:3] + ["   mtu 9000"] + config[4:], context=1, indented=True))
    --- s (running)
    +++ s (candidate)
    @@ -3,3 +3,3 @@ interface Ethernet1
        speed 400g
    -   mtu 9214
    +   mtu 9000
        no shutdown
    """
    old, new = labels(device)
    body = list(difflib.unified_diff(list(running), list(candidate), old, new, lineterm="", n=context))
    if indented:
        body = [_with_heading(line, running, candidate) for line in body]
    return "\n".join([*_notes(notes), *body])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def enclosing(lines: Sequence[str], index: int) -> list[str]:
    """The sections line `index` of an indented config sits in, outermost first, without their indentation.

    >>> enclosing(["router bgp 1", "   address-family ipv4", "      network 10.0.0.0/8"], 2)
    ['router bgp 1', 'address-family ipv4']
    """
    if not 0 <= index < len(lines):
        return []
    chain: list[str] = []
    depth = _indent(lines[index])
    for line in reversed(lines[:index]):
        if depth == 0:
            break
        if line.strip() and _indent(line) < depth:
            chain.append(line.strip())
            depth = _indent(line)
    return chain[::-1]


HEADING_JOIN = " > "


def _with_heading(line: str, running: Sequence[str], candidate: Sequence[str]) -> str:
    match = _HUNK.match(line)
    if match is None:
        return line
    old_start, old_count = int(match[1]), int(match[2] or 1)
    # the hunk's first line, on the side that has it (a hunk that only adds has no old line)
    chain = enclosing(running, old_start - 1) if old_count else enclosing(candidate, int(match[3]) - 1)
    return f"{line} {HEADING_JOIN.join(chain)}" if chain else line


def _span(start: int, count: int) -> str:
    return f"{start if count else start - 1}" + ("" if count == 1 else f",{count}")


def from_rows(device: str, rows: Sequence[tuple[str, str]], notes: Iterable[str] = ()) -> str:
    """One hunk of (`-`, `+` or ` `, line) rows in the given order, for documents that exist only as their
    differences (a host's drifted settings): each setting's old line can sit right above its new one.

    >>> print(from_rows("gpu001", [(" ", "# /etc/nccl.conf"), ("-", "NCCL_IB_TC=104"), ("+", "NCCL_IB_TC=106")]))
    --- gpu001 (running)
    +++ gpu001 (candidate)
    @@ -1,2 +1,2 @@
     # /etc/nccl.conf
    -NCCL_IB_TC=104
    +NCCL_IB_TC=106
    """
    if not any(sign != " " for sign, _ in rows):
        return "\n".join(_notes(notes))
    old_count = sum(sign != "+" for sign, _ in rows)
    new_count = sum(sign != "-" for sign, _ in rows)
    old, new = labels(device)
    return "\n".join([*_notes(notes), f"--- {old}", f"+++ {new}",
                      f"@@ -{_span(1, old_count)} +{_span(1, new_count)} @@",
                      *(sign + line for sign, line in rows)])


def has_hunks(text: str) -> bool:
    return any(_HUNK.match(line) for line in text.splitlines())


def with_headers(device: str, hunks: str) -> str:
    """A device's own unified diff (its hunks, with or without its own `---`/`+++` file names) under ours.

    >>> print(with_headers("leaf1-a", "--- system:/running-config\\n+++ session:/x\\n@@ -1 +1,2 @@\\n a\\n+b"))
    --- leaf1-a (running)
    +++ leaf1-a (candidate)
    @@ -1 +1,2 @@
     a
    +b
    """
    lines = hunks.splitlines()
    first = next((i for i, line in enumerate(lines) if _HUNK.match(line)), len(lines))
    old, new = labels(device)
    return "\n".join([f"--- {old}", f"+++ {new}", *lines[first:]])


@dataclass(frozen=True, slots=True)
class Counts:
    added: int = 0
    removed: int = 0


def counts(diff: str) -> Counts:
    """Lines added and removed inside the hunks of `diff`; headers and notes are not lines of either side.

    >>> counts(from_lines("x", ["a", "b"], ["a", "c", "d"]))
    Counts(added=2, removed=1)
    """
    lines = hunk_lines(diff)
    return Counts(sum(line.startswith("+") for line in lines), sum(line.startswith("-") for line in lines))


def hunk_lines(diff: str) -> list[str]:
    """The `+`/`-`/context lines of the hunks, without headers, hunk markers or notes (for tests and reports)."""
    out: list[str] = []
    old_left = new_left = 0
    for line in diff.splitlines():
        if old_left <= 0 and new_left <= 0:
            match = _HUNK.match(line)
            if match:
                old_left = 0 if match.group(2) == "0" else int(match.group(2) or 1)
                new_left = 0 if match.group(4) == "0" else int(match.group(4) or 1)
            continue
        out.append(line)
        if line.startswith("+"):
            new_left -= 1
        elif line.startswith("-"):
            old_left -= 1
        elif not line.startswith("\\"):
            old_left, new_left = old_left - 1, new_left - 1
    return out


def malformed(diff: str) -> list[str]:
    """What keeps `diff` from being read as a unified diff: a hunk whose line counts do not match its
    header, lines between hunks that are neither headers nor notes, a file without both headers.

    >>> malformed(from_lines("x", ["a"], ["b"]))
    []
    >>> malformed("--- x (running)\\n+++ x (candidate)\\n@@ -1,2 +1 @@\\n-a\\n+b")
    ['hunk @@ -1,2 +1 @@ ends 1 old line(s) short']
    """
    problems: list[str] = []
    lines = diff.splitlines()
    i = 0
    header: str | None = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            header, i = line, i + 2
            continue
        match = _HUNK.match(line)
        if match and header is not None:
            old_left = 0 if match.group(2) == "0" else int(match.group(2) or 1)
            new_left = 0 if match.group(4) == "0" else int(match.group(4) or 1)
            i += 1
            while i < len(lines) and (old_left > 0 or new_left > 0):
                sign = lines[i][:1]
                if sign == "\\":
                    i += 1
                    continue
                if sign not in ("+", "-", " "):
                    break
                old_left -= sign != "+"
                new_left -= sign != "-"
                i += 1
            if old_left or new_left:
                short = f"{old_left} old" if old_left else f"{new_left} new"
                problems.append(f"hunk {line} ends {short} line(s) short")
            continue
        if not line.startswith("#"):
            problems.append(f"line {i + 1} is outside every hunk: {line[:60]!r}")
        i += 1
    return problems
