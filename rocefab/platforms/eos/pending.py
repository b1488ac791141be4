"""Commit-timer sessions awaiting their confirm on an EOS switch, from `show configuration sessions detail` and
`show version` (read-only).

The session table's shape changed in EOS 4.32 (NAPALM's eos driver reads both): before it, each session in
`sessions` carries `state` "pendingCommitTimer" and `commitBy`; from 4.32 the one pending timer is named at the top
(`commitTimerSessionName`, `commitTimerExpireTime`). Both times count from the switch's boot, as `show version`'s
`uptime` does, so the time left is their difference. Evidence: tests/fixtures/devices/eos/index.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocefab.deploy.session import PendingCommit


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None


def run_of(session: str, prefix: str) -> str | None:
    """The rocefab run a session name carries (`<prefix><run id>_<n>`), None for anyone else's.

    >>> run_of("rocefab_20261204T051400-a1b2c3_2", "rocefab_")
    '20261204T051400-a1b2c3'
    >>> run_of("napalm_607123", "rocefab_") is None
    True
    """
    if not session.startswith(prefix):
        return None
    run, _, number = session[len(prefix):].rpartition("_")
    return run if run and number.isdigit() else None


def pending(sessions: Mapping[str, Any], version: Mapping[str, Any], prefix: str) -> list[PendingCommit]:
    uptime = _seconds(version.get("uptime"))
    timers: dict[str, float | None] = {}
    table = sessions.get("sessions")
    for name, info in (table.items() if isinstance(table, Mapping) else ()):
        if isinstance(info, Mapping) and info.get("state") == "pendingCommitTimer":
            timers[str(name)] = _seconds(info.get("commitBy"))
    top = sessions.get("commitTimerSessionName")
    if isinstance(top, str) and top:
        timers[top] = _seconds(sessions.get("commitTimerExpireTime"))
    found = []
    for name, by in sorted(timers.items()):
        left = max(0.0, by - uptime) if by is not None and uptime is not None else None
        found.append(PendingCommit(name, left, run_of(name, prefix)))
    return found
