"""Every kind of device rocefab configures, one unit each (see `unit.py`), in one explicit registry.

Adding a network operating system means adding a package here (its spec, renderer, session, emulator) and
its models' rows in `models/catalogue.py`; nothing else in rocefab names a platform.
"""

from __future__ import annotations

from rocefab.platforms import cumulus, eos, host, nxos
from rocefab.platforms.spec import Multihoming, PlatformSpec
from rocefab.platforms.unit import ContainerlabNode, DeviceUnit, DiagramStyle

__all__ = ["UNITS", "ContainerlabNode", "DeviceUnit", "DiagramStyle", "Multihoming", "PlatformSpec", "host_unit",
           "on_request_kinds", "switch_specs", "unit"]

# Switch platforms first, in the order legends and summaries list them; the GPU host last.
UNITS: dict[str, DeviceUnit] = {u.key: u for u in (eos.UNIT, nxos.UNIT, cumulus.UNIT, host.UNIT)}


def unit(key: str) -> DeviceUnit:
    try:
        return UNITS[key]
    except KeyError:
        raise KeyError(f"no device unit {key!r}; rocefab knows {', '.join(UNITS)}") from None


def switch_specs() -> dict[str, PlatformSpec]:
    return {key: u.spec for key, u in UNITS.items() if u.spec is not None}


def on_request_kinds() -> frozenset[str]:
    """The rendered file kinds `rocefab render` leaves out unless asked for (DeviceUnit.on_request)."""
    return frozenset(kind for u in UNITS.values() for kind in u.on_request)


def host_unit() -> DeviceUnit:
    """The unit of the fabric's GPU servers (the one device kind that is not a switch)."""
    (found,) = (u for u in UNITS.values() if u.spec is None)
    return found
