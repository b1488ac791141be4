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

import re
from typing import Any

import yaml

from rocefab.models.findings import Path
from rocefab.models.sourcemap import (
    ALIAS_BUDGET,
    MAX_DEPTH,
    MAX_ERRORS,
    MAX_NODES,
    IntentLoadError,
    LoadError,
    Position,
    SourceMap,
)

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


LIBYAML = hasattr(yaml, "CSafeLoader")


class _Yaml12Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's parser (iterative, so no nesting depth can overflow a stack) with YAML 1.2 scalars; the
    pure-Python parser where PyYAML was built without libyaml."""


_yaml12(_Yaml12Loader)
_FastYaml12Loader = _Yaml12Loader


def load_yaml12(text: str) -> Any:
    """Plain YAML load with YAML 1.2 scalars, for documents rocefab or a device wrote (NVUE says `on`, which
    must stay a string). Not for user input: that goes through `parse_yaml`."""
    return yaml.load(text, Loader=_FastYaml12Loader)


# --- building plain data with positions -------------------------------------------------------------------


def _position(mark: Any) -> Position:
    return Position(mark.line + 1, (mark.column or 0) + 1)


class _Refused(Exception):
    def __init__(self, mark: Any, path: Path, message: str) -> None:
        super().__init__(message)
        self.error_position = _position(mark)
        self.path = path


def _tag_name(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


class _Builder:
    """Builds plain data straight from the parser's events, recording where each key and item starts.

    Bounded as it goes: nesting depth, the number of values the text holds, and what aliases and merge keys
    add (each adds the size of the value it repeats). Merge keys (`<<`) are resolved here: keys written in
    the mapping win over merged ones, an earlier merged mapping over a later one, and a merged key is never
    reported as a duplicate. A repeated value is the same Python object, so repetition costs no memory."""

    def __init__(self, loader: _Yaml12Loader, file: str) -> None:
        self.loader = loader
        self.file = file
        self.nodes = 0
        self.budget = ALIAS_BUDGET
        self.anchors: dict[str, tuple[Any, int, list[tuple[Path, Position]]]] = {}
        self.order: list[tuple[Path, Position]] = []  # positions in the order recorded, for anchors to copy
        self.scalars: dict[tuple[Any, ...], Any] = {}
        self.positions: dict[Path, Position] = {}
        self.errors: list[LoadError] = []

    def _event(self) -> Any:
        return self.loader.get_event()

    def _error(self, mark: Any, path: Path, message: str) -> None:
        self.errors.append(LoadError(self.file, _position(mark), path, message))
        if len(self.errors) >= MAX_ERRORS:
            raise _Refused(mark, path, f"more than {MAX_ERRORS} errors; stopping here")

    def _resolve(self, event: Any, kind: type[yaml.Node]) -> str:
        tag = event.tag
        if tag is None or tag == "!":
            value = event.value if kind is yaml.ScalarNode else None
            tag = self.loader.resolve(kind, value, event.implicit)
        if tag not in CORE_TAGS and tag != MERGE_TAG:
            raise _Refused(event.start_mark, (), f"the YAML tag {_tag_name(tag)!r} is not supported: intents "
                                                 "hold plain values, lists and mappings")
        return str(tag)

    def document(self) -> tuple[Any, Position]:
        self._event()  # StreamStartEvent
        if self.loader.check_event(yaml.StreamEndEvent):
            raise _Refused(yaml.Mark(self.file, 0, 0, 0, "", 0), (), "the file is empty")
        self._event()  # DocumentStartEvent
        start = self.loader.peek_event().start_mark
        value, _ = self.value((), 1)
        self._event()  # DocumentEndEvent
        if not self.loader.check_event(yaml.StreamEndEvent):
            raise _Refused(self.loader.peek_event().start_mark, (),
                           "a second YAML document starts here; an intent is one document")
        return value, _position(start)

    def value(self, path: Path, depth: int) -> tuple[Any, int]:
        """The next value and its size (values it holds, counting repeats)."""
        event = self._event()
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Refused(event.start_mark, path, f"more than {MAX_NODES:,} values; intents need far fewer")
        if depth > MAX_DEPTH:
            raise _Refused(event.start_mark, path, f"nested more than {MAX_DEPTH} levels deep; intents need far fewer")
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in self.anchors:
                raise _Refused(event.start_mark, path, f"*{event.anchor} refers to no anchor (&{event.anchor}) "
                                                       "defined before it")
            value, size, inside = self.anchors[event.anchor]
            self._spend(size, event.start_mark, path)
            # An error inside the repeated value points where that value is written, as for the original.
            for suffix, position in inside:
                self._record((*path, *suffix), position)
            return value, size
        recorded = len(self.order)
        try:
            if isinstance(event, yaml.ScalarEvent):
                built = self._scalar(event, path), 1
            elif isinstance(event, yaml.SequenceStartEvent):
                self._resolve(event, yaml.SequenceNode)
                built = self._sequence(path, depth)
            else:
                self._resolve(event, yaml.MappingNode)
                built = self._mapping(path, depth)
        except _Refused as exc:
            exc.path = exc.path or path
            raise
        if event.anchor is not None:
            inside = [(p[len(path):], position) for p, position in self.order[recorded:]]
            self.anchors[event.anchor] = (*built, inside)
        return built

    def _record(self, path: Path, position: Position) -> None:
        self.positions[path] = position
        self.order.append((path, position))

    def _spend(self, size: int, mark: Any, path: Path) -> None:
        self.budget -= size
        if self.budget < 0:
            raise _Refused(mark, path, f"aliases expand to more than {ALIAS_BUDGET:,} values beyond the "
                                       "document's own; refusing to build it")

    def _scalar(self, event: Any, path: Path) -> Any:
        # Scalars are immutable and resolve by their text alone, so a repeated one is built once.
        memo = (event.tag, event.value, event.implicit)
        if memo in self.scalars:
            return self.scalars[memo]
        tag = self._resolve(event, yaml.ScalarNode)
        if tag == MERGE_TAG:
            raise _Refused(event.start_mark, path, "'<<' (a merge key) can only be a key")
        value = self.scalars[memo] = self._construct(tag, event, path)
        return value

    def _construct(self, tag: str, event: Any, path: Path) -> Any:
        # The tag's constructor directly: `construct_object` would keep every node (and its marks) alive.
        node = yaml.ScalarNode(tag, event.value, None, None, event.style)
        try:
            return self.loader.yaml_constructors[tag](self.loader, node)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            raise _Refused(event.start_mark, path, f"{_tag_name(tag)} cannot hold {event.value!r}: {exc}") from None

    def _sequence(self, path: Path, depth: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        size = 1
        while not self.loader.check_event(yaml.SequenceEndEvent):
            child = (*path, len(items))
            self._record(child, _position(self.loader.peek_event().start_mark))
            item, item_size = self.value(child, depth + 1)
            items.append(item)
            size += item_size
        self._event()
        return items, size

    def _key(self, path: Path) -> tuple[str | int | None, Any, bool]:
        """The next key, where it starts, and whether it is the merge key."""
        event = self.loader.peek_event()
        mark = event.start_mark
        if not isinstance(event, yaml.ScalarEvent):
            raise _Refused(mark, path, "a key must be a plain name, not a list, mapping or alias")
        self._event()
        self.nodes += 1
        tag = self._resolve(event, yaml.ScalarNode)
        if tag == MERGE_TAG:
            return None, mark, True
        key = self._construct(tag, event, path)
        if not isinstance(key, str | int) or isinstance(key, bool):
            self._error(mark, path, f"unsupported key {key!r}")
            return None, mark, False
        return key, mark, False

    def _mapping(self, path: Path, depth: int) -> tuple[dict[Any, Any], int]:
        own: dict[Any, Any] = {}
        first_at: dict[Any, Any] = {}
        merged: list[dict[Any, Any]] = []
        size = 1
        while not self.loader.check_event(yaml.MappingEndEvent):
            key, mark, is_merge = self._key(path)
            if is_merge:
                value_mark = self.loader.peek_event().start_mark
                value, value_size = self.value(path, depth + 1)
                sources = value if isinstance(value, list) else [value]
                if not sources or not all(isinstance(s, dict) for s in sources):
                    raise _Refused(value_mark, path,
                                   "the merge key '<<' takes a mapping or a list of mappings (usually *alias)")
                self._spend(value_size, value_mark, path)
                merged.extend(sources)
                continue
            child = (*path, key) if key is not None else path
            if key is not None and key in own:
                self._error(mark, child, f"duplicate key '{key}' (first given on line {first_at[key].line + 1}); "
                                         "YAML would silently keep only the last one")
                self.value(child, depth + 1)
                continue
            if key is not None:
                self._record(child, _position(mark))
                first_at[key] = mark
            value, value_size = self.value(child, depth + 1)
            size += value_size
            if key is not None:
                own[key] = value
        self._event()
        result: dict[Any, Any] = {}
        for source in reversed(merged):  # an earlier merged mapping wins over a later one
            result.update(source)
        result.update(own)
        return result, size


def _yaml_error(exc: yaml.MarkedYAMLError, file: str) -> LoadError:
    """Point at where an unclosed construct starts (a bracket, a quote), naming where parsing gave up;
    otherwise at the problem itself."""
    problem, context = exc.problem_mark, exc.context_mark
    unclosed = bool(exc.context) and any(word in str(exc.context) for word in ("flow", "quoted"))
    if unclosed and context is not None and problem is not None and context.line != problem.line:
        return LoadError(
            file, _position(context),
            (), f"not valid YAML: {exc.context} that starts here, {exc.problem} on line {problem.line + 1}",
        )
    mark = problem or context
    return LoadError(file, _position(mark) if mark else Position(1, 1), (), f"not valid YAML: {exc.problem}")


def _reader_error(exc: yaml.reader.ReaderError, text: str, file: str) -> LoadError:
    """The parser names a forbidden character by its offset (libyaml: in UTF-8 bytes; PyYAML's own reader:
    in characters); say at which line and column it is, and what it is."""
    offset = exc.position if isinstance(exc.position, int) else 0
    index = len(text.encode()[:offset].decode(errors="ignore")) if LIBYAML else offset
    line_start = text.rfind("\n", 0, index) + 1
    position = Position(text.count("\n", 0, index) + 1, index - line_start + 1)
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    return LoadError(file, position, (), f"not valid YAML: control character U+{code:04X} is not allowed")


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse YAML text into plain data plus a `SourceMap`; raise `IntentLoadError` on malformed input."""
    loader = _Yaml12Loader(text)
    builder = _Builder(loader, file)
    data: Any = None
    root = Position(1, 1)
    try:
        data, root = builder.document()
    except _Refused as exc:
        builder.errors.append(LoadError(file, exc.error_position, exc.path, str(exc)))
    except yaml.reader.ReaderError as exc:
        builder.errors.append(_reader_error(exc, text, file))
    except yaml.MarkedYAMLError as exc:
        builder.errors.append(_yaml_error(exc, file))
    except yaml.YAMLError as exc:
        builder.errors.append(LoadError(file, Position(1, 1), (), f"not valid YAML: {exc}"))
    finally:
        loader.dispose()
    if builder.errors:
        raise IntentLoadError(builder.errors)
    return data, SourceMap(file, {(): root, **builder.positions})
