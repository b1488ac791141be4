"""NAPALM's getter dictionaries in verify's words: one reading for every driver that has the getter."""

from __future__ import annotations

from typing import Any

from rocefab.deploy.verify.observation import Interface, Neighbor


def interfaces(reported: dict[str, Any]) -> dict[str, Interface]:
    """From `get_interfaces` (speed in Mb/s; a port that is down has no speed worth reporting)."""
    return {name: Interface(name, bool(i["is_up"]), float(i["speed"]) / 1000 if i["is_up"] and i["speed"] > 0
                            else None, int(i["mtu"]) if i.get("mtu") else None)
            for name, i in reported.items()}


def lldp(reported: dict[str, list[dict[str, str]]]) -> dict[str, tuple[Neighbor, ...]]:
    """From `get_lldp_neighbors`: each port's neighbours by system name (without a domain) and port."""
    return {port: tuple(Neighbor(n["hostname"].split(".")[0], n["port"]) for n in rows)
            for port, rows in reported.items()}
