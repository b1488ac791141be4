"""Findings: what a check says about an intent or a plan, as data."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

Path = tuple[str | int, ...]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    """One observation. `path` addresses the intent field it is about, e.g. ("qos", "ecn", "max_threshold_kbytes")."""

    code: str
    severity: Severity
    path: Path
    message: str
    hint: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dotted(path: Path) -> str:
    """Render a field path the way users write it; a key with other characters is shown quoted, so a
    hostile key cannot break the one-line message it appears in.

    >>> dotted(("topology", "leaf_pairs", 2, "model"))
    'topology.leaf_pairs[2].model'
    >>> dotted(("hosts", "nccl", "extra_env", "NCCL_X\\nrm"))
    "hosts.nccl.extra_env['NCCL_X\\\\nrm']"
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.match(part):
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def has_errors(findings: list[Finding]) -> bool:
    return any(f.is_error for f in findings)
