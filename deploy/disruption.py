"""The disruption class of a device's change: each `+`/`-` line of its diff classed by its platform's rules
(rocefab/platforms/disruption.py), the device's class the worst of them.

A line's path is its enclosing sections and itself. In an indented config (EOS, NX-OS) the sections come from the
hunk's heading (`@@ -3,3 +3,3 @@ interface Ethernet1`, which rocefab's own diffs carry) and from the less
indented lines above it in the hunk; a device's own diff without headings leaves a line at the top of a hunk with
only the sections shown above it, so a rule that needs the section does not match and the line takes the unit's
conservative class. A flat `nv set` line carries its whole path.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from rocefab.deploy.unified import HEADING_JOIN
from rocefab.platforms.disruption import Disruption, DisruptionTable

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")


@dataclass(frozen=True, slots=True)
class ClassedLine:
    sign: str  # "+" or "-"
    path: str  # sections and the line, joined with " > "
    disruption: Disruption
    source: str  # the rule's source; "" for a line no rule names


@dataclass(frozen=True, slots=True)
class DeviceDisruption:
    disruption: Disruption  # the worst of its lines' (hitless when nothing changes)
    counts: dict[str, int]  # class -> changed lines of that class
    lines: tuple[ClassedLine, ...]

    @property
    def worst_lines(self) -> tuple[ClassedLine, ...]:
        return tuple(line for line in self.lines if line.disruption is self.disruption)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def paths(diff: str) -> list[tuple[str, str]]:
    """(sign, path) of each changed line of a unified diff.

    >>> paths("@@ -1,2 +1,2 @@ interface Ethernet1\\n    speed 400g\\n-   mtu 9214\\n+   mtu 9000")
    [('-', 'interface Ethernet1 > mtu 9214'), ('+', 'interface Ethernet1 > mtu 9000')]
    >>> paths("@@ -1,2 +1,3 @@\\n interface Ethernet2\\n+   shutdown\\n-hostname a\\n+hostname b")
    [('+', 'interface Ethernet2 > shutdown'), ('-', 'hostname a'), ('+', 'hostname b')]
    """
    out: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    heading: list[str] = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ", "#")):
            continue
        hunk = _HUNK.match(line)
        if hunk is not None:
            heading = [part for part in hunk[1].split(HEADING_JOIN) if part] if hunk[1] else []
            stack = []
            continue
        if not line or line[0] not in " +-":
            continue
        text = line[1:]
        if not text.strip() or text.lstrip().startswith(("!", "#")):  # a separator or a comment: not config
            continue
        depth = _indent(text)
        if heading:
            # The heading holds the ancestors of the hunk's first line, one per level above it: the root at
            # indent 0, the rest at the config's step (the first line's indent over its level).
            step = depth / len(heading)
            stack = [(round(k * step), section) for k, section in enumerate(heading)]
            heading = []
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if line[0] in "+-":
            out.append((line[0], HEADING_JOIN.join([*(s for _, s in stack), text.strip()])))
        stack.append((depth, text.strip()))
    return out


@cache
def _compiled(table: DisruptionTable) -> tuple[tuple[re.Pattern[str], Disruption, str], ...]:
    return tuple((re.compile(rule.pattern), rule.disruption, rule.source) for rule in table.rules)


def classify_path(path: str, table: DisruptionTable) -> tuple[Disruption, str]:
    for pattern, disruption, source in _compiled(table):
        if pattern.search(path):
            return disruption, source
    return table.unknown, ""


def classify(diff: str, table: DisruptionTable) -> DeviceDisruption:
    lines = tuple(ClassedLine(sign, path, *classify_path(path, table)) for sign, path in paths(diff))
    worst = max((line.disruption for line in lines), key=lambda d: d.rank, default=Disruption.HITLESS)
    counts = Counter(line.disruption.value for line in lines)
    return DeviceDisruption(worst, {d.value: counts[d.value] for d in Disruption if counts[d.value]}, lines)


def fabric_total(classes: Sequence[Disruption]) -> dict[str, int]:
    """Devices per class, least disruptive first."""
    counts = Counter(d.value for d in classes)
    return {d.value: counts[d.value] for d in Disruption if counts[d.value]}
