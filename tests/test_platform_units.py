"""The platform registry: every unit is complete, and no product code outside the units names a platform.

A unit (rocefab/platforms/<key>/) is everything rocefab knows about one kind of device. This walks the
registry and resolves every part each unit declares, renders a device of each unit from the examples and
checks its files against what the unit says; then it reads the product code's syntax trees for comparisons
and mappings keyed by a platform's name, which would mean a platform living outside its unit.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from conftest import example_plan

from rocefab.deploy.inventory import DEFAULT_PORT, Transport
from rocefab.deploy.session import DeviceSession
from rocefab.models.catalogue import MODELS, PLATFORMS
from rocefab.platforms import UNITS, host_unit
from rocefab.renderers.render import target_of
from rocefab.renderers.templating import template_root

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = [p for folder in ("models", "renderers", "deploy", "rocefab") for p in sorted((ROOT / folder).rglob("*.py"))
           if "platforms" not in p.relative_to(ROOT).parts]


@pytest.mark.parametrize("key", sorted(UNITS))
def test_every_unit_is_complete(key: str) -> None:
    unit = UNITS[key]
    assert unit.key == key and (ROOT / "rocefab" / "platforms" / key / "__init__.py").is_file()
    if unit.spec is not None:
        assert unit.spec.key == key and PLATFORMS[key] is unit.spec
        assert unit.target.startswith(unit.spec.display_name)
    assert (template_root() / key).is_dir(), f"templates/{key}/ holds the unit's templates"
    session = unit.session()
    assert issubclass(session, DeviceSession) and not inspect.isabstract(session)
    assert unit.transports and all(Transport(t) in DEFAULT_PORT for t in unit.transports)
    assert callable(unit.files()) and callable(unit.emulator())
    node = unit.containerlab
    assert node.kind and node.image and node.note and node.interfaces_note and node.release_name
    assert node.interfaces(["a", "b"]) and len(node.interfaces(["a", "b"])) == 2
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in (unit.diagram.fill, unit.diagram.stroke))
    assert not (unit.preserved and not session.has_backup), "a unit that preserves blocks has a config to keep"


@pytest.mark.parametrize("key", sorted(UNITS))
def test_each_unit_renders_its_candidate(key: str) -> None:
    """Some example holds a device of every unit; its files include the one deploy stages."""
    unit = UNITS[key]
    for example in ("pod32", "lab", "tor128-3tier"):
        plan = example_plan(example)
        devices = [s for s in plan.switches if s.platform == key] if unit.is_switch else list(plan.hosts)
        if devices:
            break
    else:
        pytest.fail(f"no example has a {key} device")
    target = target_of(devices[0]) if unit.is_switch else unit.target
    files = unit.files()(plan, devices[0], target)
    assert unit.candidate_kind in {f.kind for f in files}
    assert all(target in f.content for f in files), "every file says what it is for"


def test_the_catalogue_rows_name_registered_switch_units() -> None:
    assert {m.platform for m in MODELS.values()} <= {k for k, u in UNITS.items() if u.is_switch}
    assert host_unit().spec is None and sum(not u.is_switch for u in UNITS.values()) == 1


def _platform_names_in(tree: ast.AST) -> list[tuple[int, str]]:
    """Comparisons with, and mapping keys of, a string that is a unit's key."""
    keys = set(UNITS)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                if isinstance(operand, ast.Constant) and operand.value in keys:
                    found.append((node.lineno, f"compares with {operand.value!r}"))
        elif isinstance(node, ast.Dict):
            for k in node.keys:
                if isinstance(k, ast.Constant) and k.value in keys:
                    found.append((node.lineno, f"maps {k.value!r}"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in keys:
            found.append((node.lineno, f"indexes by {node.slice.value!r}"))
    return found


def test_no_product_code_outside_the_units_names_a_platform() -> None:
    offenders = []
    for path in PRODUCT:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, what in _platform_names_in(tree):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    # "host" is also an English word there: the diagram's tier and a
    # table column are roles, a finding labels an owner, a bandwidth test's end names its host and the monitoring
    # series call the hosts' tier "host", and an inventory entry's address is its `host`; none of them picks a unit.
    words = {"renderers/inventory_file.py", "deploy/inventory_export.py", "renderers/diagram.py",
             "renderers/diagram_layout.py",
             "rocefab/cli.py", "models/checks/topology.py",
             "renderers/bandwidth.py", "rocefab/bandwidth/judge.py", "renderers/monitoring/rule_tests.py"}
    offenders = [o for o in offenders if not (o.split(":")[0] in words and o.endswith("'host'"))]
    assert not offenders, "\n".join(offenders)
