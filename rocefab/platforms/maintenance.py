"""A NOS's maintenance mode as rocefab drives it: the candidate lines a merge commits to drain the switch and to
undrain it, in the unit's candidate format, with where they are written, and how the state is read back."""

from __future__ import annotations

from rocefab.renderers.record import record


@record
class Maintenance:
    drain: str
    undrain: str
    source: str
    # A regular expression found in the running config (as the session reads it) while the switch is drained;
    # empty: the state is not configuration and the platform's session reads it (DeviceSession.in_maintenance)
    drained: str = ""
    # Non-empty: the mechanism keeps advertising what the switch originates, so it moves no traffic bound for the
    # switch's own prefixes (a leaf's host subnets); the text says why, for the refusal a leaf gets
    keeps_own_routes: str = ""
    # The transports the mechanism can be driven over (empty: any), and why not over the others
    transports: tuple[str, ...] = ()
    transports_note: str = ""
