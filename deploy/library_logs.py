"""What the device libraries (pyeapi, napalm, netmiko, paramiko, urllib3) log goes to the device it concerns,
as part of that device's result, not to the terminal: a fleet step sets `CURRENT.result` while it runs."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Protocol


class _Result(Protocol):
    library_said: list[str]


CURRENT = threading.local()  # .result: the result of the device whose step runs on this thread, or None
_LIBRARY_LOGGERS = ("pyeapi", "napalm", "netmiko", "paramiko", "urllib3")


class _ToDevice(logging.Handler):
    """What a device library logs while a step of a device runs becomes part of that device's result;
    outside one (a library's destructor at exit) it is dropped rather than printed as a traceback."""

    def emit(self, record: logging.LogRecord) -> None:
        result: _Result | None = getattr(CURRENT, "result", None)
        if result is not None and len(result.library_said) < 5:
            first = record.getMessage().strip().splitlines()[:1]
            if first:
                result.library_said.append(f"{record.name}: {first[0][:200]}")


_HANDLER = _ToDevice(level=logging.WARNING)


def capture_library_logs() -> None:
    """For a process that runs fleets (the command line): pyeapi and friends log errors, with tracebacks,
    that Python would print on stderr; from now on they go to the device they concern."""
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _HANDLER not in logger.handlers:
            logger.addHandler(_HANDLER)
        logger.propagate = False


@contextlib.contextmanager
def library_logs_to_devices() -> Iterator[None]:
    """The same for one fleet command, for callers that keep their own logging otherwise."""
    saved = []
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate, _HANDLER in logger.handlers))
        if _HANDLER not in logger.handlers:
            logger.addHandler(_HANDLER)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, propagate, had in saved:
            if not had:
                logger.removeHandler(_HANDLER)
            logger.propagate = propagate
