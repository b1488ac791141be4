"""The topology key is sound: what it leaves out (cable values, raw lines, the intent's hash and description)
changes no file of monitoring/ or bandwidth-tests/, and every device's input key still covers its cable values.

The topology key (input_keys.topology_key) lets a re-render keep monitoring/ and bandwidth-tests/ when only a
cable was measured or one switch's raw lines changed. That is only right if their renderers read none of those:
here they render from each example's plan and from the same plan with all of them changed, and must print the
same bytes.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import types
import typing
from dataclasses import replace
from typing import Any

import orjson
import pytest
from conftest import EXAMPLES, example_plan

from rocefab.renderers import input_keys
from rocefab.renderers.headroom import Headroom
from rocefab.renderers.plan import FabricPlan, Host, Link, Switch, cable_values
from rocefab.renderers.render import PARTS, fabric_part
from rocefab.renderers.services import RawLines, SiteServices

_SERVICES = SiteServices(("192.0.2.1",), ("192.0.2.2",), (), None, (), None, None, (), (), (), RawLines(),
                         RawLines(), RawLines())
_RAW = RawLines(("hostname raw-leaf",), ("hostname raw-spine",), ("hostname raw-superspine",))


def _headroom(old: Headroom | None) -> Headroom:
    return Headroom(400, 99, 9216, 990, 1000, 123_456) if old is None else replace(old, bytes=old.bytes + 1, cable_m=99)


def _host(host: Host) -> Host:
    nics = tuple(replace(nic, cable_m=nic.cable_m + 7) for nic in host.nics)
    bonds = tuple(replace(bond, members=tuple(replace(m, cable_m=m.cable_m + 7) for m in bond.members))
                  for bond in host.bonds)
    return replace(host, nics=nics, bonds=bonds)  # type: ignore[arg-type]


def _switch(switch: Switch) -> Switch:
    return replace(switch, pfc_headroom=_headroom(switch.pfc_headroom), longest_cable_m=switch.longest_cable_m + 7)


def _link(link: Link) -> Link:
    return replace(link, length_m=link.length_m + 7, medium="copper" if link.medium != "copper" else "multimode")


def _with_services(plan: FabricPlan) -> FabricPlan:
    return replace(plan, services=_SERVICES)


def _other_cables_and_raw_lines(plan: FabricPlan) -> FabricPlan:
    """`plan` with every cable value, every raw line, the intent's hash and the description changed."""
    services = replace(_SERVICES, raw_eos=_RAW, raw_nxos=_RAW, raw_cumulus=_RAW)
    source = replace(plan.source, intent_sha256="f" * 64, description="another description")
    return replace(plan, source=source, services=services, switches=tuple(map(_switch, plan.switches)),
                   hosts=tuple(map(_host, plan.hosts)), links=tuple(map(_link, plan.links)))


def _files(plan: FabricPlan, part: str) -> list[tuple[str, str, str]]:
    return [(f.path, f.kind, f.content) for f in fabric_part(plan, part)]


def _topology_key(plan: FabricPlan) -> str:
    views = input_keys.DeviceViews(plan)
    shapes = {d.name: views.keys(d)[1] for d in (*plan.switches, *plan.hosts)}
    return input_keys.topology_key(plan, (), shapes, input_keys.links_digest(plan.links))


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("part", list(PARTS))
def test_the_topology_parts_read_no_cable_value_raw_line_or_intent_hash(name: str, part: str) -> None:
    plan = _with_services(example_plan(name))
    other = _other_cables_and_raw_lines(plan)
    assert other != plan
    assert _files(other, part) == _files(plan, part)
    assert _topology_key(other) == _topology_key(plan)


@pytest.mark.parametrize("name", ["lab", "pod32", "cluster1024-rail"])
def test_every_device_key_covers_its_cable_values(name: str) -> None:
    plan = example_plan(name)
    other = _other_cables_and_raw_lines(replace(plan, services=None))
    views, other_views = input_keys.DeviceViews(plan), input_keys.DeviceViews(other)
    for before, after in zip((*plan.switches, *plan.hosts), (*other.switches, *other.hosts), strict=True):
        key, shape = views.keys(before)
        other_key, other_shape = other_views.keys(after)
        assert other_shape == shape  # the repr leaves the cable values out ...
        assert other_key != key, before.name  # ... and the key adds them
    assert input_keys.links_digest(other.links) == input_keys.links_digest(plan.links)
    assert input_keys.links_cables_digest(other.links) != input_keys.links_cables_digest(plan.links)


