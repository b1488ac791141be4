"""Device names derived from the intent, shared by checks and the planner so both see the same names."""

from __future__ import annotations

from rocefab.models.intent import Intent, Topology


def format_name(fmt: str, n: int) -> str:
    """Apply a `name_format` such as "gpu{n:03d}"; the schema has already checked that it yields valid names
    (`models.types.check_name_format`).

    >>> format_name("gpu{n:03d}", 7)
    'gpu007'
    """
    return fmt.format(n=n)


def spine_names(intent: Intent) -> list[str]:
    assert isinstance(intent.topology, Topology), "sized fabrics name their switches in the planner"
    spines = intent.topology.spines
    if spines.names is not None:
        return list(spines.names)
    return [format_name(spines.name_format, n) for n in range(1, spines.count + 1)]


def host_names_by_pair(intent: Intent) -> dict[str, list[str]]:
    """Host names per leaf pair; generated names count from 1 across pairs in intent order."""
    assert isinstance(intent.topology, Topology), "sized fabrics name their hosts in the planner"
    result: dict[str, list[str]] = {}
    n = 0
    for pair in intent.topology.leaf_pairs:
        if pair.host_names is not None:
            result[pair.name] = list(pair.host_names)
            continue
        names = []
        for _ in range(pair.hosts):
            n += 1
            names.append(format_name(intent.hosts.name_format, n))
        result[pair.name] = names
    return result
