"""Changes a switch takes only after a reload (NX-OS `hardware profile dlb`): found before anything is committed,
refused in an ordinary apply, and pushed in a step of their own when the operator accepts the reload.

A platform names the top-level sections such a change lives in (`PlatformSpec.reload_sections`, with its source).
What decides is the running config against the candidate, section by section: a section the candidate adds,
removes (in a replace) or changes is a reload-class change. The device's own spelling (`a , b` or `a,b`, `Eth1/1`
or `Ethernet1/1`, upper or lower case, the order of the section's lines) does not count as a change, and the fleet
asks only where the device's own diff says something changes.
"""

from __future__ import annotations

import re

from rocefab.renderers.configtext import ConfigNode, parse_indented

_COMMA = re.compile(r"\s*,\s*")
_SHORT_ETH = re.compile(r"(?i)\beth(?:ernet)?(?=\d)")


def _line(text: str) -> str:
    """A config line as compared: case, runs of spaces, spaces around commas and short interface names set aside."""
    return _SHORT_ETH.sub("ethernet", _COMMA.sub(",", " ".join(text.split())).lower())


def _lines(node: ConfigNode) -> frozenset[str]:
    return frozenset(_line(child.line) for below in node.children for child in (below, *_descendants(below)))


def _descendants(node: ConfigNode) -> list[ConfigNode]:
    return [d for child in node.children for d in (child, *_descendants(child))]


def _sections(config: str, prefixes: tuple[str, ...]) -> dict[str, frozenset[str]]:
    root = parse_indented(config)
    return {_line(node.line): _lines(node) for node in root.children if node.line.startswith(prefixes)}


def reload_changes(running: str, candidate: str, prefixes: tuple[str, ...], replace: bool = True) -> tuple[str, ...]:
    """The reload-class sections that committing `candidate` over `running` would add, change or (with `replace`)
    remove, by their first line. The lines of a section are compared as a set (a device may print them in its own
    order); a merge changes a section only where the candidate has a line the running section lacks.

    >>> dlb = ("hardware profile dlb",)
    >>> run = "hardware profile dlb\\n  mode flowlet\\n  dlb-interface Eth1/1,Eth1/2\\n"
    >>> run += "  mac-address 00:CC:CC:CC:CC:CC\\n"
    >>> cand = "hardware profile dlb\\n  mode flowlet\\n  mac-address 00:cc:cc:cc:cc:cc\\n"
    >>> cand += "  dlb-interface Ethernet1/1 , Ethernet1/2\\n"
    >>> reload_changes(run, cand, dlb), reload_changes(run, cand.replace("flowlet", "per-packet"), dlb)
    ((), ('hardware profile dlb',))
    >>> reload_changes(run, "hostname s\\n", dlb), reload_changes(run + "  flowlet-aging 600\\n", cand, dlb, False)
    (('hardware profile dlb',), ())
    """
    if not prefixes:
        return ()
    before, after = _sections(running, prefixes), _sections(candidate, prefixes)
    if not replace:
        return tuple(name for name, lines in after.items() if name not in before or not lines <= before[name])
    names = list(after) + [name for name in before if name not in after]
    return tuple(name for name in names if before.get(name) != after.get(name))
