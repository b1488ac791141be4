"""The fabric's lock lives on its devices: every run that changes a device first leaves its mark there, so a second
run finds it wherever it starts — another copy of the inventory, another login, another machine.

A mark is an empty directory in a folder every login of the device can write and read — `/tmp` on NVUE switches and
hosts, `/mnt/flash` on EOS (through eAPI's `bash`), `bootflash:` on NX-OS — named
`rocefab-lock.<run id>.<user>.<host>.<pid>`, so listing the folder says who holds the device without reading a file.
Directory, not file: `mkdir` is the one way to create something on all three that needs no file transfer.

Taking the lock on one device (`claim`): list the marks; marks of other runs stop the claim (a mark left by a run of
this host whose process is gone is stale and removed, said so; `--force-unlock` removes any, said so); then place
ours and list again. A mark that appeared meanwhile means two runs claimed at once: ours is removed and the claim
refused. Both may refuse then; neither goes on believing it is alone. A run changes nothing before it holds every
device of the run, and checks its mark again before each commit.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from rocefab.deploy.session import DeployError

PREFIX = "rocefab-lock."
# Each field of a mark's name: what NX-OS bootflash, EOS flash and Linux all take in a file name, and no dot (the
# separator); user and host are cut so the whole name stays under 80 characters: 13 (prefix) + 22 (run id) + 3 dots
# + 10 (pid) leave 31 for both. Marks are read with the earlier, longer cuts (16 and 24) too.
USER_CHARS, HOST_CHARS = 12, 19
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_NAME = re.compile(r"rocefab-lock\.(\d{8}T\d{6}-[0-9a-f]{6})\.([A-Za-z0-9_-]{1,16})\.([A-Za-z0-9_-]{1,24})\.(\d{1,10})")


def _field(text: str, limit: int) -> str:
    return _UNSAFE.sub("-", text)[:limit].strip("-") or "unknown"


@dataclass(frozen=True)
class Mark:
    """One run's claim on a device."""

    run_id: str
    user: str
    host: str
    pid: int

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.run_id}.{self.user}.{self.host}.{self.pid}"

    @classmethod
    def parse(cls, name: str) -> Mark | None:
        """
        >>> Mark.parse("rocefab-lock.20261204T051857-4148ad.alice.ops-2.4242")
        Mark(run_id='20261204T051857-4148ad', user='alice', host='ops-2', pid=4242)
        >>> Mark.parse("rocefab-lock.garbage") is None
        True
        """
        m = _NAME.fullmatch(name)
        return cls(m[1], m[2], m[3], int(m[4])) if m else None

    def started(self) -> str:
        stamp = dt.datetime.strptime(self.run_id.split("-")[0], "%Y%m%dT%H%M%S")
        return f"{stamp:%Y-%m-%d %H:%M:%S} UTC"

    def __str__(self) -> str:
        """
        >>> str(Mark("20261204T051857-4148ad", "alice", "ops-2", 4242))
        'rocefab run 20261204T051857-4148ad of alice on ops-2 (pid 4242), started 2026-12-04 05:18:57 UTC'
        """
        return f"rocefab run {self.run_id} of {self.user} on {self.host} (pid {self.pid}), started {self.started()}"


def own_mark(run_id: str) -> Mark:
    """This process's mark for the run `run_id`."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name (a container's uid without a passwd entry)
        user = f"uid{os.getuid()}"
    return Mark(run_id, _field(user, USER_CHARS), _field(this_host(), HOST_CHARS), os.getpid())


def this_host() -> str:
    return socket.gethostname().split(".")[0]


class MarkFolder(Protocol):
    """Where a device keeps the marks (`DeviceSession` implements it per platform)."""

    def lock_marks(self) -> list[str]:
        """Every name in the folder that starts with PREFIX."""
        ...

    def place_mark(self, name: str) -> None: ...

    def remove_mark(self, name: str) -> None: ...


@dataclass(frozen=True)
class Found:
    """The marks on a device other than this run's: `held` stop a run, `stale` were left by a run of this host that
    is no longer running; `unreadable` carry the prefix but not the form, and stop a run like `held`."""

    held: tuple[Mark, ...]
    stale: tuple[Mark, ...]
    unreadable: tuple[str, ...]

    def holders(self) -> str:
        unreadable = (f"a mark rocefab cannot read ({name})" for name in self.unreadable)
        return "; ".join([*(str(m) for m in self.held), *unreadable])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def found(names: Iterable[str], mine: Mark | None, alive: Callable[[int], bool] = _alive) -> Found:
    held: list[Mark] = []
    stale: list[Mark] = []
    unreadable: list[str] = []
    here = {_field(this_host(), HOST_CHARS), _field(this_host(), 24)}  # this host, as marked now and before
    for name in sorted(names):
        if mine is not None and name == mine.name:
            continue
        mark = Mark.parse(name)
        if mark is None:
            unreadable.append(name)
        elif mark.host in here and mark.pid != os.getpid() and not alive(mark.pid):
            stale.append(mark)
        else:
            held.append(mark)
    return Found(tuple(held), tuple(stale), tuple(unreadable))


def locked_message(device: str, marks: Found) -> str:
    return (f"locked by {marks.holders()}: that run is changing this device. Wait for it to finish; if it is no "
            f"longer running (a crash, a lost machine), rerun with --force-unlock, which removes the marks "
            f"{', '.join(_names(marks))} from {device}")


def _names(marks: Found) -> list[str]:
    return [*(m.name for m in marks.held), *marks.unreadable]


def claim(device: str, folder: MarkFolder, mine: Mark, force: bool = False) -> list[str]:
    """Place this run's mark on the device, or raise DeployError naming who holds it. What was removed on the way
    (stale marks, marks removed by `force`), in words."""
    before = found(folder.lock_marks(), mine)
    notes: list[str] = []
    for mark in before.stale:
        folder.remove_mark(mark.name)
        notes.append(f"removed the lock mark of {mark}: that process is no longer running")
    if before.held or before.unreadable:
        if not force:
            raise DeployError(device, locked_message(device, before))
        for name in _names(before):
            folder.remove_mark(name)
            notes.append(f"--force-unlock: removed the lock mark {name}")
    folder.place_mark(mine.name)
    after = folder.lock_marks()
    if mine.name not in after:
        raise DeployError(device, f"the lock mark {mine.name} could not be placed (the device listed "
                                  f"{', '.join(after) or 'no mark'} after it was made): nothing was changed here")
    rivals = found(after, mine)
    if rivals.held or rivals.unreadable:  # another run claimed at the same moment: both step back
        folder.remove_mark(mine.name)
        raise DeployError(device, locked_message(device, rivals) + " (it claimed the device at the same time as "
                                                                    "this run)")
    return notes


def still_held(device: str, folder: MarkFolder, mine: Mark) -> None:
    """Before a commit: this run's mark is still there (no other run's --force-unlock took the device)."""
    names = folder.lock_marks()
    if mine.name not in names:
        others = found(names, mine)
        by = f"; the device now carries {others.holders()}" if others.held or others.unreadable else ""
        raise DeployError(device, f"this run's lock mark {mine.name} is gone (removed by another run's "
                                  f"--force-unlock?){by}: not committed")


def release(folder: MarkFolder, mine: Mark) -> None:
    if mine.name in folder.lock_marks():
        folder.remove_mark(mine.name)
