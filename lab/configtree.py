"""An ordered configuration tree for indented network-OS configs, and the mode-grammar engine that places flat
CLI lines in it the way the device does.

NAPALM strips indentation before it sends config lines, so the device must work out each line's mode from the
grammar alone: a line that is invalid in the current mode is retried in the parent modes, up to the global mode.
The grammar is data (`Mode` tables of `Rule` and `Sub` entries); a platform module supplies the tables.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rocefab.renderers.configtext import IndentedText, is_separator

NatKey = tuple[tuple[int, int, str], ...]
_LITERAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_CLEARS = ("no ", "default ")


def natural_key(text: str) -> NatKey:
    """Ethernet1/2 sorts before Ethernet1/10.

    >>> sorted(["vlan 10", "vlan 9"], key=natural_key)
    ['vlan 9', 'vlan 10']
    """
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t.lower()) for t in re.split(r"(\d+)", text) if t)


@dataclass(frozen=True, slots=True)
class Rule:
    """A setting inside a mode. `key` (a regex) names the setting: a line with the same key text replaces the old
    one, so `mtu 9214` replaces `mtu 1500`. `value` is the argument's regex; with `value=None` the whole line is
    the key and such lines accumulate. `negated` settings are shown as `no <key>` (their default is on), and the
    bare `<key>` restores the default. `span` bounds a numeric value; `heredoc` lines carry a multi-line text."""

    key: str
    value: str | None = None
    negated: bool = False
    optional: bool = False  # the value may be left out when setting (`ip routing` / `ip routing ipv6 interfaces`)
    span: tuple[int, int] | None = None
    heredoc: bool = False


@dataclass(frozen=True, slots=True)
class Sub:
    """A line that opens a sub-mode (`interface Ethernet1`); `natural`: such blocks print in natural order."""

    pattern: str
    mode: str
    natural: bool = False


Entry = Rule | Sub


@dataclass(frozen=True, slots=True)
class Mode:
    """A mode's entries in the order the device prints them; entries grouped in a tuple share a rank, so their
    lines keep the order they were entered in (BGP neighbour settings stay together per neighbour)."""

    name: str
    slots: tuple[Entry | tuple[Entry, ...], ...]


@dataclass(frozen=True, slots=True)
class Action:
    op: Literal["set", "unset", "enter", "drop"]
    line: str
    key: str
    rank: int
    natural: bool = False
    mode: str | None = None
    heredoc: bool = False


class ConfigError(ValueError):
    """A line the grammar rejects; `token` is the index of the first token no command accepts, None when the
    line stops early (an incomplete command)."""

    def __init__(self, line: str, token: int | None, reason: str = "") -> None:
        self.line, self.token = line, token
        super().__init__(reason or f"invalid line {line!r}")


@dataclass(frozen=True, slots=True)
class _Compiled:
    rank: int
    entry: Entry
    set_re: re.Pattern[str]
    clear_re: re.Pattern[str]
    words: tuple[str, ...]  # the entry's leading literal words, to locate the bad token in an error


def _compile(rank: int, entry: Entry) -> _Compiled:
    if isinstance(entry, Sub):
        pattern = re.compile(entry.pattern)
        return _Compiled(rank, entry, pattern, pattern, _words(entry.pattern))
    key = f"(?P<k>{entry.key})"
    if entry.value is None:
        set_re = clear_re = key
    else:
        clear_re = f"{key}(?: (?P<v>{entry.value}))?"
        set_re = clear_re if entry.optional else f"{key} (?P<v>{entry.value})"
    return _Compiled(rank, entry, re.compile(set_re), re.compile(clear_re), _words(entry.key))


def _words(pattern: str) -> tuple[str, ...]:
    words: list[str] = []
    for word in pattern.split(" "):
        if not _LITERAL.fullmatch(word):
            break
        words.append(word)
    return tuple(words)


def _in_span(entry: Rule, match: re.Match[str]) -> bool:
    value = match.group("v") if entry.value is not None else None
    return entry.span is None or value is None or entry.span[0] <= int(value) <= entry.span[1]


class Grammar:
    """Matches one normalised line against one mode's table."""

    def __init__(self, modes: Iterable[Mode], root: str, aliases: Iterable[tuple[str, str]] = ()) -> None:
        self.root = root
        self._aliases = [(re.compile(p), r) for p, r in aliases]
        self._modes: dict[str, list[_Compiled]] = {}
        for mode in modes:
            slots = [s if isinstance(s, tuple) else (s,) for s in mode.slots]
            self._modes[mode.name] = [_compile(rank, e) for rank, slot in enumerate(slots) for e in slot]
        for entries in self._modes.values():
            for c in entries:
                if isinstance(c.entry, Sub) and c.entry.mode not in self._modes:
                    raise ValueError(f"sub-mode {c.entry.mode!r} has no table")

    def normalize(self, line: str) -> str:
        line = " ".join(line.split())
        for pattern, repl in self._aliases:
            line = pattern.sub(repl, line, count=1)
        return line

    def match(self, mode: str, line: str) -> Action | None:
        """What `line` does in `mode`, or None when the mode has no such command. Setting forms win over clearing
        forms, so `no switchport` sets the negated setting rather than clearing some `switchport ...` line."""
        entries = self._modes[mode]
        for c in entries:
            if (action := self._set(c, line)) is not None:
                return action
        for c in entries:
            if (action := self._clear(c, line)) is not None:
                return action
        return None

    def _set(self, c: _Compiled, line: str) -> Action | None:
        entry = c.entry
        if isinstance(entry, Sub):
            if c.set_re.fullmatch(line):
                return Action("enter", line, line, c.rank, entry.natural, entry.mode)
            return None
        body = line[3:] if entry.negated and line.startswith("no ") else None if entry.negated else line
        m = c.set_re.fullmatch(body) if body is not None else None
        if m is None or not _in_span(entry, m):
            return None
        return Action("set", line, m.group("k"), c.rank, heredoc=entry.heredoc)

    def _clear(self, c: _Compiled, line: str) -> Action | None:
        entry = c.entry
        for prefix in _CLEARS:
            if line.startswith(prefix) and (m := c.clear_re.fullmatch(line[len(prefix):])):
                op: Literal["unset", "drop"] = "drop" if isinstance(entry, Sub) else "unset"
                return Action(op, line, m.group("k") if isinstance(entry, Rule) else m.group(0), c.rank)
        if isinstance(entry, Rule) and entry.negated and (m := c.clear_re.fullmatch(line)):
            return Action("unset", line, m.group("k"), c.rank)  # `switchport` undoes `no switchport`
        return None

    def locate(self, modes: Iterable[str], line: str) -> int | None:
        """Index of the first token no command in `modes` accepts (None: every token fits, the command is short)."""
        tokens = line.split()
        best = 0
        for mode in modes:
            for c in self._modes[mode]:
                for words in (c.words, ("no", *c.words), ("default", *c.words)):
                    n = 0
                    while n < min(len(words), len(tokens)) and words[n] == tokens[n]:
                        n += 1
                    best = max(best, n)
        return None if best >= len(tokens) else best


