"""Read a YAML document from a file into plain data, keeping where every key came from — and nothing more.

An intent arrives from a user or a pipeline, so reading it is bounded: only a regular file, at most
`MAX_BYTES`, nested at most `MAX_DEPTH` deep, and expanding aliases to at most `ALIAS_BUDGET` values beyond
what the text itself holds (a "billion laughs" document is a few hundred bytes). Every failure — a byte
that is not UTF-8, a control character, a tag, a bad merge key, a value its tag cannot construct — becomes a
`LoadError` at its line and column; nothing escapes as a traceback.

Scalars follow the YAML 1.2 core schema: booleans are only true/false, numbers have no YAML 1.1 forms (no
`on`/`yes`, no base-60 `1:30`, no octal `010`) and there are no implicit timestamps, so a host named `no`, a
speed or a date-like name stays what it looks like.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

import yaml

from rocefab.models.findings import Path, dotted

MAX_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 32
ALIAS_BUDGET = 100_000  # values built through aliases and merge keys, beyond the document's own nodes
MAX_ERRORS = 50


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    col: int  # 1-based


@dataclass(frozen=True, slots=True)
class LoadError:
    file: str
    position: Position
    path: Path
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.position.line}:{self.position.col}"
        field_path = dotted(self.path)
        return f"{where} {field_path}: {self.message}" if field_path else f"{where} {self.message}"


class IntentLoadError(Exception):
    """The file could not be read or does not match the schema; nothing downstream may run."""

    def __init__(self, errors: list[LoadError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


@dataclass(frozen=True)
class SourceMap:
    """Where each key or list item of the document starts."""

    file: str
    positions: dict[Path, Position] = field(default_factory=dict)

    def locate(self, path: Path) -> Position:
        """Position of `path`, or of its nearest ancestor that exists in the file."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(tuple(path[:end]))
            if found is not None:
                return found
        return Position(1, 1)


# --- reading the file ---------------------------------------------------------------------------------------


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_source(file: str | FsPath, shown: str, max_bytes: int = MAX_BYTES) -> tuple[bytes, str]:
    """The file's bytes and its text; only a regular file of at most `max_bytes` is read.

    Opened without blocking, so a FIFO given as the intent is refused instead of waiting forever for a writer."""
    def fail(message: str, position: Position = Position(1, 1)) -> IntentLoadError:
        return IntentLoadError([LoadError(shown, position, (), message)])

    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise fail(f"cannot read: {_kind_of(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise fail(f"the file is {info.st_size:,} bytes; intents are at most {max_bytes:,}")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > max_bytes:
        raise fail(f"the file grew past {max_bytes:,} bytes while being read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        col = len(raw[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        position = Position(raw.count(b"\n", 0, exc.start) + 1, col)
        raise fail(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be decoded", position) from None
    return raw, text.removeprefix("\ufeff")


# --- YAML 1.2 scalars ---------------------------------------------------------------------------------------

_YAML11_TYPES = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                 "tag:yaml.org,2002:timestamp"}
_RESOLVERS = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _YAML11_TYPES]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_BOOL = ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_INT = ("tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789"))
_FLOAT = (
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"),
)
# The core schema's tags; anything else (!!binary, !!timestamp, !!set, !!python/..., !custom) is refused.
CORE_TAGS = {f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map")}
MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # "010" is ten, not YAML 1.1's octal eight


def _yaml12(loader: type[yaml.SafeLoader]) -> None:
    loader.yaml_implicit_resolvers = {first: list(r) for first, r in _RESOLVERS.items()}
    for tag, regexp, first in (_BOOL, _INT, _FLOAT):
        loader.add_implicit_resolver(tag, regexp, first)
    loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class _TooDeep(yaml.MarkedYAMLError):
    pass


class _Yaml12Loader(yaml.SafeLoader):
    """The pure-Python loader (it keeps marks on every node), composing at most `MAX_DEPTH` levels deep."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep(problem=f"nested more than {MAX_DEPTH} levels deep; intents need far fewer",
                               problem_mark=self.peek_event().start_mark)  # type: ignore[no-untyped-call]
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_yaml12(_Yaml12Loader)


class _FastYaml12Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same YAML 1.2 scalars on libyaml's parser: large rendered documents load several times faster."""


_yaml12(_FastYaml12Loader)


def load_yaml12(text: str) -> Any:
    """Plain YAML load with YAML 1.2 scalars, for documents rocefab or a device wrote (NVUE says `on`, which
    must stay a string). Not for user input: that goes through `parse_yaml`."""
    return yaml.load(text, Loader=_FastYaml12Loader)


# --- building plain data with positions ---------------------------------------------------------------------


def _position(node: yaml.Node | yaml.Mark) -> Position:
    mark = node.start_mark if isinstance(node, yaml.Node) else node
    return Position(mark.line + 1, mark.column + 1)


class _Refused(Exception):
    def __init__(self, where: yaml.Node | yaml.Mark, path: Path, message: str) -> None:
        super().__init__(message)
        self.error_position = _position(where)
        self.path = path


class _Builder:
    """Turns a composed YAML node tree into plain data while recording positions and duplicate keys.

    Merge keys (`<<`) are resolved here, not by PyYAML: keys written in the mapping win over merged ones,
    an earlier merged mapping over a later one, and a merged key is never reported as a duplicate."""

    def __init__(self, loader: _Yaml12Loader, file: str, budget: int) -> None:
        self.loader = loader
        self.file = file
        self.budget = budget
        self.positions: dict[Path, Position] = {}
        self.errors: list[LoadError] = []

    def _spend(self, node: yaml.Node, path: Path) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise _Refused(node, path, f"aliases expand to more than {ALIAS_BUDGET:,} values beyond the "
                                       "document's own; refusing to build it")

    def _error(self, node: yaml.Node, path: Path, message: str) -> None:
        self.errors.append(LoadError(self.file, _position(node), path, message))
        if len(self.errors) >= MAX_ERRORS:
            raise _Refused(node, path, f"more than {MAX_ERRORS} errors; stopping here")

    def _check_tag(self, node: yaml.Node, path: Path) -> None:
        if node.tag not in CORE_TAGS:
            raise _Refused(node, path, f"the YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')!r} is not "
                                       "supported: intents hold plain values, lists and mappings")

    def build(self, node: yaml.Node, path: Path) -> Any:
        self._spend(node, path)
        self._check_tag(node, path)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.positions[(*path, index)] = _position(item)
                items.append(self.build(item, (*path, index)))
            return items
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, OverflowError) as exc:
            raise _Refused(node, path, f"{node.tag.replace('tag:yaml.org,2002:', '!!')} cannot hold "
                                       f"{node.value!r}: {exc}") from None

    def _key(self, node: yaml.Node, path: Path) -> str | int | None:
        if not isinstance(node, yaml.ScalarNode):
            self._error(node, path, "a key must be a plain name, not a list or mapping")
            return None
        self._check_tag(node, path)
        key = self.build(node, path)
        if not isinstance(key, str | int) or isinstance(key, bool):
            self._error(node, path, f"unsupported key {key!r}")
            return None
        return key

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        own: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
        merged: list[yaml.MappingNode] = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:
                merged.extend(self._merge_sources(value_node, path))
                continue
            key = self._key(key_node, path)
            if key is None:
                continue
            if key in own:
                first = _position(own[key][0])
                self._error(key_node, (*path, key), f"duplicate key '{key}' (first given on line {first.line}); "
                                                    "YAML would silently keep only the last one")
                continue
            own[key] = (key_node, value_node)
        result: dict[Any, Any] = {}
        # Last merged source first: each earlier one, then the mapping's own keys, overwrite value and position.
        for source in reversed(merged):
            result.update(self._mapping(source, path))
        for key, (key_node, value_node) in own.items():
            self.positions[(*path, key)] = _position(key_node)
            result[key] = self.build(value_node, (*path, key))
        return result

    def _merge_sources(self, value: yaml.Node, path: Path) -> list[yaml.MappingNode]:
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        if not sources or not all(isinstance(s, yaml.MappingNode) for s in sources):
            raise _Refused(value, path, "the merge key '<<' takes a mapping or a list of mappings (usually *alias)")
        for source in sources:
            self._spend(source, path)
        return sources  # type: ignore[return-value]


