"""What each part of a render is made from, as one hash: a re-render skips the parts whose hash it wrote last time.

A device's files are made from its own record and the plan's fabric-wide settings (QoS, VLANs, services, the
host profile, where the plan came from) by rocefab's code and templates, and nothing else. `device_view` is that
fabric-wide part alone: the plan with no switches, hosts or links, and without the intent's hash and the
fabric's description (which no device's file prints, see templating.header_lines); `DeviceViews` narrows it
further per kind of device. Device renderers are handed their narrowed view, never the whole plan, so a renderer
that started reading another device (or a setting its view leaves out) would fail its tests instead of making the
key unsound.

The key of a device is SHA-256 over the code's fingerprint, the kinds of file left out, its view, the device
record's `key_text` and its cable values (plan.cable_values, which the key text leaves out). The key text is
the record as JSON arrays of the values its repr shows, nested records likewise and enums by value, printed by
orjson's C code: a third of the cost of the repr (which spells every class and field name) for the same
information. It is one-to-one because of what the device records are (tests/test_input_keys.py checks it of
every record a device can hold): strings, integers, booleans, enums of distinct values, records and tuples of
them, each position of one such type or that or None, no float and no other union, so reading the JSON back
with the declared types gives the record again. The fabric-wide files (cabling, the diagram, ...) read the whole
plan: their key covers the view, the full source, every device's key and the links (their key text too).
plan/'s parts have keys of their own (plan_parts.py). So do the monitoring and the bandwidth tests, which
read the fabric's topology only: their key, `topology_key`, covers the devices' and links' key texts without
their cable values, and the view without the services' raw lines, so a measured cable or one switch's raw
lines leave them as they are (tests/test_input_keys.py renders them from a plan with every one of those
changed and compares).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import fields, is_dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, cast

import orjson

import rocefab
from rocefab.renderers.plan import FabricPlan, Host, HostProfile, Link, Switch, cable_values
from rocefab.renderers.record import shown_values
from rocefab.renderers.services import RawLines, SiteServices

_PACKAGE = Path(rocefab.__file__).parent  # models/, renderers/, templates/ ... are in it (links in a checkout)
_SKIPPED = {"__pycache__"}


@cache
def code_fingerprint() -> str:
    """SHA-256 over every file of the package (code, templates, catalogue data) and the versions of Python and of
    the libraries that shape the output: a render made by other code never counts as this one's."""
    import jinja2
    import yaml

    # orjson prints the plan's JSON (jsontext) and the key texts
    versions = f"{sys.version}\0jinja2 {jinja2.__version__}\0pyyaml {yaml.__version__}\0orjson {orjson.__version__}"
    return tree_fingerprint(_PACKAGE, versions)


