"""The cable media of the cabling plan and the farthest each reaches.

Rack placement decides the medium (renderers/cabling.py): inside one rack a passive copper DAC, between racks of
one pod multimode optics, between pods and up to the super-spines single-mode optics. The reaches are NVIDIA
LinkX figures for 400G/800G lanes (device-catalogue.md section 8.1): passive DACs and splitter DACs up to 3 m
(MCP4Y10, MCP7Y00), 2x400G SR4 multimode 50 m (MMA4Z00-NS), 2x400G DR4 single-mode 500 m (MMS4X00-NM).
"""

from __future__ import annotations

from enum import StrEnum


class Medium(StrEnum):
    COPPER = "copper"
    MULTIMODE = "multimode"
    SINGLE_MODE = "single-mode"


REACH_M: dict[Medium, int] = {Medium.COPPER: 3, Medium.MULTIMODE: 50, Medium.SINGLE_MODE: 500}
