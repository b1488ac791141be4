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


# Rules every indented CLI config (EOS, NX-OS) shares, by what the line is; each unit puts its own before them.
LABEL = DisruptionRule(r"(^| > )description ", Disruption.HITLESS, "a label: nothing is programmed")
SECTION = DisruptionRule(
    r"^(interface \S+|vlan \S+|policy-map type \S+ \S+|class-map type \S+ match-\S+ \S+|policy-map type \S+ \S+ > "
    r"class \S+|qos profile \S+|vrf (instance|context) \S+|(policy-map|class-map) \S+)$", Disruption.HITLESS,
    "a section's own line: what it holds is classed line by line")
SESSION_TIMERS = DisruptionRule(r" > bfd |> no ip redirects$", Disruption.HITLESS,
                                "BFD timers are renegotiated on the running session; ICMP redirects are the "
                                "control plane's")
LINK = DisruptionRule(r"^interface [^>]* > (speed|(no )?shutdown|fec|error-correction|duplex|negotiate|phy )",
                      Disruption.PORT_FLAP, "the link comes up again at its new setting")
BGP_IDENTITY = DisruptionRule(r"^router bgp \S+$|^router bgp [^>]*> router-id ", Disruption.PORT_FLAP,
                              "a new local AS or router-id starts every BGP session again")
BGP_ORIGINATED = DisruptionRule(
    r"^router bgp [^>]*> (address-family [^>]*> )?(network |aggregate-address |maximum-paths )", Disruption.HITLESS,
    "an originated prefix or the multipath width is taken on the running sessions")
INDENTED_FIRST = (LABEL, SECTION, SESSION_TIMERS)
INDENTED_LAST = (LINK, BGP_IDENTITY, BGP_ORIGINATED)
