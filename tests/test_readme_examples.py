"""The README's console examples print what they show. Every ```console block the README marks with
`<!-- checked example -->` (optionally `; setup: <shell>`) runs here, command by command in one shell, in a
folder holding a copy of intents/; each command's output (stdout and stderr, as a terminal shows them) must
match the lines under it. An expected line `...` stands for any number of lines, and a line ending in
` ...` for any line starting with what comes before it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import INTENTS, ROOT

MARK = re.compile(r"<!-- checked example(?:; setup: (?P<setup>.+?))? -->\n```console\n(?P<body>.*?)```", re.S)
SEPARATOR = "@@rocefab-readme-example@@"


@dataclass(frozen=True)
class Example:
    line: int  # of the README, for the failure message
    setup: str
    commands: tuple[tuple[str, tuple[str, ...]], ...]  # (command, expected output lines)


def _examples() -> list[Example]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = []
    for match in MARK.finditer(text):
        commands: list[tuple[str, list[str]]] = []
        for line in match["body"].splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            else:
                assert commands, f"README line {text[:match.start()].count(chr(10)) + 1}: output before a command"
                commands[-1][1].append(line)
        examples.append(Example(text[:match.start()].count("\n") + 1, match["setup"] or "",
                                tuple((c, tuple(lines)) for c, lines in commands)))
    return examples


def _matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    if not expected:
        return not actual
    head, rest = expected[0].rstrip(), expected[1:]
    if head.strip() == "...":
        return any(_matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    line = actual[0].rstrip()
    ok = line.startswith(head[:-4]) if head.endswith(" ...") else line == head
    return ok and _matches(rest, actual[1:])


def test_the_readme_marks_its_examples() -> None:
    assert len(_examples()) >= 4


@pytest.mark.parametrize("example", _examples(), ids=lambda e: f"README-line-{e.line}")
def test_a_readme_example_prints_what_it_shows(example: Example, tmp_path: Path) -> None:
    shutil.copytree(INTENTS, tmp_path / "intents")
    script = [example.setup] if example.setup else []
    for command, _ in example.commands:
        # the separator keeps the previous command's status, for a README line such as `echo $?`
        script += [f"rc=$?; echo {SEPARATOR}; echo {SEPARATOR} >&2; (exit $rc)", command]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "NO_COLOR": "1"}
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL, check=False)
    outs = done.stdout.split(SEPARATOR + "\n")[1:]
    errs = done.stderr.split(SEPARATOR + "\n")[1:]
    assert len(outs) == len(errs) == len(example.commands), (done.stdout, done.stderr)
    for (command, expected), out, err in zip(example.commands, outs, errs, strict=True):
        # Two pipes lose the order stderr and stdout interleaved in; a command's findings (stderr) come before
        # its result (stdout) in every rocefab command, which is how the README shows them.
        actual = (err + out).splitlines()
        assert _matches(expected, actual), (
            f"README line {example.line}: `{command}` printed\n" + "\n".join(actual)
            + "\n--- but the README shows\n" + "\n".join(expected))
