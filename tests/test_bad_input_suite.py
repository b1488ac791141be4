"""Generated bad input: hypothesis mutates the example intents — a required key deleted, a value swapped
for one of another type, a number pushed out of range, metacharacters in a name, an unknown key, a YAML fault
in the text — and every case must be refused with exit 2 at the mutation's line and column, naming its field,
with no traceback, no output folder, and no payload run.

The expected position is computed independently of rocefab's loader: from PyYAML's own node marks for
document mutations, and from the line the mutation edited for text faults. Pydantic alone (not rocefab's
messages) decides which deletions and swaps are invalid, so the cases are known-bad before rocefab sees them.
"""

from __future__ import annotations

import copy
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from intent_bases import BASES
from pydantic import ValidationError
from schema_walk import get_value
from typer.testing import CliRunner

from rocefab.cli import app
from rocefab.models.findings import dotted
from rocefab.models.intent import Intent

CASES = 200
STATS: Counter[str] = Counter()
MARKER_NAME = "pwned"
Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Case:
    kind: str
    text: bytes
    line: int  # 1-based line the refusal must point at
    col: int | None  # and column, where the mutation fixes it
    field: str | None  # the dotted field path the message must name, if any


def _paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every key and list item path of a document."""
    found: list[Path_] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        path = (*prefix, key)
        found.append(path)
        found.extend(_paths(value, path))
    return found


def _pydantic_refuses(doc: Any) -> bool:
    try:
        Intent.model_validate(doc)
    except ValidationError:
        return True
    return False


def _without(doc: Any, path: Path_) -> Any:
    changed = copy.deepcopy(doc)
    parent = get_value(changed, path[:-1])
    del parent[path[-1]]
    return changed


@cache
def _required(base: str) -> list[Path_]:
    """Keys whose deletion pydantic refuses: required fields (list items are left alone)."""
    doc = BASES[base]
    return [p for p in _paths(doc) if isinstance(p[-1], str) and _pydantic_refuses(_without(doc, p))]


def _mark(text: str, path: Path_, key: bool = True) -> tuple[int, int]:
    """(line, col) of `path` in `text` by PyYAML's own composer: a key's position for mapping entries, the
    item's for list items; the root's for ()."""
    node = yaml.compose(text)
    if not path:
        return node.start_mark.line + 1, node.start_mark.column + 1
    for i, part in enumerate(path):
        last = i == len(path) - 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    if last and key:
                        return k.start_mark.line + 1, k.start_mark.column + 1
                    node = v
                    break
            else:
                raise KeyError(path)
        else:
            node = node.value[part]
    return node.start_mark.line + 1, node.start_mark.column + 1


def _dump(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)


# --- document mutations -------------------------------------------------------------------------------------

FOREIGN = {str: [["x"], {"x": 1}, 7, True], int: ["seven", [7], {"n": 7}, 7.5, True], bool: ["yes", 1, [True]],
           list: ["x", {"x": 1}, 7], dict: ["x", [1], 7], float: ["x", [1]]}


@st.composite
def deletions(draw: st.DrawFn) -> Case:
    base = draw(st.sampled_from(sorted(BASES)))
    path = draw(st.sampled_from(_required(base)))
    doc = _without(BASES[base], path)
    text = _dump(doc)
    # pydantic reports a missing key at its own path; rocefab points at the nearest line that exists.
    line, col = _mark(text, path[:-1])
    return Case("delete", text.encode(), line, col, dotted(path))


@st.composite
def type_swaps(draw: st.DrawFn) -> Case:
    base = draw(st.sampled_from(sorted(BASES)))
    doc = BASES[base]
    path = draw(st.sampled_from([p for p in _paths(doc) if p]))
    original = get_value(doc, path)
    value = draw(st.sampled_from(FOREIGN[type(original)]))
    changed = copy.deepcopy(doc)
    get_value(changed, path[:-1])[path[-1]] = value
    if not _pydantic_refuses(changed):
        return draw(st.nothing())
    text = _dump(changed)
    line, col = _mark(text, path)
    return Case("type-swap", text.encode(), line, col, dotted(path))


@st.composite
def out_of_range(draw: st.DrawFn) -> Case:
    base = draw(st.sampled_from(sorted(BASES)))
    doc = BASES[base]
    path = draw(st.sampled_from([p for p in _paths(doc) if type(get_value(doc, p)) is int]))
    value = draw(st.sampled_from([-1, -(2**40), 2**40, 10**30]))
    changed = copy.deepcopy(doc)
    get_value(changed, path[:-1])[path[-1]] = value
    if not _pydantic_refuses(changed):
        return draw(st.nothing())
    text = _dump(changed)
    line, col = _mark(text, path)
    return Case("out-of-range", text.encode(), line, col, dotted(path))


METACHARACTERS = ["x\ntouch {marker}", "$(touch {marker})", "`touch {marker}`", "x;touch {marker}", "../../x",
                  "x y", "x'y", 'x"y', "x\u2028y", "{{n}}x{{n[0]}}", "x\\y", "-x", "x:y", "x#y"]


@st.composite
def metacharacters(draw: st.DrawFn, marker: str) -> Case:
    base = draw(st.sampled_from(sorted(BASES)))
    doc = BASES[base]
    path = draw(st.sampled_from([p for p in _paths(doc) if isinstance(get_value(doc, p), str)
                                 and p[-1] not in ("description",)]))
    value = draw(st.sampled_from(METACHARACTERS)).format(marker=marker)
    changed = copy.deepcopy(doc)
    get_value(changed, path[:-1])[path[-1]] = value
    if not _pydantic_refuses(changed):
        return draw(st.nothing())
    text = _dump(changed)
    line, col = _mark(text, path)
    return Case("metacharacters", text.encode(), line, col, dotted(path))


@st.composite
def unknown_keys(draw: st.DrawFn) -> Case:
    base = draw(st.sampled_from(sorted(BASES)))
    doc = BASES[base]
    mappings = [()] + [p for p in _paths(doc) if isinstance(get_value(doc, p), dict)]
    path = draw(st.sampled_from(mappings))
    if path and path[-1] in ("extra_env", "dscp_map"):
        return draw(st.nothing())  # free-form mappings: any key of the right form is a value, not a typo
    key = draw(st.sampled_from(["bogus_key", "spine_count", "password", "mtu_bytes", "priority", "enable"]))
    changed = copy.deepcopy(doc)
    target = get_value(changed, path) if path else changed
    if key in target:
        return draw(st.nothing())
    target[key] = 1
    text = _dump(changed)
    line, col = _mark(text, (*path, key))
    return Case("unknown-key", text.encode(), line, col, dotted((*path, key)))


# --- text faults --------------------------------------------------------------------------------------------

_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<dash>- )?(?P<key>[a-z_0-9]+): (?P<value>\S.*)$")


@st.composite
def text_faults(draw: st.DrawFn) -> Case:
    base = draw(st.sampled_from(sorted(BASES)))
    lines = _dump(BASES[base]).splitlines()
    candidates = [i for i, line in enumerate(lines) if _KEY_LINE.match(line)]
    i = draw(st.sampled_from(candidates))
    match = _KEY_LINE.match(lines[i])
    assert match is not None
    indent = match["indent"] + (match["dash"] or "")
    start = len(indent)
    fault = draw(st.sampled_from(["unclosed-bracket", "tab", "duplicate-key", "control-byte", "bad-utf8",
                                  "undefined-alias", "unknown-tag"]))
    col: int | None = None
    if fault == "unclosed-bracket":
        lines[i] = f"{indent}{match['key']}: [{match['value']}"
    elif fault == "tab":
        if not match["indent"]:
            return draw(st.nothing())
        lines[i] = "\t" + lines[i].lstrip(" ")
        col = 1
    elif fault == "duplicate-key":
        if match["dash"]:
            return draw(st.nothing())
        lines.insert(i + 1, lines[i])
        i, col = i + 1, start + 1
    elif fault == "control-byte":
        at = draw(st.integers(start, len(lines[i])))
        lines[i] = lines[i][:at] + draw(st.sampled_from(["\x01", "\x00", "\x1b", "\x7f"])) + lines[i][at:]
        col = at + 1
    elif fault == "undefined-alias":
        lines[i] = f"{indent}{match['key']}: *nowhere"
        col = start + len(match["key"]) + 3
    elif fault == "unknown-tag":
        lines[i] = f"{indent}{match['key']}: !bogus {match['value']}"
        col = start + len(match["key"]) + 3
    text = "\n".join(lines) + "\n"
    if fault == "bad-utf8":
        at = draw(st.integers(start, len(lines[i])))
        raw_line = lines[i].encode()
        prefix = "\n".join(lines[:i]).encode() + (b"\n" if i else b"")
        body = raw_line[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xe2\x82"])) + raw_line[at:]
        rest = "\n".join(lines[i + 1:]).encode() + b"\n"
        return Case(fault, prefix + body + b"\n" + rest, i + 1, len(raw_line[:at].decode()) + 1, None)
    return Case(fault, text.encode(), i + 1, col, None)


def _cases(marker: str) -> st.SearchStrategy[Case]:
    return st.one_of(deletions(), type_swaps(), out_of_range(), metacharacters(marker), unknown_keys(),
                     text_faults())


# The marker path must be fixed before hypothesis draws, so it lives in a folder made once for the module.
_FOLDER = Path(tempfile.mkdtemp(prefix="rocefab-bad-input-"))
_MARKER = _FOLDER / MARKER_NAME


@settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                     HealthCheck.too_slow])
@given(_cases(str(_MARKER)))
def test_generated_bad_input_is_refused_at_its_position(case: Case) -> None:
    with tempfile.TemporaryDirectory(dir=_FOLDER) as folder:
        intent = Path(folder) / "intent.yaml"
        intent.write_bytes(case.text)
        out = Path(folder) / "out"
        result = CliRunner().invoke(app, ["render", str(intent), "-o", str(out)])
        STATS["cases"] += 1
        STATS[f"kind {case.kind}"] += 1
        text = result.stdout + result.stderr
        if "Traceback" in text or not (result.exception is None or isinstance(result.exception, SystemExit)):
            STATS["tracebacks"] += 1
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert "Traceback" not in text
        assert result.exit_code == 2, (case, result.stderr)
        where = f"{intent}:{case.line}:" + (f"{case.col} " if case.col is not None else "")
        lines = [line for line in result.stderr.splitlines() if line.startswith(where)]
        if case.field is not None:
            lines = [line for line in lines if f" {case.field}: " in line or f" {case.field}" in line]
        assert lines, (case.kind, where, case.field, result.stderr)
        STATS["refused with position"] += 1
        assert "nothing was written" in result.stderr
        assert not out.exists() and [p.name for p in Path(folder).iterdir()] == ["intent.yaml"]
        STATS["nothing written"] += 1
    assert not _MARKER.exists()


def test_bad_input_suite_counts() -> None:
    """Runs after the generated cases (same module, file order): enough of them ran, and every one held."""
    if STATS["cases"] == 0:
        test_generated_bad_input_is_refused_at_its_position()
    assert STATS["cases"] >= 150, STATS
    assert STATS["tracebacks"] == 0
    assert STATS["refused with position"] == STATS["cases"] == STATS["nothing written"]
    assert not _MARKER.exists()
    print("bad-input suite:", dict(sorted(STATS.items())), "injections: 0")