def _yaml_error(exc: yaml.MarkedYAMLError, file: str, plain: bool = False) -> LoadError:
    """Point at where the broken construct starts (an unclosed bracket), naming where parsing gave up."""
    problem, context = exc.problem_mark, exc.context_mark
    if context is not None and problem is not None and exc.context and context.line != problem.line:
        return LoadError(
            file, Position(context.line + 1, context.column + 1), (),
            f"not valid YAML: {exc.context} that starts here, {exc.problem} on line {problem.line + 1}",
        )
    mark = problem or context
    pos = Position(mark.line + 1, mark.column + 1) if mark else Position(1, 1)
    return LoadError(file, pos, (), str(exc.problem) if plain else f"not valid YAML: {exc.problem}")


def _reader_error(exc: yaml.reader.ReaderError, text: str, file: str) -> LoadError:
    """PyYAML names a forbidden character by its index in the text; say where it is, and what it is."""
    index = exc.position if isinstance(exc.position, int) else 0
    line_start = text.rfind("\n", 0, index) + 1
    position = Position(text.count("\n", 0, index) + 1, index - line_start + 1)
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    return LoadError(file, position, (), f"not valid YAML: control character U+{code:04X} is not allowed")


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse YAML text into plain data plus a `SourceMap`; raise `IntentLoadError` on malformed input."""
    try:
        loader = _Yaml12Loader(text)  # PyYAML checks every character here, before parsing starts
    except yaml.reader.ReaderError as exc:
        raise IntentLoadError([_reader_error(exc, text, file)]) from None
    try:
        try:
            node = loader.get_single_node()
        except yaml.reader.ReaderError as exc:
            raise IntentLoadError([_reader_error(exc, text, file)]) from None
        except _TooDeep as exc:
            raise IntentLoadError([_yaml_error(exc, file, plain=True)]) from None
        except yaml.MarkedYAMLError as exc:
            raise IntentLoadError([_yaml_error(exc, file)]) from None
        except yaml.YAMLError as exc:
            raise IntentLoadError([LoadError(file, Position(1, 1), (), f"not valid YAML: {exc}")]) from None
        if node is None:
            raise IntentLoadError([LoadError(file, Position(1, 1), (), "the file is empty")])
        builder = _Builder(loader, file, ALIAS_BUDGET + _count_nodes(node))
        try:
            data = builder.build(node, ())
        except _Refused as exc:
            builder.errors.append(LoadError(file, exc.error_position, exc.path, str(exc)))
        except yaml.MarkedYAMLError as exc:
            builder.errors.append(_yaml_error(exc, file))
    finally:
        loader.dispose()
    if builder.errors:
        raise IntentLoadError(builder.errors)
    return data, SourceMap(file, {(): _position(node), **builder.positions})


def _count_nodes(root: yaml.Node) -> int:
    """How many distinct nodes the text composed (an alias is the same node again, so not counted twice)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return len(seen)
