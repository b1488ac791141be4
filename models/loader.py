"""Load an intent YAML file into a validated `Intent`, keeping where every key came from.

Errors name `file:line:col field.path: message`, so a user with a 300-line intent goes straight to the
offending key. Reading the file within its bounds and the positions live in `sourcemap`, the YAML 1.2 reader
in `yamlsource`; this module turns the schema's complaints into messages in the intent author's terms.
"""

from __future__ import annotations

import difflib
import hashlib
import ipaddress
import types
import typing
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any, TypeVar

from pydantic import BaseModel, StringConstraints, Tag, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from rocefab.models import types as types_
from rocefab.models.findings import Path
from rocefab.models.intent import EXPLICIT_TAG, SIZED_TAG, Intent
from rocefab.models.sourcemap import IntentLoadError, LoadError, Position, SourceMap, read_source
from rocefab.models.yamlsource import load_yaml12, parse_yaml

__all__ = ["IntentLoadError", "LoadError", "LoadedIntent", "Position", "SourceMap", "load_intent", "load_yaml12",
           "parse_yaml", "validate_data"]

_UNION_TAGS = {EXPLICIT_TAG, SIZED_TAG}


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    source: SourceMap
    file_name: str
    sha256: str


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


def _pattern_meanings() -> dict[str, str]:
    """What each string type's pattern means, in the words of its description, instead of a regular expression."""
    meanings: dict[str, str] = {}
    for alias in (types_.DeviceName, types_.NetdevName, types_.RdmaDeviceName, types_.VlanName, types_.ModelName,
                  types_.NcclIfname, types_.NcclVariable, types_.NcclValue):
        metadata = typing.get_args(alias)[1:]
        pattern = next(m.pattern for m in metadata if isinstance(m, StringConstraints))
        description = next((m.description for m in metadata if isinstance(m, FieldInfo)), None)
        meanings[str(pattern)] = description or f"text matching {pattern}"
    return meanings


_PATTERN_TEXT = _pattern_meanings()


_SECRET_KEYS = {"password", "passwd", "secret", "token", "api_key"}


def _close_match(key: str | int, allowed: list[str]) -> str | None:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    return close[0] if close else None


def _shortened(value: Any, limit: int = 80) -> str:
    """A value as an error message shows it: its repr, cut short (a hostile value may be kilobytes long)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _describe(root: type[BaseModel], error: ErrorDetails, path: Path, loc: Path) -> tuple[Path, str]:
    """The path to report and the message, in the intent author's terms (`loc`: pydantic's own location)."""
    kind = error["type"]
    value = error.get("input")
    shown = f" (got {_shortened(value)})" if not isinstance(value, dict | list | tuple) else ""
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
    shown = str(file)
    raw, text = read_source(file, shown)
    data, source = parse_yaml(text, shown)
    intent = validate_data(data, source, Intent)
    return LoadedIntent(intent, source, FsPath(file).name, hashlib.sha256(raw).hexdigest())
