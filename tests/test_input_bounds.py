"""Input past a reading bound is refused quickly and cheaply: exit 2 with a position, within a couple of
seconds of CPU time and well under 150 MB, whatever the input tries (a billion-laughs alias bomb, ten
thousand brackets, a hundred thousand values, a 60 MB file, a FIFO nobody writes to, a device, a folder).

Each case runs `rocefab validate` in a fresh interpreter that reports its own peak RSS, as a user's run would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rocefab.models.sourcemap import ALIAS_BUDGET, MAX_BYTES, MAX_DEPTH, MAX_NODES

# Peak RSS from VmHWM, which starts afresh at exec; getrusage's ru_maxrss would carry over the forking
# pytest process's size.
RUNNER = (
    "import sys\n"
    "from rocefab.cli import main\n"
    "sys.argv = ['rocefab', 'validate', sys.argv[1]]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "peak = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "import os\n"
    "cpu = os.times()\n"
    "print(f'cpu_s={cpu.user + cpu.system:.3f}', file=sys.stderr)\n"
    "print(f'maxrss_kb={peak}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)
# The work is bounded in CPU time (start-up is about 0.4 s of it on the 2-core CI machine), measured by the
# child itself so that other tests running alongside do not count; the wall-clock limit is there for input that
# would block (a FIFO) rather than work. Virtual machines of one kind differ threefold in speed (start-up alone
# took 0.9 s on one), so the limit is also no less than CPU_LIMIT_TIMES the cost of validating the lab's intent
# on the machine the test runs on, measured once.
CPU_LIMIT_S = 2.5
CPU_LIMIT_TIMES = 2.5
WALL_LIMIT_S = 10
RSS_LIMIT_MB = 150


def _alias_bomb(path: Path) -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "aliases expand to more than"


def _merge_bomb(path: Path) -> str:
    lines = ["a0: &a0 {k: [x, x, x, x, x, x, x, x]}"]
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} {{<<: [*a{i - 1}], v: [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "aliases expand to more than"


def _deep(path: Path) -> str:
    path.write_text("a: " + "[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")
    return "nest"


def _deep_block(path: Path) -> str:
    path.write_text("".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 5)) + f"{'  ' * (MAX_DEPTH + 5)}v\n",
                    encoding="utf-8")
    return f"nested more than {MAX_DEPTH} levels deep"


def _many(path: Path) -> str:
    path.write_text("a: [" + "1, " * (MAX_NODES + 10) + "1]\n", encoding="utf-8")
    return f"more than {MAX_NODES:,} values"


def _huge(path: Path) -> str:
    with path.open("w", encoding="utf-8") as f:
        f.write("fabric: {name: x, description: '")
        chunk = "a" * 1_000_000
        for _ in range(60):
            f.write(chunk)
        f.write("'}\n")
    return f"intents are at most {MAX_BYTES:,}"


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a pipe (FIFO), not a regular file"


def _fifo_behind_symlink(path: Path) -> str:
    os.mkfifo(path.with_suffix(".fifo"))
    path.symlink_to(path.with_suffix(".fifo"))
    return "a pipe (FIFO), not a regular file"


def _device(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return "a device, not a regular file"


def _folder(path: Path) -> str:
    path.mkdir()
    return "a folder, not a regular file"


CASES: dict[str, Callable[[Path], str]] = {
    "alias-bomb": _alias_bomb, "merge-bomb": _merge_bomb, "deep-flow": _deep, "deep-block": _deep_block,
    "many-values": _many, "60MB": _huge, "fifo": _fifo, "fifo-symlink": _fifo_behind_symlink,
    "dev-zero": _device, "folder": _folder,
}


def _cpu_of(result: subprocess.CompletedProcess[str]) -> float:
    return float(result.stderr.rsplit("cpu_s=", 1)[1].split()[0])


@pytest.fixture(scope="module")
def cpu_limit() -> float:
    lab = Path(__file__).resolve().parent.parent / "intents" / "lab.yaml"
    result = subprocess.run([sys.executable, "-c", RUNNER, str(lab)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return max(CPU_LIMIT_S, CPU_LIMIT_TIMES * _cpu_of(result))


@pytest.mark.parametrize("case", sorted(CASES))
def test_input_past_a_bound_is_refused_fast_and_small(case: str, tmp_path: Path, cpu_limit: float) -> None:
    intent = tmp_path / "intent.yaml"
    expected = CASES[case](intent)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", RUNNER, str(intent)], capture_output=True, text=True,
                            timeout=30, cwd=tmp_path)
    wall = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr, result.stderr
    assert result.stderr.startswith(f"{intent}:"), result.stderr
    assert "Traceback" not in result.stderr
    rss_mb = int(result.stderr.rsplit("maxrss_kb=", 1)[1]) / 1024
    cpu = _cpu_of(result)
    assert cpu < cpu_limit, f"{case}: {cpu:.2f} s of CPU (limit here {cpu_limit:.2f} s)"
    assert wall < WALL_LIMIT_S, f"{case}: {wall:.2f} s"
    assert rss_mb < RSS_LIMIT_MB, f"{case}: {rss_mb:.0f} MB"


def test_the_bounds_leave_room_for_the_largest_real_intents() -> None:
    assert ALIAS_BUDGET >= 10_000
    assert MAX_NODES > 65_536 + 1_000  # every host of the largest fabric named one by one