@dataclass(slots=True)
class Node:
    line: str
    key: str = ""
    order: tuple[Any, ...] = ()  # (rank, natural key or (), insertion sequence): the printing order
    mode: str | None = None  # set on blocks: the mode the line opens
    text: str | None = None  # heredoc body
    children: list[Node] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    @property
    def is_block(self) -> bool:
        return self.mode is not None

    def clone(self) -> Node:
        return Node(self.line, self.key, self.order, self.mode, self.text, [c.clone() for c in self.children],
                    list(self.comments))

    def child(self, key: str, block: bool) -> Node | None:
        return next((c for c in self.children if c.key == key and c.is_block == block), None)


class ConfigTree:
    """A running or candidate config: blocks and settings in the device's printing order."""

    def __init__(self, grammar: Grammar, *, indent: int = 3) -> None:
        self.grammar, self.indent = grammar, indent
        self.root = Node("", mode=grammar.root)
        self._seq = 0

    def copy(self) -> ConfigTree:
        new = ConfigTree(self.grammar, indent=self.indent)
        new.root, new._seq = self.root.clone(), self._seq
        return new

    def cursor(self) -> Cursor:
        return Cursor(self)

    def perform(self, parent: Node, action: Action, text: str | None = None) -> Node | None:
        block = action.op in ("enter", "drop")
        old = parent.child(action.key, block)
        if action.op == "enter" and old is not None:
            return old
        if old is not None:
            parent.children.remove(old)
        if action.op in ("unset", "drop"):
            return None
        if old is not None:  # a replaced setting keeps its place among equals
            seq = old.order[-1]
        else:
            self._seq += 1
            seq = self._seq
        order = (action.rank, natural_key(action.line) if action.natural else (), seq)
        node = Node(action.line, action.key, order, action.mode, text if action.heredoc else None)
        bisect.insort(parent.children, node, key=lambda n: n.order)
        return node

    @classmethod
    def parse(cls, grammar: Grammar, text: str, *, indent: int = 3) -> ConfigTree:
        """Read an indented config (a file the device printed): indentation gives the mode, so no line is retried
        in a parent mode and a misplaced line is an error."""
        tree = cls(grammar, indent=indent)
        stack = [tree.root]
        lines = IndentedText(text)
        for line in lines:
            body = grammar.normalize(line.raw)
            depth = line.indent // indent
            if body.startswith("!!") and depth < len(stack):
                stack[depth].comments.append(body[2:].strip())
                continue
            if is_separator(line):
                if line.text == "end":
                    break
                continue
            action = grammar.match(stack[depth].mode or grammar.root, body) if depth < len(stack) else None
            if action is None:
                raise ConfigError(body, grammar.locate([stack[min(depth, len(stack) - 1)].mode or ""], body),
                                  f"line {lines.number}: {body!r} is not valid here")
            heredoc = "\n".join(lines.take_until("EOF")) if action.heredoc else None
            del stack[depth + 1:]
            node = tree.perform(stack[depth], action, heredoc)
            if node is not None and node.is_block:
                stack.append(node)
        return tree

    def render(self) -> list[str]:
        """Canonical body lines: `!` after every top-level block and between groups of global settings, an
        indented `!` before every nested block, `end` last."""
        out = [f"!! {c}" for c in self.root.comments]
        last_rank: int | None = None
        for child in self.root.children:
            if child.is_block or child.text is not None:
                if last_rank is not None:
                    out.append("!")
                self._emit(child, 0, out)
                out.append("!")
                last_rank = None
                continue
            if last_rank is not None and last_rank != child.order[0]:
                out.append("!")
            out.append(child.line)
            last_rank = child.order[0]
        if last_rank is not None:
            out.append("!")
        out.append("end")
        return out

    def _emit(self, node: Node, depth: int, out: list[str]) -> None:
        pad = " " * (self.indent * (depth + 1))
        out.append(" " * (self.indent * depth) + node.line)
        if node.text is not None:
            out.extend([*node.text.splitlines(), "EOF"])
            return
        out.extend(f"{pad}!! {c}" for c in node.comments)
        for child in node.children:
            if child.is_block:
                out.append(f"{pad}!")
                self._emit(child, depth + 1, out)
            else:
                out.append(pad + child.line)

    def text(self) -> str:
        return "\n".join(self.render()) + "\n"

    def to_json(self) -> dict[str, Any]:
        """The `cmds` form of `show running-config | json`: a block maps to its children, a setting to null."""

        def block(node: Node) -> dict[str, Any]:
            return {"cmds": {c.line: block(c) if c.is_block else None for c in node.children},
                    "comments": list(node.comments)}

        return {"cmds": block(self.root)["cmds"]}

    def blocks(self, mode: str) -> Mapping[str, Node]:
        """Top-level blocks of one mode by line, e.g. every `interface ...`."""
        return {c.line: c for c in self.root.children if c.mode == mode}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigTree) and self.render() == other.render()

    __hash__ = None  # type: ignore[assignment]


