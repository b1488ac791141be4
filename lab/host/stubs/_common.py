"""What every host stub shares (see _state.py): the tool error `Fail`, the `run` wrapper that turns it into
a message and an exit status, the fake sysfs root, and atomic file writes.

Builtins only (os, marshal, sys): every standalone stub call is a fresh interpreter (see _state.py)."""

# ruff: noqa: PTH101, PTH103, PTH105, PTH108, PTH112, PTH113, PTH114, PTH115, PTH119, PTH120, PTH123, PTH211

from __future__ import annotations

import marshal
import os
import sys

# Not `from typing import TYPE_CHECKING`: typing pulls in re, collections, enum and contextlib, 8 ms of every
# standalone stub call (mypy treats any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

join = os.path.join


class Fail(Exception):
    """A tool error: the message (already in the tool's words) goes to stderr, the code is the exit status."""

    def __init__(self, message: str, code: int, *, stdout: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.stdout = stdout  # mlnx-tools print their errors to stdout


def not_modelled(tool: str, argv: list[str]) -> Fail:
    return Fail(f"stub {tool}: not modelled by the fake host: {' '.join(argv)}", 255)


def sysfs_root() -> str:
    root = os.environ.get("ROCEFAB_SYSFS_ROOT", "")
    if not root or os.path.realpath(root) == "/sys":
        raise Fail("stub: ROCEFAB_SYSFS_ROOT must point at a fake host, refusing to run against the real one", 99)
    if not os.path.isfile(join(root, ".stubstate", "state.marshal")):
        raise Fail(f"stub: {root} is not a fake host (no .stubstate/state.marshal)", 99)
    return root


def run(main: object) -> None:
    """Run a stub's main(argv) -> int, turning `Fail` into a message and an exit status."""
    try:
        code = main(sys.argv[1:])  # type: ignore[operator]
    except Fail as exc:
        if exc.message:
            print(exc.message, file=sys.stdout if exc.stdout else sys.stderr)
        code = exc.code
    except BrokenPipeError:  # like a C tool killed by SIGPIPE
        code = 141
    sys.stdout.flush()
    sys.exit(code)


# --- files ----------------------------------------------------------------------------------------------------------


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def write_atomic(path: str, text: str) -> None:
    """Write `text` unless the file already holds it (temp file + os.replace, so a reader never sees half)."""
    if os.path.isfile(path) and not os.path.islink(path) and read(path) == text:
        return
    if os.path.isdir(path) and not os.path.islink(path):
        remove(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def symlink_atomic(path: str, target: str) -> None:
    if os.path.islink(path) and os.readlink(path) == target:
        return
    tmp = join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    os.symlink(target, tmp)
    os.replace(tmp, path)


def make_unreadable(path: str) -> None:
    """An attribute whose read fails, like an empty GID entry (the kernel returns an error). A plain file cannot fail
    a read, so the fake uses an empty directory: `cat`/`tr <` fail with EISDIR, and `[ -e ]`/`[ -r ]` are true."""
    if os.path.isdir(path) and not os.path.islink(path):
        return
    if os.path.lexists(path):
        os.unlink(path)
    os.makedirs(path)


def remove(path: str) -> None:
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        import shutil

        shutil.rmtree(path)


def canonical(state: dict[str, Any]) -> bytes:
    """The same bytes for the same state: keys sorted, marshal version 0 (no sharing of equal objects)."""

    def sort(obj: object) -> object:
        if isinstance(obj, dict):
            return {k: sort(obj[k]) for k in sorted(obj)}
        if isinstance(obj, list):
            return [sort(v) for v in obj]
        return obj

    return marshal.dumps(sort(state), 0)  # type: ignore[arg-type]  # plain dicts, lists and scalars
