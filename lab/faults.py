"""Per-device faults every emulator shares: whether its management address answers at all.

A fault test must hit one device, not the whole lab: a management link cut in the middle of a commit, a
control plane that stops answering during a confirm window. Each emulated device carries a `Reachability`;
its servers close new connections at once while it is down and leave commands on open ones unanswered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass
class Reachability:
    """`down`: the device is unreachable now. `down_on`: a regex on a command; at the first command that
    matches, the device goes down — before running it, or with `down_after` after it ran and made its change
    (so its answer is lost and nothing after it arrives). It stays down until `down` is cleared."""

    down: bool = False
    down_on: str | None = None
    down_after: bool = False

    def cut_before(self, command: str) -> bool:
        """Whether `command` must go unanswered and unrun."""
        if self.down:
            return True
        if self.down_on is not None and not self.down_after and re.search(self.down_on, command):
            self.down, self.down_on = True, None
            return True
        return False

    def cut_after(self, command: str) -> bool:
        """Whether the answer to `command`, which has run, must be lost."""
        if self.down_on is not None and self.down_after and re.search(self.down_on, command):
            self.down, self.down_on = True, None
            return True
        return self.down

    def clear(self) -> None:
        self.down, self.down_on, self.down_after = False, None, False


@dataclass(frozen=True)
class Knobs:
    """Where an emulator keeps its management-plane faults (`rocefab lab fault delay|reject|wrong-password`): the
    names of attributes on its `faults` object (or on the emulator itself, `on_faults=False`)."""

    delay: str  # seconds every answer waits
    refuse_logins: str  # True: every login refused, as after a password change
    reject: str | None = None  # a regex of config the device refuses as invalid; None where nothing is staged
    on_faults: bool = True

    def owner(self, emulator: Any) -> object:
        return emulator.faults if self.on_faults else emulator

    def make(self, emulator: Any, kind: str, value: str) -> None:
        owner = self.owner(emulator)
        if kind == "delay":
            setattr(owner, self.delay, float(value))
        elif kind == "reject":
            if self.reject is None:
                raise ValueError("reject: this device stages no config to refuse")
            setattr(owner, self.reject, value)
        else:
            setattr(owner, self.refuse_logins, True)

    def clear(self, emulator: Any) -> None:
        owner = self.owner(emulator)
        setattr(owner, self.delay, 0.0)
        setattr(owner, self.refuse_logins, False)
        if self.reject is not None:
            setattr(owner, self.reject, None)
