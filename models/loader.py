"""Load an intent YAML file into a validated `Intent`, keeping where every key came from.

Errors name `file:line:col field.path: message`, so a user with a 300-line intent goes straight to the
offending key. YAML is read with YAML 1.2 booleans (only true/false), because YAML 1.1 turns `on`, `no` and
`yes` into booleans and a host named `no` or a value `on` should never change meaning silently.
"""

from __future__ import annotations

import difflib
import hashlib
import ipaddress
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, Tag, ValidationError
from pydantic_core import ErrorDetails

from rocefab.models.findings import Path, dotted
from rocefab.models.intent import EXPLICIT_TAG, SIZED_TAG, Intent

_UNION_TAGS = {EXPLICIT_TAG, SIZED_TAG}


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
    """The intent could not be read or does not match the schema; nothing downstream may run."""

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


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    source: SourceMap
    file_name: str
    sha256: str


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars: booleans are only true/false, and numbers have no
    YAML 1.1 forms (no `on`/`yes`, no base-60 `1:30`, no octal `010`), so a MAC address or an interface
    speed stays what it looks like."""


_YAML11_TYPES = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _YAML11_TYPES]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # "010" is ten, not YAML 1.1's octal eight


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class _FastYaml12Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same YAML 1.2 scalars on libyaml's parser: large rendered documents load several times faster."""


_FastYaml12Loader.yaml_implicit_resolvers = _Yaml12Loader.yaml_implicit_resolvers
_FastYaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_yaml12(text: str) -> Any:
    """Plain YAML load with YAML 1.2 scalars (NVUE documents say `on`, which must stay a string)."""
    return yaml.load(text, Loader=_FastYaml12Loader)


