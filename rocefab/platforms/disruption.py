"""How much a changed config line disturbs a running device, as data each platform unit declares with its sources.

The classes, least to most disruptive:

- `hitless`: nothing forwarding notices (a description, a BGP knob that needs no session reset);
- `port-flap`: the changed port's link goes down and up (speed, breakout, MTU where the NOS re-initialises the
  port), or the BGP sessions it names reset;
- `qos-reprogram`: buffers, queues or QoS maps are re-programmed on the whole device: every port's lossless
  traffic may be paused or dropped for a moment;
- `agent-restart`: the forwarding agent restarts (Cumulus switchd): forwarding stops for seconds;
- `reload`: the device applies it only after a reboot.

A line no rule names is classed as the unit's `unknown` class (conservative: `qos-reprogram` on switches), so a
change nobody has classed is drained before it is pushed rather than assumed harmless.
"""

from __future__ import annotations

from enum import StrEnum

from rocefab.renderers.record import record


class Disruption(StrEnum):
    HITLESS = "hitless"
    PORT_FLAP = "port-flap"
    QOS_REPROGRAM = "qos-reprogram"
    AGENT_RESTART = "agent-restart"
    RELOAD = "reload"

    @property
    def rank(self) -> int:
        return list(Disruption).index(self)


@record
class DisruptionRule:
    """Lines whose path (their enclosing sections and the line itself, without indentation, joined with ` > `;
    a flat `nv set` line is its own path) matches `pattern` (a regular expression, searched) are of class
    `disruption`; `source` says where that is written, or why rocefab assumes it."""

    pattern: str
    disruption: Disruption
    source: str


@record
class DisruptionTable:
    rules: tuple[DisruptionRule, ...]  # first match wins
    unknown: Disruption = Disruption.QOS_REPROGRAM
