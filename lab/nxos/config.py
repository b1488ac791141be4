"""An ordered NX-OS configuration tree for the lab's NX-OS emulator.

Flat or indented lines go in through a `Cursor` (the mode path of one CLI session, inferred with
`nxos_grammar`), the canonical `show running-config` body comes out of `render()`, and `rollback_patch()` is
the list of commands that turns one config into another, as `show diff rollback-patch` prints it.
"""

import re
from dataclasses import dataclass, field

from rocefab.lab.nxos.grammar import GLOBAL, MODES, Cmd, Hit, canonical_line, lookup

__all__ = ["Cursor", "InvalidCommandError", "Node", "NxosConfig", "rollback_patch"]


class InvalidCommandError(Exception):
    """A line no mode on the current path accepts (NX-OS: `% Invalid command at '^' marker.`)."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


@dataclass(eq=False)
class Node:
    line: str
    cmd: Cmd | None = None  # None only for the root
    key: str = ""  # identity among siblings: a setting's key, or the whole line
    children: list["Node"] = field(default_factory=list)

    @property
    def mode(self) -> str | None:
        return GLOBAL if self.cmd is None else self.cmd.mode

    def find(self, key: str) -> "Node | None":
        return next((c for c in self.children if c.key == key), None)

    def clone(self) -> "Node":
        return Node(self.line, self.cmd, self.key, [c.clone() for c in self.children])


def _nums(line: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", line))


def _ordered(node: Node) -> list[Node]:
    """Children in the order NX-OS prints them: global sections by rank (ports by number), the rest as entered."""
    if node.cmd is not None:
        return node.children

    def rank(item: tuple[int, Node]) -> tuple[int, tuple[int, ...], int]:
        i, c = item
        assert c.cmd is not None
        return c.cmd.rank, _nums(c.line) if c.cmd.natural else (), i

    return [c for _, c in sorted(enumerate(node.children), key=rank)]


class NxosConfig:
    def __init__(self, root: Node | None = None) -> None:
        self.root = root or Node("")

    @classmethod
    def parse(cls, text: str, reject: str | None = None) -> "NxosConfig":
        """A config file as NX-OS reads one (indentation ignored). Raises InvalidCommandError on a bad line."""
        config = cls()
        cursor = config.cursor(reject)
        for raw in text.splitlines():
            cursor.apply(raw)
        return config

    def cursor(self, reject: str | None = None) -> "Cursor":
        return Cursor(self, reject)

    def copy(self) -> "NxosConfig":
        return NxosConfig(self.root.clone())

    @property
    def hostname(self) -> str:
        node = self.root.find("hostname")
        return node.line.split()[1] if node else "switch"

    def features(self) -> set[str]:
        return {c.line.split()[1] for c in self.root.children if c.line.startswith("feature ")}

    def section(self, line: str) -> Node | None:
        return self.root.find(line)

    def render(self) -> str:
        """The running-config body: 2-space indent, a blank line before each global section, like NX-OS."""
        out: list[str] = []

        def walk(node: Node, depth: int) -> None:
            for child in _ordered(node):
                if depth == 0 and child.children:
                    out.append("")
                out.append("  " * depth + child.line)
                walk(child, depth + 1)

        walk(self.root, 0)
        return "\n".join(out) + "\n"


class Cursor:
    """The mode path of one CLI session: where the next flat line goes."""

    def __init__(self, config: NxosConfig, reject: str | None = None) -> None:
        self.config = config
        self.reject = reject
        self.stack: list[Node] = [config.root]
        self._banner: list[str] | None = None  # the lines so far of a `banner motd` that spans lines

    @property
    def prompt(self) -> str:
        mode = self.stack[-1].mode
        return MODES[mode].prompt if mode else "config"

    def exit(self) -> bool:
        """`exit`: up one mode. False when already at the top (the session then leaves config mode)."""
        if len(self.stack) == 1:
            return False
        self.stack.pop()
        return True

    def reset(self) -> None:
        self.stack = [self.config.root]

    def apply(self, raw: str) -> None:
        if self._banner is not None or raw.startswith("banner motd "):
            raw = self._gather_banner(raw)
            if not raw:
                return
        line = canonical_line(raw) if not raw.startswith("banner motd ") else raw
        if not line or line.startswith(("!", "version ")):
            return  # comments, and the `version` banner of a saved config, change nothing
        if self.reject and re.search(self.reject, line):
            raise InvalidCommandError(line)
        if self.stack[0] is not self.config.root:  # a rollback swapped the whole config: back to the top
            self.reset()
        features = self.config.features()
        for depth in range(len(self.stack) - 1, -1, -1):  # current mode first, then each parent
            node = self.stack[depth]
            hit = lookup(node.mode or GLOBAL, line)
            if hit is None or (hit.cmd.requires and hit.cmd.requires not in features):
                continue
            del self.stack[depth + 1 :]
            self._do(node, hit, line)
            return
        raise InvalidCommandError(line)

    def _gather_banner(self, raw: str) -> str:
        """A `banner motd <d>...<d>` whose text runs over several lines is one command: its lines are kept (as
        typed, spaces and all) until one ends with the delimiter, then applied as one line; "" until then."""
        parts = [*(self._banner or []), raw.rstrip("\r")]
        text = "\n".join(parts)
        delimiter = text[len("banner motd ")] if len(text) > len("banner motd ") else ""
        body = text[len("banner motd ") + 1:]
        if delimiter and delimiter in body:
            self._banner = None
            if not body.endswith(delimiter) or body.index(delimiter) != len(body) - 1:
                raise InvalidCommandError(text)  # text after the closing delimiter
            return text
        self._banner = parts
        return ""

    def _do(self, node: Node, hit: Hit, line: str) -> None:
        cmd = hit.cmd
        found = re.match(cmd.key, hit.body) if cmd.key else None
        key = found.group(0) if found else hit.body
        existing = node.find(key)
        if hit.negated and not cmd.flag:
            if cmd.mode and not cmd.removable:
                raise InvalidCommandError(line)
            if existing:
                node.children.remove(existing)
            if hit.body.startswith("feature "):  # NX-OS drops a feature's whole config with it
                _purge(self.config.root, hit.body.split()[1])
            return
        if existing is None:
            existing = Node(line, cmd, key)
            node.children.append(existing)
        else:
            existing.line, existing.cmd = line, cmd  # same key: replaced in place
        if cmd.mode:
            self.stack.append(existing)


def _purge(node: Node, feature: str) -> None:
    node.children = [c for c in node.children if not (c.cmd and c.cmd.requires == feature)]
    for child in node.children:
        _purge(child, feature)


def _negate(node: Node) -> str:
    if node.key == "banner motd":
        return "no banner motd"  # the text does not come with its removal
    if node.cmd is not None and node.cmd.flag and node.line.startswith("no "):
        return node.line[3:]
    return "no " + node.line


def rollback_patch(running: NxosConfig, target: NxosConfig) -> list[str]:
    """The commands that turn `running` into `target`, NX-OS style: inside each changed section its
    removals (`no ...`) then its additions, closed by `exit`; deleted sections as `no <header>`."""
    return _diff(running.root, target.root, 0)


def _diff(old: Node, new: Node, depth: int) -> list[str]:
    pad, out = "  " * depth, []
    for child in _ordered(old):
        assert child.cmd is not None
        if new.find(child.key) is not None:
            continue
        if child.cmd.mode is None:
            out.append(pad + _negate(child))
        elif child.cmd.removable:
            out.append(pad + "no " + child.line)
        elif body := _diff(child, Node(child.line, child.cmd, child.key), depth + 1):
            out += [pad + child.line, *body, pad + "  exit"]
    for child in _ordered(new):
        assert child.cmd is not None
        before = old.find(child.key)
        if child.cmd.mode is None:
            if before is None or before.line != child.line:
                out.append(pad + child.line)
            continue
        body = _diff(before or Node(child.line, child.cmd, child.key), child, depth + 1)
        if body or before is None:
            out += [pad + child.line, *body, pad + "  exit"]
    return out
