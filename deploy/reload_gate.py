"""Changes a switch takes only after a reload (NX-OS `hardware profile dlb`): found before anything is committed,
refused in an ordinary apply, and pushed in a step of their own when the operator accepts the reload.

A platform names the top-level sections such a change lives in (`PlatformSpec.reload_sections`, with its source).
What decides is the running config against the candidate, section by section: a section the candidate adds,
removes (in a replace) or changes is a reload-class change. The device's own spelling of a list (`a , b` or `a,b`)
and runs of spaces do not count as a change.
"""

from __future__ import annotations

import re

from rocefab.renderers.configtext import ConfigNode, parse_indented

_COMMA = re.compile(r"\s*,\s*")


def _canonical(node: ConfigNode) -> tuple[str, ...]:
    lines = [node.line, *(line for child in node.children for line in _canonical(child))]
    return tuple(_COMMA.sub(",", " ".join(line.split())) for line in lines)


def _sections(config: str, prefixes: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    root = parse_indented(config)
    return {node.line: _canonical(node) for node in root.children if node.line.startswith(prefixes)}


def reload_changes(running: str, candidate: str, prefixes: tuple[str, ...], replace: bool = True) -> tuple[str, ...]:
    """The reload-class sections that committing `candidate` over `running` would add, change or (with `replace`)
    remove, by their first line.

    >>> run = "hostname s\\nhardware profile dlb\\n  mode flowlet\\n  dlb-interface Ethernet1/1,Ethernet1/2\\n"
    >>> reload_changes(run, run.replace(",", " , "), ("hardware profile dlb",))
    ()
    >>> reload_changes(run, run.replace("flowlet", "per-packet"), ("hardware profile dlb",))
    ('hardware profile dlb',)
    >>> reload_changes(run, "hostname s\\n", ("hardware profile dlb",)), reload_changes(run, "", (), True)
    (('hardware profile dlb',), ())
    """
    if not prefixes:
        return ()
    before, after = _sections(running, prefixes), _sections(candidate, prefixes)
    names = list(after) + ([name for name in before if name not in after] if replace else [])
    return tuple(name for name in names if before.get(name) != after.get(name))
