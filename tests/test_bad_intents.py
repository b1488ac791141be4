"""Negative suite: every intent in tests/bad_intents must be refused with the exact error, and write nothing.

Each `<case>.yaml` is intents/lab.yaml with one deliberate mistake (named in its first-line `# bad:` comment).
Beside it, `<case>.expected` holds two lines: the exit code (1 for findings, 2 for schema/YAML errors) and a
substring that must appear in stderr, with `{file}` standing for the intent path as passed on the command line.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rocefab.cli import app

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = Path(__file__).resolve().parent / "bad_intents"
CASES = sorted(p.stem for p in CASES_DIR.glob("*.yaml"))
MIN_CASES = 30

# Cases whose expectation states what the tool *should* print but currently does not. Each is a known
# defect in rocefab, not in the case: remove the entry once the tool is fixed (strict xfail turns a fixed
# defect into a failure, so the list cannot go stale silently).
KNOWN_TOOL_ISSUES: dict[str, str] = {
}

# Finding codes this suite must cover (each by at least one exit-1 case).
REQUIRED_CODES = {
    "pfc-priority-mismatch", "cnp-priority-lossless", "cnp-dscp-conflict", "ecn-threshold-order",
    "ecn-threshold-exceeds-buffer", "ets-weights-sum", "mtu-too-small", "vlan-reserved", "duplicate-vlan",
    "unknown-vlan", "unknown-switch-model", "duplicate-asn", "address-pool-overlap", "multihoming-unsupported",
    "ports-exhausted", "duplicate-name", "nccl-env-conflict", "port-used-twice", "port-not-on-model",
    "breakout-unsupported", "address-pool-too-small", "lossless-on-strict-queue", "management-gateway-unusable",
    "management-gateway-is-device", "cable-beyond-reach", "cable-unknown", "duplicate-cable",
}
# Where finding codes are defined: the resolution, the check modules, the plan checks and the planner.
CODE_SOURCES = [
    ROOT / "models" / "resolve.py",
    *sorted((ROOT / "models" / "checks").glob("*.py")),
    *sorted((ROOT / "renderers").glob("*.py")),
]
_CODE_DEFINITION = re.compile(
    r'(?:\berror|\bwarning|\binfo|_error|_warning|_info|AllocationError|Finding)\(\s*"([a-z0-9-]+)"')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _expected(case: str) -> tuple[int, str]:
    lines = (CASES_DIR / f"{case}.expected").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2, f"{case}.expected must hold exactly two lines"
    return int(lines[0]), lines[1]


def _code_of(line: str) -> str:
    match = re.search(r": error \[([a-z0-9-]+)\] ", line)
    assert match, f"finding line without 'error [code]': {line!r}"
    return match.group(1)


def _defined_codes() -> set[str]:
    return {code for path in CODE_SOURCES for code in _CODE_DEFINITION.findall(path.read_text(encoding="utf-8"))}


def _params() -> list:
    return [
        pytest.param(case, marks=pytest.mark.xfail(reason=KNOWN_TOOL_ISSUES[case], strict=True))
        if case in KNOWN_TOOL_ISSUES
        else case
        for case in CASES
    ]


@pytest.mark.parametrize("case", _params())
def test_bad_intent_is_refused(case: str, tmp_path: Path) -> None:
    exit_code, line = _expected(case)
    intent = str(CASES_DIR / f"{case}.yaml")
    output = tmp_path / "out"
    assert not output.exists()

    result = CliRunner().invoke(app, ["render", intent, "-o", str(output)])

    stderr = _ANSI.sub("", result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == exit_code, stderr
    assert line.replace("{file}", intent) in stderr
    assert "nothing was written" in stderr
    assert "wrote" not in result.stdout
    assert not output.exists()
    assert not any(tmp_path.iterdir()), "no staging folder may be left behind either"
    # One mistake, one report: no error line may be printed twice.
    repeated = [text for text, n in Counter(stderr.splitlines()).items() if n > 1 and text.startswith(intent)]
    assert not repeated, repeated


def test_enough_cases() -> None:
    assert len(CASES) >= MIN_CASES
    for case in CASES:
        first = (CASES_DIR / f"{case}.yaml").read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# bad: "), f"{case}.yaml must start with '# bad: <what is wrong>'"
        assert (CASES_DIR / f"{case}.expected").is_file(), f"{case}.expected is missing"
    orphans = {p.stem for p in CASES_DIR.glob("*.expected")} - set(CASES)
    assert not orphans, f".expected files without a .yaml: {sorted(orphans)}"
    assert not set(KNOWN_TOOL_ISSUES) - set(CASES), "KNOWN_TOOL_ISSUES names a case that does not exist"


def test_finding_codes_are_exact() -> None:
    defined = _defined_codes()
    missing = sorted(REQUIRED_CODES - defined)
    assert not missing, f"codes no longer defined by rocefab: {missing}"
    covered = set()
    for case in CASES:
        exit_code, line = _expected(case)
        assert exit_code in (1, 2), case
        if exit_code == 2:
            assert ": error [" not in line, f"{case}: schema/YAML errors carry no finding code"
            continue
        code = _code_of(line)
        assert code in defined, f"{case}: [{code}] is not a finding code rocefab defines"
        covered.add(code)
    uncovered = sorted(REQUIRED_CODES - covered)
    assert not uncovered, f"finding codes without a case: {uncovered}"
