"""A configuration session of the lab's EOS emulator (lab/eos/device.py) as eAPI reports it, the limits EOS sets on
sessions, and `CliError`: how any command fails in eAPI's error envelope (code, message kind, `errors` list).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rocefab.lab.configtree import ConfigTree

MAX_OPEN_SESSIONS = 5
MAX_SAVED_SESSIONS = 1


@dataclass
class Session:
    name: str
    config: ConfigTree
    user: str
    state: str = "pending"  # pending | pendingCommitTimer | completed | aborted
    completed_at: float | None = None
    commit_by: float | None = None  # device uptime (s) at which a commit timer rolls back
    before: ConfigTree | None = None  # running-config before a timer commit, restored on abort or expiry
    timer: threading.Timer | None = None


class CliError(Exception):
    """A failed command: eAPI code, the kind in the message (`invalid command`...), the `errors` list."""

    def __init__(self, code: int, kind: str, *errors: str) -> None:
        super().__init__(errors[0] if errors else kind)
        self.code, self.kind, self.errors = code, kind, list(errors)


def failed(*errors: str) -> CliError:
    return CliError(1000, "could not run command", *errors)
