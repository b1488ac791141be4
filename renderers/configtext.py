"""Read indented CLI configuration (EOS, NX-OS) back into a tree, to check what was rendered."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ConfigNode:
    line: str
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


def parse_indented(text: str) -> ConfigNode:
    """Nest lines by indentation; drop blank lines, `!` separators/comments and the final `end`.

    >>> root = parse_indented("interface Ethernet1\\n   mtu 9214\\n!\\nend\\n")
    >>> root.child("interface Ethernet1").lines()
    ['mtu 9214']
    """
    root = ConfigNode("")
    stack: list[tuple[int, ConfigNode]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or (stripped == "end" and raw == "end"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        node = ConfigNode(stripped)
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root
