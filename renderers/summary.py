"""Figures about a plan that operators ask for first: bandwidth per tier and oversubscription."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from renderers.plan import PortRole, Switch


@dataclass(frozen=True, slots=True)
class Bandwidth:
    down_gbps: int  # towards hosts (leaves) or leaves (spines)
    up_gbps: int  # towards spines (leaves)

    @property
    def oversubscription(self) -> str:
        """Down:up bandwidth: 1:1 when uplinks carry all host traffic, 2:1 when half, "-" without uplinks.

        >>> Bandwidth(3200, 3200).oversubscription, Bandwidth(6400, 3200).oversubscription
        ('1:1', '2:1')
        """
        if not self.up_gbps:
            return "-"
        ratio = Fraction(self.down_gbps, self.up_gbps)
        return f"{ratio.numerator}:{ratio.denominator}" if ratio.denominator != 1 else f"{ratio.numerator}:1"


def bandwidth(switch: Switch) -> Bandwidth:
    down = sum(p.speed_gbps for p in switch.ports if p.role in (PortRole.HOST, PortRole.DOWNLINK))
    up = sum(p.speed_gbps for p in switch.ports if p.role is PortRole.UPLINK)
    return Bandwidth(down, up)