class Cursor:
    """Applies flat lines to a tree, tracking the current mode like a CLI session does."""

    def __init__(self, tree: ConfigTree) -> None:
        self.tree = tree
        self.stack = [tree.root]

    def apply(self, line: str, text: str | None = None) -> None:
        grammar = self.tree.grammar
        line = grammar.normalize(line)
        for depth in range(len(self.stack) - 1, -1, -1):
            action = grammar.match(self.stack[depth].mode or grammar.root, line)
            if action is None:
                continue
            del self.stack[depth + 1:]
            node = self.tree.perform(self.stack[depth], action, text)
            if node is not None and node.is_block:
                self.stack.append(node)
            return
        raise ConfigError(line, grammar.locate([n.mode or "" for n in self.stack], line))

    def exit(self) -> bool:
        """Leave the current sub-mode; False at the global level."""
        if len(self.stack) == 1:
            return False
        self.stack.pop()
        return True

    def comment(self, text: str) -> None:
        self.stack[-1].comments.extend(line.strip() for line in text.splitlines() if line.strip())


def unified_diff(old: ConfigTree, new: ConfigTree, fromfile: str, tofile: str) -> str:
    """Unified diff (3 lines of context) of the two canonical texts; empty when they are equal."""
    lines = list(difflib.unified_diff(old.render(), new.render(), fromfile, tofile, lineterm="", n=3))
    return "\n".join(lines) + "\n" if lines else ""
