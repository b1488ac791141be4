"""Natural ordering of interface names, so Ethernet1/2 sorts before Ethernet1/10."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

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


def natural_order(names: Iterable[str]) -> tuple[str, ...] | None:
    """Distinct `names` sorted by `natural_key`; None when two of them have the same key (swp1 and swp01), which
    only a stable sort of the sequence they came in can order."""
    ordered = sorted(names, key=natural_key)
    keys = list(map(natural_key, ordered))
    if any(a == b for a, b in pairwise(keys)):
        return None
    return tuple(ordered)