def tree_fingerprint(root: Path, versions: str) -> str:
    """SHA-256 over `versions` and every file under `root` (links followed), by path and content; compiled
    bytecode left out."""
    digest = hashlib.sha256(f"{versions}\0".encode())
    files: list[tuple[str, Path]] = []
    for folder, subfolders, names in os.walk(root, followlinks=True):
        subfolders[:] = sorted(d for d in subfolders if d not in _SKIPPED)
        here = Path(folder)
        files += ((str(here.relative_to(root) / name), here / name) for name in names if not name.endswith(".pyc"))
    for relative, path in sorted(files):
        digest.update(f"{relative}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def device_view(plan: FabricPlan) -> FabricPlan:
    """The part of `plan` the devices' files are rendered from, besides each device itself."""
    return replace(plan, switches=(), hosts=(), links=(), source=replace(plan.source, intent_sha256="", description=""))


def _narrowed(view: FabricPlan, device: Switch | Host) -> FabricPlan:
    """`view` as one device's renderer sees it: a host's without the switches' VLANs and services, a switch's
    without the hosts' profile and with only its own platform's raw lines for its role. What a renderer is not
    given cannot change its device's files, so a change there re-renders only the devices that read it."""
    if isinstance(device, Host):
        return replace(view, vlans=(), services=None)
    services = view.services
    if services is not None:
        mine = services.raw(device.platform, device.role.value)
        services = _without_raw_lines(services)
        if mine:
            own: dict[str, Any] = {f"raw_{device.platform}": RawLines(**{device.role.value: mine})}
            services = replace(services, **own)
    return replace(view, services=services, host_profile=cast(HostProfile, None))


def _without_raw_lines(services: SiteServices) -> SiteServices:
    """The services with no raw line for any platform or role."""
    lines: dict[str, Any] = {f.name: RawLines() for f in fields(services) if f.name.startswith("raw_")}
    return replace(services, **lines)


def render_base(view: FabricPlan, leave_out: Collection[str]) -> bytes:
    """What the keys of the devices rendered from `view` start from: the code, the kinds left out and the view."""
    digest = hashlib.sha256(code_fingerprint().encode())
    digest.update(f"\0{sorted(leave_out)!r}\0{view!r}".encode())
    return digest.digest()


_SHOWN: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _shown(value: object) -> tuple[Any, ...]:
    """What `key_text` prints of a record: the values its repr shows (orjson asks for each record it meets)."""
    kind = type(value)
    values = _SHOWN.get(kind)
    if values is None:
        if not is_dataclass(kind):
            raise TypeError(f"{kind.__name__} has no key text")
        values = _SHOWN[kind] = shown_values(kind)
    return values(value)


def key_text(value: object) -> bytes:
    """`value` (a record, or a tuple of records) as the input keys print it: see the module's text."""
    return orjson.dumps(value, default=_shown, option=orjson.OPT_PASSTHROUGH_DATACLASS)


def device_keys(base: bytes, device: Switch | Host) -> tuple[str, str]:
    """The device's input key, and the digest of its key text alone (what the topology key is made of)."""
    shape = hashlib.sha256(key_text(device))
    digest = hashlib.sha256(base)
    digest.update(shape.digest())
    digest.update(repr(cable_values(device)).encode())
    return digest.hexdigest(), shape.hexdigest()


class DeviceViews:
    """Each device's view of a plan (see `_narrowed`) and its key, made once per kind of device: hosts, and
    switches by platform and role."""

    def __init__(self, plan: FabricPlan, leave_out: Collection[str] = ()) -> None:
        self.view = device_view(plan)
        self.leave_out = sorted(leave_out)
        self._made: dict[tuple[str, ...], tuple[FabricPlan, bytes]] = {}

    def of(self, device: Switch | Host) -> FabricPlan:
        return self._group(device)[0]

    def key(self, device: Switch | Host) -> str:
        return device_keys(self._group(device)[1], device)[0]

    def keys(self, device: Switch | Host) -> tuple[str, str]:
        """The device's input key and its shape: the digest of its key text, without view or cable values."""
        return device_keys(self._group(device)[1], device)

    def _group(self, device: Switch | Host) -> tuple[FabricPlan, bytes]:
        group = ("host",) if isinstance(device, Host) else (device.platform, device.role.value)
        made = self._made.get(group)
        if made is None:
            view = _narrowed(self.view, device)
            made = self._made[group] = (view, render_base(view, self.leave_out))
        return made


def fabric_key(plan: FabricPlan, leave_out: Collection[str], device_keys: dict[str, str], links_digest: str) -> str:
    """The key of the fabric-wide files: the code, the kinds left out, the plan's fabric-wide part and whole
    source, every device's key and the links."""
    digest = hashlib.sha256(render_base(device_view(plan), leave_out))
    digest.update(f"\0{plan.source!r}\0{links_digest}\0".encode())
    for name in sorted(device_keys):
        digest.update(f"{name}\0{device_keys[name]}\0".encode())
    return digest.hexdigest()


def links_digest(links: Sequence[Link]) -> str:
    """The digest of the links' key text, which leaves out their cable values (see `links_cables_digest`)."""
    # key_text(tuple(links)) written out (tests/test_input_keys.py holds the two equal): orjson asking back for each
    # link and both its ends cost 1.7 times as much, 0.2 s for the 294,912 links of 98,304 GPUs
    return hashlib.sha256(orjson.dumps([(link.kind, (link.a.device, link.a.port), (link.b.device, link.b.port),
                                         link.speed_gbps) for link in links])).hexdigest()


def links_cables_digest(links: Sequence[Link]) -> str:
    """The digest of the links' cable values (plan.cable_values)."""
    # cable_values(link), written out: a call per link doubled the cost; and orjson, not repr: a third of its cost
    return hashlib.sha256(orjson.dumps([(link.medium, link.length_m) for link in links])).hexdigest()


def topology_view(plan: FabricPlan) -> FabricPlan:
    """The part of `plan` the topology key covers besides the devices and links: the device view without the
    services' raw lines, which only the switches they are for print."""
    view = device_view(plan)
    return view if view.services is None else replace(view, services=_without_raw_lines(view.services))


def topology_key(plan: FabricPlan, leave_out: Collection[str], shapes: dict[str, str], links: str) -> str:
    """The key of the files made from the fabric's topology (monitoring/, bandwidth-tests/): the code, the kinds
    left out, the topology view, each device's shape (`DeviceViews.keys`, in plan order) and the links' digest
    (`links_digest` of every link, each part's in plan/'s order)."""
    digest = hashlib.sha256(render_base(topology_view(plan), leave_out))
    digest.update(f"\0{links}\0".encode())
    for name in [sw.name for sw in plan.switches] + [host.name for host in plan.hosts]:
        digest.update(f"{name}\0{shapes[name]}\0".encode())
    return digest.hexdigest()