def _records(root: type) -> set[type]:
    """Every record class a value of `root` can hold."""
    found: set[type] = set()

    def visit(hint: object) -> None:
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if hint not in found:
                found.add(hint)
                for value in typing.get_type_hints(hint).values():
                    visit(value)
            return
        for arg in typing.get_args(hint):
            visit(arg)

    visit(root)
    return found


@pytest.mark.parametrize("name", ["lab", "pod32", "cluster1024-rail"])
def test_the_links_digests_are_made_of_their_key_text_and_their_cable_values(name: str) -> None:
    """links_digest writes key_text of the links out, links_cables_digest their cable_values, both for speed: each
    must read what the function it stands for reads (a field added to Link or Endpoint shows here)."""
    links = example_plan(name).links
    assert input_keys.links_digest(links) == hashlib.sha256(input_keys.key_text(tuple(links))).hexdigest()
    expected = hashlib.sha256(orjson.dumps([cable_values(link) for link in links])).hexdigest()
    assert input_keys.links_cables_digest(links) == expected


def test_the_only_fields_left_out_of_a_repr_are_the_cable_values() -> None:
    """A field hidden from the repr is hidden from every key that is made of reprs: only `cable_values` may be."""
    hidden = {(cls.__name__, f.name) for cls in _records(FabricPlan) for f in dataclasses.fields(cls) if not f.repr}
    assert hidden == {("Link", "medium"), ("Link", "length_m"), ("Switch", "pfc_headroom"),
                      ("Switch", "longest_cable_m"), ("HostNic", "cable_m"), ("HostPort", "cable_m")}
    plan = example_plan("lab")
    assert len(cable_values(plan.links[0])) == 2 and len(cable_values(plan.switches[0])) == 2


def test_a_change_of_topology_changes_the_topology_key() -> None:
    plan = example_plan("pod32")
    host = plan.hosts[-1]
    renamed = replace(plan, hosts=(*plan.hosts[:-1], replace(host, name=host.name + "x")))
    slower = replace(plan, links=(replace(plan.links[0], speed_gbps=plan.links[0].speed_gbps // 2), *plan.links[1:]))
    keys = {_topology_key(p) for p in (plan, renamed, slower)}
    assert len(keys) == 3


def _printable_once(hint: object, where: str) -> None:
    """Fail unless every value of type `hint` has a JSON text of its own among the values of that type: a str,
    int or bool; an enum of distinct str values; a record whose shown fields are each printable once; a tuple of
    such; or one of those or None. No float (orjson prints NaN as null) and no other union."""
    args = typing.get_args(hint)
    if hint in (str, int, bool):
        return
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        assert all(isinstance(v, str) for v in values) and len(set(values)) == len(values), where
        return
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        for f in dataclasses.fields(hint):
            if f.repr:
                _printable_once(hints[f.name], f"{hint.__name__}.{f.name}")
        return
    if typing.get_origin(hint) is tuple:
        for arg in args:
            if arg is not Ellipsis:
                _printable_once(arg, where)
        return
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        others = [arg for arg in args if arg is not type(None)]
        assert len(args) == 2 and len(others) == 1, f"{where}: {hint} mixes kinds one JSON text could stand for"
        _printable_once(others[0], where)
        return
    raise AssertionError(f"{where}: {hint} is not a type the key text prints one-to-one")


@pytest.mark.parametrize("root", [Switch, Host, Link])
def test_the_key_text_is_one_to_one_for_every_record_a_device_or_link_holds(root: type) -> None:
    """Read back with the declared types, the key text of any value of these records gives that value again:
    so two devices with the same key text are the same device (but for the cable values, which the key adds)."""
    _printable_once(root, root.__name__)


def _as_shown(value: Any) -> Any:
    """What the key text of `value` reads back as, written with dataclasses.fields instead of shown_values."""
    if dataclasses.is_dataclass(value):
        return [_as_shown(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr]
    if isinstance(value, tuple):
        return [_as_shown(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


@pytest.mark.parametrize("name", ["lab", "pod32", "cluster1024-rail"])
def test_the_key_text_prints_every_shown_field_of_every_device_and_link(name: str) -> None:
    plan = example_plan(name)
    for device in (*plan.switches, *plan.hosts):
        assert orjson.loads(input_keys.key_text(device)) == _as_shown(device), device.name
    assert orjson.loads(input_keys.key_text(plan.links)) == _as_shown(plan.links)


def test_the_key_text_refuses_what_is_not_a_record() -> None:
    with pytest.raises(TypeError):
        input_keys.key_text((frozenset({"a"}),))
