"""Device names from a `name_format`, shared by the resolution and anything that names devices."""

from __future__ import annotations


def format_name(fmt: str, n: int) -> str:
    """Apply a `name_format` such as "gpu{n:03d}"; the schema has already checked that it yields valid names
    (`models.types.check_name_format`).

    >>> format_name("gpu{n:03d}", 7)
    'gpu007'
    """
    return fmt.format(n=n)
