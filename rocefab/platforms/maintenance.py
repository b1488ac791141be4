"""A NOS's maintenance mode as rocefab drives it: the candidate lines a merge commits to drain the switch and to
undrain it, in the unit's candidate format, with where they are written."""

from __future__ import annotations

from rocefab.renderers.record import record


@record
class Maintenance:
    drain: str
    undrain: str
    source: str
    # A regular expression found in the running config (as the session reads it) while the switch is drained
    drained: str = ""
