"""Test helpers around the lab's fake GPU host (lab/host/fakehost.py): the host itself is product code, used by
`rocefab lab up`; these helpers only make sense in tests."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rocefab.lab.host.fakehost import (  # noqa: F401 - re-exported for the host-script tests
    STUBS,
    SYSTEM_PATH,
    TOOLS,
    diff,
    edit_hardware,
    host_env,
    make_host,
    run_script,
    snapshot,
    state,
    stub,
)

# rocefab's block in /etc/nccl.conf (markers without '=': NCCL versions that do not skip comments ignore them)
BLOCK_BEGIN = "# >>> rocefab: the lines up to the end marker are managed by rocefab, edits there are replaced\n"
BLOCK_END = "# <<< rocefab\n"


def stubs_without(folder: Path, *missing: str) -> Path:
    """A stub folder lacking some tools (symlinks to the others), for 'tool not installed' runs."""
    folder.mkdir(parents=True)
    for tool in TOOLS:
        if tool not in missing:
            (folder / tool).symlink_to(STUBS / tool)
    for tool in missing:
        assert shutil.which(tool, path=SYSTEM_PATH) is None, f"{tool} is installed in {SYSTEM_PATH}"
    return folder


def remove_netdev(root: Path, name: str) -> None:
    """Make a netdev disappear, as if its driver never bound (firmware, PCI slot, renamed interface)."""
    shutil.rmtree(root / "sys" / "class" / "net" / name)


@dataclass(frozen=True)
class Applied:
    """A fake host a script has been applied to once, with what the run printed and the host's files after."""

    root: Path
    result: subprocess.CompletedProcess[str]
    snapshot: dict[str, bytes]


def apply_once(script: Path, root: Path) -> Applied:
    result = run_script(script, root)
    return Applied(root, result, snapshot(root))


def copy_applied(applied: Applied, folder: Path) -> Path:
    """A private copy of an applied host, for a test that changes it."""
    assert applied.result.returncode == 0, applied.result.stdout + applied.result.stderr
    root = folder / "host"
    shutil.copytree(applied.root, root, symlinks=True)
    return root


def drifts(out: str) -> list[str]:
    return [line[len("DRIFT"):].strip() for line in out.splitlines() if line.startswith("DRIFT")]


def assert_drifts(out: str, expected: list[str]) -> None:
    """The DRIFT lines are exactly the expected ones (each given by a prefix), in order."""
    found = drifts(out)
    assert len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected, strict=True)), (
        "DRIFT lines:\n  " + "\n  ".join(found) + "\nexpected (prefixes):\n  " + "\n  ".join(expected))
