"""Natural ordering of interface names, so Ethernet1/2 sorts before Ethernet1/10."""

from __future__ import annotations

import re
from functools import lru_cache

_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=1 << 16)  # interface names repeat on every switch of a model
def natural_key(name: str) -> tuple[str | int, ...]:
    """Sort key alternating text and numbers.

    >>> sorted(["swp10", "swp2s1", "swp2s0", "swp1"], key=natural_key)
    ['swp1', 'swp2s0', 'swp2s1', 'swp10']
    """
    # re.split always yields text at even positions and digits at odd ones, so two keys compare
    # position by position without mixing types.
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(name)))
