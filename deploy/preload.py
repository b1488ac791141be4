"""Import a run's device drivers before its worker threads start.

Two worker threads that import modules for the first time at once can deadlock on the import locks of modules that
import each other (NAPALM, netmiko and paramiko do). Python then breaks the cycle by raising "deadlock detected by
_ModuleLock(...)" in one thread, or by handing it a half-initialised module ("cannot import name ..."). A device whose
session met that was reported unreadable: the rare read failure of the mixed lab's SSH devices under load
(tests/lab/test_verify_mixed.py, once in about ten full runs). Imported here, in the thread that starts the workers,
each module is whole before any worker asks for it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable

from rocefab.platforms import UNITS

# What a platform's session imports on first use during a run, beside its driver: the readers of verify and apply.
READERS = ("observe", "counters", "pending")


def preload(kinds: Iterable[str]) -> None:
    """The session class of each device kind (its driver with it) and its platform's readers, imported now."""
    for kind in sorted(set(kinds)):
        session = UNITS[kind].session()
        package = session.__module__.rsplit(".", 1)[0]
        for name in READERS:
            module = f"{package}.{name}"
            if importlib.util.find_spec(module) is not None:
                importlib.import_module(module)
