"""Two indented CLI configs (NX-OS, EOS) as line lists a unified diff can compare section by section.

A device prints its running config in its own order and the candidate is in rocefab's: compared as text,
a block that merely sits elsewhere would show as removed and added. Here the candidate's blocks are put in
the running config's order (blocks it adds go after the block that precedes them in the candidate), at
every level, and separators and comments are left out on both sides, so what differs is what changes.
"""

from __future__ import annotations

from rocefab.renderers.configtext import ConfigNode, parse_indented


def _unit(text: str) -> int:
    """The indentation step of a config: its smallest non-zero indent (2 on NX-OS, 3 on EOS)."""
    indents = {len(line) - len(line.lstrip(" ")) for line in text.splitlines() if line.strip()}
    return min((i for i in indents if i > 0), default=2)


def _aligned(running: ConfigNode, candidate: ConfigNode, keep_running: bool) -> list[ConfigNode]:
    """`candidate`'s children in `running`'s order; with `keep_running` (a merge) running's other children
    stay too, as the device keeps them."""
    position: dict[str, int] = {}
    for i, node in enumerate(running.children):
        position.setdefault(node.line, i)
    ranked: list[tuple[tuple[int, int, int], ConfigNode, bool]] = []  # (order, node, from the running side)
    anchor = -1
    for j, node in enumerate(candidate.children):
        if node.line in position:
            anchor = position[node.line]
            ranked.append(((anchor, 0, j), node, False))
        else:
            ranked.append(((anchor, 1, j), node, False))
    present = {node.line for node in candidate.children}
    if keep_running:
        ranked += [((i, 0, -1), node, True) for i, node in enumerate(running.children) if node.line not in present]
    out = []
    for _, node, ours in sorted(ranked, key=lambda item: item[0]):
        before = None if ours else running.child(node.line)
        if before is None:
            out.append(node)
        else:
            out.append(ConfigNode(node.line, node.raw, _aligned(before, node, keep_running)))
    return out


def _render(nodes: list[ConfigNode], unit: int, depth: int = 0) -> list[str]:
    lines: list[str] = []
    for node in nodes:
        lines.append(" " * (unit * depth) + node.line)
        lines.extend(_render(node.children, unit, depth + 1))
    return lines


def aligned_lines(running: str, candidate: str, replace: bool = True,
                  kept: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(running, candidate) as lines in the running config's order, indented alike.

    `kept`: top-level lines the device keeps through a replace although the candidate lacks them (NX-OS's
    `version` line), so the diff does not show them going.

    >>> running, candidate = "hostname a\\ninterface e1\\n  mtu 1500\\n", "interface e1\\n  mtu 9216\\nhostname a\\n"
    >>> aligned_lines(running, candidate)
    (['hostname a', 'interface e1', '  mtu 1500'], ['hostname a', 'interface e1', '  mtu 9216'])
    """
    unit = _unit(running)
    before, after = parse_indented(running), parse_indented(candidate)
    if replace and kept:
        present = {node.line for node in after.children}
        after.children[:0] = [node for node in before.children
                              if node.line.startswith(kept) and node.line not in present]
    return _render(before.children, unit), _render(_aligned(before, after, not replace), unit)
