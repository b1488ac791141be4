"""`dir bootflash:` as NX-OS prints it: one row per entry (size, date, name; a folder's name ends in a slash), then
a blank line and the usage summary. Captured answers: tests/fixtures/devices/nxos/*/dir_bootflash.txt."""

from __future__ import annotations

import re

# size, month day time year, name: "   4096    Jan 11 04:42:12 2020  scripts/"
ROW = re.compile(r"\s*\d+\s+[A-Z][a-z]{2}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}\s+\d{4}\s+(\S+)\s*")


def entries(listing: str) -> list[tuple[str, bool]]:
    """(name, is a folder) for each row of the listing, in its order; the usage lines are not rows."""
    found = []
    for line in listing.splitlines():
        m = ROW.fullmatch(line)
        if m:
            name = m[1]
            found.append((name.rstrip("/"), name.endswith("/")))
    return found
