"""SIGINT, SIGTERM and SIGHUP during a run that changes devices.

The first one asks the run to stop: no new step starts, the step in progress on each device finishes (a commit
cut in half is worse than one finished and undone), the wave in progress is rolled back where the platform can,
and the run ends normally — its table printed, its lock freed, its exit code 128 + the signal's number (130,
143, 129), or 3 when some device's state could not be established. A second one exits at once: it names the
devices whose state is unknown (a commit made and not yet confirmed or undone) and frees the lock.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequest:
    """Set by the first signal; read by the fleet between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.name = ""
        self.number = 0

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    @property
    def exit_code(self) -> int:
        return 128 + self.number

    def reason(self) -> str:
        return f"stopped by {self.name}"

    def set(self, number: int) -> None:
        self.number, self.name = number, signal.Signals(number).name
        self._event.set()


@contextlib.contextmanager
def stop_on_signals(say: Callable[[str], None], unsettled: Callable[[], list[str]],
                    release: Callable[[], None]) -> Iterator[StopRequest]:
    """While the block runs, the three signals stop the run as the module says. `say` prints a line, `unsettled`
    names the devices whose state a second signal would leave unknown, `release` frees the run's lock."""
    stop = StopRequest()

    def handle(number: int, frame: FrameType | None) -> None:
        if stop.requested:
            name = signal.Signals(number).name
            left = unsettled()
            say(f"{name} again: exiting now" + (f"; state unknown for {len(left)} device(s): {', '.join(left)} "
                                                 "(a commit made and neither confirmed nor undone: check them with "
                                                 "rocefab diff --only)" if left else "; no device was mid-change"))
            release()
            os._exit(3 if left else 128 + number)
        stop.set(number)
        say(f"{stop.name}: stopping - each device finishes the step it is in, then the wave in progress is rolled "
            f"back where the platform can; {stop.name} again exits at once")

    previous = {number: signal.signal(number, handle) for number in SIGNALS}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
