"""One fleet run at a time per inventory: a lock file beside the inventory, naming who holds it.

Two runs against the same devices would stage over each other (an EOS device refuses a second session; an
NVUE switch has one pending revision per user). The lock is `<inventory>.lock`: held with `flock` while a run
lasts (the kernel drops it when the process dies, however it dies), and holding the holder's pid, host,
start time and command so a refusal can say who. A lock whose holder on this host is gone is stale: rocefab
says so and takes it over. One written on another host (an inventory on a shared file system) cannot be
checked from here: rocefab refuses until told `--force-unlock`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class LockError(Exception):
    """The inventory is locked by another run (the message says whose and what to do)."""


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    started: str
    command: str
    run_id: str

    def __str__(self) -> str:
        return f"pid {self.pid} on {self.host}, started {self.started} ({self.command}, run {self.run_id})"


def lock_path(inventory: Path) -> Path:
    return inventory.with_name(inventory.name + ".lock")


def _read(fd: int) -> Holder | None:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 65536)
    try:
        data: dict[str, Any] = json.loads(raw) if raw.strip() else {}
        return Holder(int(data["pid"]), str(data["host"]), str(data["started"]), str(data["command"]),
                      str(data["run_id"]))
    except (ValueError, KeyError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_HELD: set[int] = set()  # the lock files this process holds, by descriptor


def release_held() -> None:
    """Free every lock this process holds now, for a process about to exit without unwinding (a second signal);
    the kernel drops the flock itself when the process ends."""
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)


@contextlib.contextmanager
def fleet_lock(inventory: Path, command: str, run_id: str, force: bool = False) -> Iterator[list[str]]:
    """Hold the inventory's lock for a run; yields notes (a stale or forced lock taken over) to print."""
    path = lock_path(inventory)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise LockError(f"cannot create the lock file {path}: {exc.strerror}") from None
    notes: list[str] = []
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            raise LockError(f"another rocefab run holds {path}: {holder or 'a run that has not said who it is'}; "
                            "wait for it to finish") from None
        previous = _read(fd)
        here = socket.gethostname()
        if previous is not None:
            if previous.host == here:
                # The kernel let go of its flock, so that run is over, whatever its pid is used for now.
                gone = "is no longer running" if not _alive(previous.pid) else "ended without clearing it"
                notes.append(f"took over a stale lock: {previous} {gone}")
            elif not force:
                raise LockError(
                    f"{path} was written by {previous}; rocefab cannot tell from {here} whether that run is still "
                    "going. If it is not, rerun with --force-unlock")
            else:
                notes.append(f"--force-unlock: took over the lock of {previous}")
        record = {"pid": os.getpid(), "host": here, "command": command, "run_id": run_id,
                  "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(record) + "\n").encode())
        _HELD.add(fd)
        try:
            yield notes
        finally:
            _HELD.discard(fd)
            os.ftruncate(fd, 0)  # an empty lock file is a free one
    finally:
        os.close(fd)