def _position(node: yaml.Node) -> Position:
    return Position(node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Turns a composed YAML node tree into plain data while recording positions and duplicate keys."""

    def __init__(self, loader: _Yaml12Loader, file: str) -> None:
        self.loader = loader
        self.file = file
        self.positions: dict[Path, Position] = {}
        self.errors: list[LoadError] = []

    def build(self, node: yaml.Node, path: Path) -> Any:
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True)
                if not isinstance(key, str | int) or isinstance(key, bool):
                    self.errors.append(
                        LoadError(self.file, _position(key_node), path, f"unsupported key {key!r}")
                    )
                    continue
                child = (*path, key)
                if key in result:
                    first = self.positions[child]
                    self.errors.append(
                        LoadError(
                            self.file,
                            _position(key_node),
                            child,
                            f"duplicate key '{key}' (first given on line {first.line}); "
                            "YAML would silently keep only the last one",
                        )
                    )
                    continue
                self.positions[child] = _position(key_node)
                result[key] = self.build(value_node, child)
            return result
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.positions[(*path, index)] = _position(item)
                items.append(self.build(item, (*path, index)))
            return items
        return self.loader.construct_object(node, deep=True)


def _yaml_error(exc: yaml.MarkedYAMLError, file: str) -> LoadError:
    """Point at where the broken construct starts (an unclosed bracket), naming where parsing gave up."""
    problem, context = exc.problem_mark, exc.context_mark
    if context is not None and problem is not None and exc.context and context.line != problem.line:
        return LoadError(
            file, Position(context.line + 1, context.column + 1), (),
            f"not valid YAML: {exc.context} that starts here, {exc.problem} on line {problem.line + 1}",
        )
    mark = problem or context
    pos = Position(mark.line + 1, mark.column + 1) if mark else Position(1, 1)
    return LoadError(file, pos, (), f"not valid YAML: {exc.problem}")


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse YAML text into plain data plus a `SourceMap`; raise `IntentLoadError` on malformed input."""
    loader = _Yaml12Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise IntentLoadError([_yaml_error(exc, file)]) from None
    finally:
        loader.dispose()
    if node is None:
        raise IntentLoadError([LoadError(file, Position(1, 1), (), "the file is empty")])
    builder = _Builder(loader, file)
    data = builder.build(node, ())
    if builder.errors:
        raise IntentLoadError(builder.errors)
    source = SourceMap(file, {(): _position(node), **builder.positions})
    return data, source


def _model_fields_at(root: type[BaseModel], path: Path) -> list[str] | None:
    """Field names the schema allows at `path` (a mapping inside the document), for 'did you mean' hints."""
    current: Any = root
    for part in path:
        if isinstance(part, int):
            continue
        member = _tagged_member(current, part)
        if member is not None:  # pydantic's location names the union member it validated against
            current = member
            continue
        mapping = _mapping_value(current)
        if mapping is not None:  # a free-form key of a dict field, e.g. a device name
            current = mapping
            continue
        model = _as_model(current)
        if model is None or part not in model.model_fields:
            return None
        current = model.model_fields[part].annotation
    model = _as_model(current)
    return list(model.model_fields) if model is not None else None


def _tagged_member(annotation: Any, tag: str | int) -> Any:
    """The member of a tagged union (`Annotated[A, Tag(...)] | ...`) carrying `tag`, else None."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Annotated and any(
            isinstance(meta, Tag) and meta.tag == tag for meta in arg.__metadata__
        ):
            return typing.get_args(arg)[0]
    return None


def _mapping_value(annotation: Any) -> Any:
    """The value type of `dict[K, V]` (also inside `| None`), else None."""
    if typing.get_origin(annotation) is dict:
        return typing.get_args(annotation)[1]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if typing.get_origin(arg) is dict:
                return typing.get_args(arg)[1]
    return None


def _as_model(annotation: Any) -> type[BaseModel] | None:
    """The BaseModel inside an annotation such as `X`, `X | None` or `tuple[X, ...]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, tuple, list, typing.Annotated):
        for arg in typing.get_args(annotation):
            found = _as_model(arg)
            if found is not None:
                return found
    return None


# What the schema's name patterns mean, said in words instead of as a regular expression.
_PATTERN_TEXT = {
    r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$": "a lower-case host name: letters, digits and inner '-', up to 63",
    r"^NCCL_[A-Z0-9_]+$": "an NCCL_* variable name in capitals",
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$": "a Linux interface name of at most 15 characters",
    r"^[A-Za-z0-9_-]{1,32}$": "letters, digits, '_' and '-', up to 32",
    r"^[^\x00-\x1f]*$": "one line of printable text",
}


_SECRET_KEYS = {"password", "passwd", "secret", "token", "api_key"}


def _close_match(key: str | int, allowed: list[str]) -> str | None:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    return close[0] if close else None


def _describe(root: type[BaseModel], error: ErrorDetails, path: Path, loc: Path) -> tuple[Path, str]:
    """The path to report and the message, in the intent author's terms (`loc`: pydantic's own location)."""
    kind = error["type"]
    value = error.get("input")
    shown = f" (got {value!r})" if not isinstance(value, dict | list | tuple) else ""
    if kind == "extra_forbidden":
        key = path[-1] if path else "?"
        allowed = _model_fields_at(root, loc[:-1]) or []
        close = _close_match(key, allowed)
        hint = f"; did you mean '{close}'?" if close else ""
        if str(key).lower() in _SECRET_KEYS:
            hint = "; credentials never go in rocefab's files (use an environment variable, a file or a keyring)"
        return path, f"unknown key '{key}'{hint} (allowed here: {', '.join(allowed)})"
    if kind == "missing" and path and isinstance(path[-1], int):
        return path[:-1], f"too few items: item {path[-1]} is missing"
    if kind == "missing":
        return path, f"required key '{path[-1]}' is missing"
    if kind == "value_error":
        # Our own validators word their message completely, value included.
        return path, str(error["msg"]).removeprefix("Value error, ")
    if kind == "string_pattern_mismatch":
        pattern = str((error.get("ctx") or {}).get("pattern", ""))
        if pattern in _PATTERN_TEXT:
            return path, f"expected {_PATTERN_TEXT[pattern]}{shown}"
    if kind == "ip_v4_network" and isinstance(value, str) and "/" in value:
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            pass
        else:
            return path, f"{value} has host bits set; the network is {network}"
    return path, f"{error['msg']}{shown}"


def _clean_loc(loc: tuple[Any, ...]) -> Path:
    # Pydantic adds markers such as '[key]' for dict-key errors or a validator name for
    # model-level errors; the user only knows their own keys.
    return tuple(
        p for p in loc
        if isinstance(p, int) or (isinstance(p, str) and not p.startswith("[") and p not in _UNION_TAGS)
    )


M = TypeVar("M", bound=BaseModel)


def validate_data(data: Any, source: SourceMap, model: type[M]) -> M:
    """Validate plain data against `model`, turning every schema error into a positioned `LoadError`."""
    if not isinstance(data, dict):
        raise IntentLoadError(
            [LoadError(source.file, source.locate(()), (), "the file must hold a YAML mapping at top level")]
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raw = [(_clean_loc(e["loc"]), tuple(e["loc"]), e) for e in exc.errors(include_url=False)]
        # A container whose item failed is also reported as too short; the item's own error is the news.
        deeper = {path[:i] for path, _, _ in raw for i in range(len(path))}
        # A misspelt key also leaves its correct spelling missing; "did you mean" already says both.
        misspelt = {
            (*path[:-1], match)
            for path, loc, error in raw
            if error["type"] == "extra_forbidden" and path
            and (match := _close_match(path[-1], _model_fields_at(model, loc[:-1]) or []))
        }
        errors = []
        for path, loc, error in raw:
            if (error["type"] == "too_short" and path in deeper) or (error["type"] == "missing" and path in misspelt):
                continue
            shown_path, message = _describe(model, error, path, loc)
            errors.append(LoadError(source.file, source.locate(shown_path), shown_path, message))
        errors.sort(key=lambda e: (e.position.line, e.position.col))
        raise IntentLoadError(errors) from None


def load_intent(file: str | FsPath) -> LoadedIntent:
    """Read, parse and schema-validate an intent file."""
    fs_path = FsPath(file)
    shown = str(file)
    try:
        raw = fs_path.read_bytes()
    except OSError as exc:
        raise IntentLoadError([LoadError(shown, Position(1, 1), (), f"cannot read: {exc.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntentLoadError(
            [LoadError(shown, Position(1, 1), (), f"not UTF-8 text (byte {exc.start})")]
        ) from None
    data, source = parse_yaml(text, shown)
    intent = validate_data(data, source, Intent)
    return LoadedIntent(intent, source, fs_path.name, hashlib.sha256(raw).hexdigest())
