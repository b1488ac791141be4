"""Disruption classes: each changed line of a diff classed by its platform's rules, a device by its worst line,
a line no rule names by the unit's conservative class; and the platforms' tables themselves."""

from __future__ import annotations

from rocefab.deploy.disruption import classify, paths
from rocefab.deploy.unified import from_lines
from rocefab.platforms.disruption import Disruption, DisruptionRule, DisruptionTable

TABLE = DisruptionTable((
    DisruptionRule(r"(^| > )description ", Disruption.HITLESS, "a label"),
    DisruptionRule(r"^interface [^>]* > speed ", Disruption.PORT_FLAP, "renegotiates the link"),
    DisruptionRule(r"^hardware profile dlb", Disruption.RELOAD, "reload"),
))


def test_a_line_is_classed_within_its_section_from_the_hunk_heading() -> None:
    running = ["interface Ethernet1", "   description a", "   mtu 9214", "   x", "   y", "   z", "   speed 400g"]
    candidate = [*running[:-1], "   speed 200g"]
    diff = from_lines("s", running, candidate, context=1, indented=True)
    assert "@@ -6,2 +6,2 @@ interface Ethernet1" in diff
    found = classify(diff, TABLE)
    assert found.disruption is Disruption.PORT_FLAP and found.counts == {"port-flap": 2}
    assert {line.path for line in found.lines} == {"interface Ethernet1 > speed 400g",
                                                   "interface Ethernet1 > speed 200g"}


def test_the_worst_line_decides_and_an_unnamed_line_is_conservative() -> None:
    diff = "@@ -1,2 +1,2 @@\n-hostname a\n+hostname b\n interface Ethernet2\n-   description x\n+   description y"
    found = classify(diff, TABLE)
    assert found.counts == {"hitless": 2, "qos-reprogram": 2} and found.disruption is Disruption.QOS_REPROGRAM
    assert [line.path for line in found.worst_lines] == ["hostname a", "hostname b"]
    assert classify(diff, DisruptionTable(TABLE.rules, unknown=Disruption.HITLESS)).disruption is Disruption.HITLESS


def test_without_a_heading_a_line_at_the_top_of_a_hunk_has_no_section_and_takes_the_conservative_class() -> None:
    """A device's own diff (EOS before 4.3x) names no section: `speed` alone matches no `interface` rule."""
    assert paths("@@ -7 +7 @@\n-   speed 400g\n+   speed 200g") == [("-", "speed 400g"), ("+", "speed 200g")]
    assert classify("@@ -7 +7 @@\n-   speed 400g\n+   speed 200g", TABLE).disruption is Disruption.QOS_REPROGRAM


def test_nothing_changed_is_hitless() -> None:
    assert classify("", TABLE).disruption is Disruption.HITLESS
