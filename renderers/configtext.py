"""Indented CLI configuration (EOS, NX-OS) read back into a tree: the one place that knows how indentation
nests lines. Deploy uses it to carry device-local blocks across a replace, the lab's emulators to load the
configs they are given, and the tests to read what was rendered.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rocefab.renderers.record import record


@dataclass
class ConfigNode:
    line: str  # stripped
    raw: str = ""  # as written, indentation included
    children: list[ConfigNode] = field(default_factory=list)

    def child(self, line: str) -> ConfigNode | None:
        for node in self.children:
            if node.line == line:
                return node
        return None

    def starting(self, prefix: str) -> list[ConfigNode]:
        return [node for node in self.children if node.line.startswith(prefix)]

    def lines(self) -> list[str]:
        return [node.line for node in self.children]

    def block(self) -> list[str]:
        """This node's raw line and every raw line under it, in order."""
        out = [self.raw]
        for node in self.children:
            out.extend(node.block())
        return out


@record
class IndentedLine:
    indent: int  # leading spaces
    text: str  # stripped
    raw: str


class IndentedText:
    """A config's lines one at a time, with their indentation; a caller that finds a multi-line value (an EOS
    banner) takes its raw lines with `take_until`."""

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self.number = 0  # 1-based number of the line last read

    def __iter__(self) -> Iterator[IndentedLine]:
        while self.number < len(self._lines):
            raw = self._lines[self.number].rstrip()
            self.number += 1
            yield IndentedLine(len(raw) - len(raw.lstrip(" ")), raw.strip(), raw)

    def take_until(self, marker: str) -> list[str]:
        """The raw lines up to (not including) the next line equal to `marker`, which is consumed too."""
        rest = self._lines[self.number:]
        end = rest.index(marker) if marker in rest else len(rest)
        self.number += min(end + 1, len(rest))
        return rest[:end]


def is_separator(line: IndentedLine) -> bool:
    """Blank lines, `!` separators and comments, and the final top-level `end` carry no setting."""
    return not line.text or line.text.startswith("!") or (line.text == "end" and line.indent == 0)


def parse_indented(text: str) -> ConfigNode:
    """Nest lines by indentation; drop blank lines, `!` separators/comments and the final `end`.

    >>> root = parse_indented("interface Ethernet1\\n   mtu 9214\\n!\\nend\\n")
    >>> root.child("interface Ethernet1").lines()
    ['mtu 9214']
    >>> root.child("interface Ethernet1").block()
    ['interface Ethernet1', '   mtu 9214']
    """
    root = ConfigNode("")
    stack: list[tuple[int, ConfigNode]] = [(-1, root)]
    for line in IndentedText(text):
        if is_separator(line):
            continue
        while stack[-1][0] >= line.indent:
            stack.pop()
        node = ConfigNode(line.text, line.raw)
        stack[-1][1].children.append(node)
        stack.append((line.indent, node))
    return root
