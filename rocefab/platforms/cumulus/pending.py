"""An NVUE `apply --confirm` window still open on a Cumulus switch (read-only).

NVUE tells the time left before the automatic rollback through `nv config apply --confirm-status` (NVIDIA's
reference describes the option; no guide prints its output, tests/fixtures/devices/cumulus/index.yaml). So this
reader believes only what it can read plainly: a number of seconds (or minutes) left is a pending window; a "no
... confirm" answer is none; any other answer is not understood. rocefab's own marker settles the doubt: a commit
of ours that was never confirmed or rolled back keeps its `rocefab-<run>.previous.yaml` on the switch, so an
answer we cannot read still names a window when such a file is there, with its time left not reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rocefab.deploy.session import PendingCommit

MARKER_PREFIX, MARKER_SUFFIX = "rocefab-", ".previous.yaml"
_LEFT = re.compile(r"(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?)\b", re.IGNORECASE)
_NONE = re.compile(r"\bno\b[^\n]*\bconfirm|\bnot\b[^\n]*\bpending|\bnothing\b[^\n]*\bconfirm", re.IGNORECASE)
_REVISION = re.compile(r"rev(?:ision)?[_ ]?(?:id)?[:\s]*(\d+)", re.IGNORECASE)


def unsettled_runs(files: Sequence[str]) -> list[str]:
    """The runs whose pre-commit marker is still on the switch.

    >>> unsettled_runs(["rocefab-20261204T051400-a1b2c3.previous.yaml", "rocefab-x.candidate.yaml", "notes"])
    ['20261204T051400-a1b2c3']
    """
    shortest = len(MARKER_PREFIX) + len(MARKER_SUFFIX)
    return sorted(f[len(MARKER_PREFIX):-len(MARKER_SUFFIX)] for f in files
                  if f.startswith(MARKER_PREFIX) and f.endswith(MARKER_SUFFIX) and len(f) > shortest)


def pending(status: int, text: str, runs: Sequence[str]) -> list[PendingCommit]:
    """From `nv config apply --confirm-status` (its exit status and output) and the unsettled runs' markers.

    >>> pending(0, "Confirm pending for rev_id 7: 412 seconds left", ["r1"])
    [PendingCommit(name='revision 7', seconds_left=412.0, run='r1')]
    >>> pending(0, "No pending confirm", ["r1"])
    []
    >>> pending(1, "Error: something unexpected", ["r1"])
    [PendingCommit(name='the confirm window', seconds_left=None, run='r1')]
    >>> pending(0, "something unexpected", [])
    []
    """
    run = runs[-1] if runs else None
    said = " ".join(text.split())
    if status == 0 and _NONE.search(said):
        return []
    left = _LEFT.search(said) if status == 0 else None
    revision = _REVISION.search(said)
    name = f"revision {revision.group(1)}" if revision else "the confirm window"
    if left is not None:
        seconds = float(left.group(1)) * (60 if left.group(2).lower().startswith("m") else 1)
        return [PendingCommit(name, seconds, run)]
    return [PendingCommit(name, None, run)] if run else []
