"""A re-render renders only the devices whose inputs changed, and its folder is the one a fresh render makes.

The input keys (renderers/input_keys.py) decide which devices a re-render skips. Skipping is only right when the
skipped files are the ones the render would have made, so every case here compares the re-rendered folder with a
fresh render of the same intent, byte for byte and mode for mode, manifest included, on one process and on
several; and states which devices had to be rendered for each change, so a key that covers too much shows too.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import INTENTS, TEST_VERSION

from rocefab.renderers import input_keys
from rocefab.renderers.fanout import render_to_folder
from rocefab.renderers.output import Filled
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan

Intent = dict[str, Any]
JOBS = [1, 2]  # the serial render and the forked workers


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _stamps(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _plan(folder: Path, intent: Intent) -> FabricPlan:
    path = folder / f"{intent['fabric']['name']}.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    plan = check_file(path, TEST_VERSION).plan
    assert plan is not None
    return plan


ON_REQUEST = frozenset({"nvue-commands"})  # left out unless asked for, as `rocefab render` does


def _render(plan: FabricPlan, out: Path, jobs: int, leave_out: frozenset[str] = ON_REQUEST) -> Filled:
    return render_to_folder(plan, out, jobs=jobs, min_devices=1, leave_out=leave_out)


def _pod32() -> Intent:
    intent: Intent = yaml.safe_load((INTENTS / "pod32.yaml").read_text(encoding="utf-8"))
    return intent


def _host_cable(intent: Intent) -> Intent:
    """A measured length for one host's cable (the first bond member of the first host)."""
    changed = copy.deepcopy(intent)
    changed["cabling"] = {"measured": [{"device": "rack1-a", "port": "Ethernet1/1", "length_m": 1}]}
    return changed


def _with_services(intent: Intent) -> Intent:
    changed = copy.deepcopy(intent)
    changed["services"] = {"ntp": {"servers": ["192.0.2.1"]}}
    return changed


def _eos_raw(intent: Intent) -> Intent:
    changed = _with_services(intent)
    changed["services"]["raw"] = {"eos": {"leaf": ["clock timezone UTC"]}}
    return changed


def _nccl(intent: Intent) -> Intent:
    changed = copy.deepcopy(intent)
    changed["hosts"]["nccl"]["qps_per_connection"] = 2
    return changed


def _ntp(intent: Intent) -> Intent:
    changed = copy.deepcopy(intent)
    changed["services"]["ntp"]["servers"] = ["192.0.2.9"]
    return changed


def _description(intent: Intent) -> Intent:
    changed = copy.deepcopy(intent)
    changed["fabric"]["description"] = "the same pod, described anew"
    return changed


def _names(plan: FabricPlan, keep: Callable[[Any], bool]) -> set[str]:
    return {d.name for d in (*plan.switches, *plan.hosts) if keep(d)}


# (change, the devices it must re-render, given the new plan); a change starts from pod32 with an NTP server
CHANGES: dict[str, tuple[Callable[[Intent], Intent], Callable[[FabricPlan], set[str]]]] = {
    "nothing": (lambda intent: intent, lambda plan: set()),
    "one host cable measured": (_host_cable, lambda plan: {plan.hosts[0].name}),  # the leaf's headroom holds
    "raw lines for EOS leaves": (_eos_raw, lambda plan: _names(plan, lambda d: getattr(d, "platform", "") == "eos"
                                                                and d.role.value == "leaf")),
    "an NCCL setting": (_nccl, lambda plan: {h.name for h in plan.hosts}),
    "the fabric's description": (_description, lambda plan: set()),  # printed in plan.json, not per device
    "another NTP server": (_ntp, lambda plan: {s.name for s in plan.switches}),
}


@pytest.mark.parametrize("jobs", JOBS)
@pytest.mark.parametrize("change", CHANGES)
def test_a_rerender_renders_what_changed_and_makes_the_fresh_folder(tmp_path: Path, change: str, jobs: int) -> None:
    edit, expected = CHANGES[change]
    before = _with_services(_pod32())
    after = edit(before)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    old, new = _plan(tmp_path / "a", before), _plan(tmp_path / "b", after)
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    _render(old, out, jobs)
    rerendered = _render(new, out, jobs)
    _render(new, fresh, jobs)
    assert _tree(out) == _tree(fresh)
    assert set(rerendered.rendered) == expected(new)


@pytest.mark.parametrize("jobs", JOBS)
def test_an_unchanged_rerender_touches_no_file(tmp_path: Path, jobs: int) -> None:
    plan = _plan(tmp_path, _pod32())
    out = tmp_path / "out"
    first = _render(plan, out, jobs)
    stamps = _stamps(out)
    again = _render(plan, out, jobs)
    assert again.rendered == ()
    assert all(e.kept for e in again.entries if e.path != "summary.md")
    assert _stamps(out) == stamps, "every file, summary.md and manifest.json included, is the first render's"
    assert again.inputs == first.inputs
    # a kept file's entry says what a written one would: its hash, and its lines when a device's (summary.md)
    assert {e.path: (e.sha256, e.lines) for e in again.entries} == {e.path: (e.sha256, e.lines) for e in first.entries}
    assert set(again.inputs) == _names(plan, lambda d: True) | {"fabric", "plan/no-pod.jsonl", "monitoring/",
                                                                "bandwidth-tests/"}


def test_a_change_in_one_pod_writes_that_pods_part_of_the_plan(tmp_path: Path) -> None:
    intent: Intent = yaml.safe_load((INTENTS / "tor128-3tier.yaml").read_text(encoding="utf-8"))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    old = _plan(tmp_path / "a", intent)
    host = old.hosts[-1]  # in the last pod
    leaf, port = host.bonds[0].members[0].switch, host.bonds[0].members[0].port
    changed = copy.deepcopy(intent)
    changed["cabling"] = {"measured": [{"device": leaf, "port": port, "length_m": 1}]}
    new = _plan(tmp_path / "b", changed)
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    _render(old, out, 2)
    stamps = _stamps(out)
    again = _render(new, out, 2)
    _render(new, fresh, 2)
    assert _tree(out) == _tree(fresh)
    assert set(again.rendered) == {host.name}
    # The edited intent's fabric-wide files are made again (the intent's hash is in their key) while the devices
    # render, but only those whose bytes changed are written: the rest keep their inode and mtime.
    now = _stamps(out)
    rewritten = {path for path in now if now[path] != stamps.get(path)}
    assert rewritten == {e.path for e in again.entries if not e.kept} | {"manifest.json"}
    assert {"monitoring/rules.yml", "topology.svg", "inventory.yaml"}.isdisjoint(rewritten)
    assert "cabling.csv" in rewritten
    # A cable's length is no part of the fabric's topology: monitoring/ and bandwidth-tests/ are kept by their
    # key, not rendered again.
    own = [e for e in again.entries if e.path.startswith(("monitoring/", "bandwidth-tests/"))]
    assert own and all(e.kept for e in own)
    assert again.inputs["monitoring/"] == again.inputs["bandwidth-tests/"]
    pod = next(sw.pod for sw in new.switches if sw.name == leaf)
    written = {e.path for e in again.entries if not e.kept and e.kind == "plan-part"}
    assert written == {f"plan/pod-{pod:02d}.jsonl"}


@pytest.mark.parametrize("jobs", JOBS)
def test_a_device_file_edited_since_is_rendered_again(tmp_path: Path, jobs: int) -> None:
    plan = _plan(tmp_path, _pod32())
    out = tmp_path / "out"
    _render(plan, out, jobs)
    rendered = _tree(out)
    host = plan.hosts[3].name
    (out / f"hosts/{host}.nccl.env").write_text("NCCL_IB_HCA=mlx5_0\n")  # edited by hand
    (out / "switches/rack3-b.nvue.yaml").chmod(0o600)
    (out / "cabling.csv").unlink()
    again = _render(plan, out, jobs)
    assert set(again.rendered) == {host, "rack3-b"}
    assert _tree(out) == rendered


def test_other_code_or_another_form_renders_every_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan(tmp_path, _pod32())
    out = tmp_path / "out"
    _render(plan, out, 2)
    everything = _names(plan, lambda d: True)
    monkeypatch.setattr(input_keys, "code_fingerprint", lambda: "another build of rocefab")
    assert set(_render(plan, out, 2).rendered) == everything
    cumulus = _names(plan, lambda d: getattr(d, "platform", "") == "cumulus")
    with_commands = _render(plan, out, 2, leave_out=frozenset())
    assert set(with_commands.rendered) == everything  # the kinds left out are part of every key
    assert cumulus and {f"switches/{name}.nv-set.txt" for name in cumulus} <= {e.path for e in with_commands.entries}
    fresh = tmp_path / "fresh"
    _render(plan, fresh, 2, leave_out=frozenset())
    assert _tree(out) == _tree(fresh)


def test_an_interrupted_render_leaves_no_keys_behind(tmp_path: Path) -> None:
    """The keys are written with the final manifest only: a render stopped before it finished leaves a manifest
    without them, and the next render renders every device."""
    plan = _plan(tmp_path, _pod32())
    out = tmp_path / "out"
    _render(plan, out, 1)

    def failing() -> list[Any]:
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        render_to_folder(plan, out, jobs=1, checks=failing)
    manifest = (out / "manifest.json").read_text(encoding="utf-8")
    assert '"inputs"' in manifest  # the failed render published nothing: the previous manifest stands
    (out / "manifest.json").write_text(manifest.replace('"inputs"', '"inputs-of-another-render"'))
    assert len(_render(plan, out, 1).rendered) == len(plan.switches) + len(plan.hosts)


def test_the_device_view_holds_no_device_and_no_intent_hash() -> None:
    plan = check_file(INTENTS / "pod32.yaml", TEST_VERSION).plan
    assert plan is not None
    view = input_keys.device_view(plan)
    assert (view.switches, view.hosts, view.links, view.source.intent_sha256) == ((), (), (), "")


_KEYS = """
import sys
from rocefab.renderers import input_keys
from rocefab.renderers.pipeline import check_file
plan = check_file(sys.argv[1], "0").plan
base = input_keys.render_base(input_keys.device_view(plan), frozenset({"nvue-commands"}))
print(*(input_keys.device_keys(base, d) for d in (*plan.switches, *plan.hosts)))
print(input_keys.links_digest(plan.links), input_keys.links_cables_digest(plan.links))
"""


def test_keys_are_the_same_in_every_process() -> None:
    """No key may depend on what differs between processes (string hashing, hence set order)."""
    import subprocess
    import sys

    runs = {subprocess.run([sys.executable, "-c", _KEYS, str(INTENTS / "pod32.yaml")], check=True, text=True,
                           capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(runs) == 1


def test_the_code_fingerprint_covers_every_file_but_bytecode(tmp_path: Path) -> None:
    (tmp_path / "templates" / "eos").mkdir(parents=True)
    (tmp_path / "models").mkdir()
    template = tmp_path / "templates" / "eos" / "qos.j2"
    template.write_text("priority-flow-control priority 3 no-drop\n")
    (tmp_path / "models" / "catalogue.yaml").write_text("SN5600: {}\n")
    (tmp_path / "linked").symlink_to(tmp_path / "models")
    first = input_keys.tree_fingerprint(tmp_path, "3.11")
    assert input_keys.tree_fingerprint(tmp_path, "3.12") != first, "another Python or library release"
    (tmp_path / "models" / "__pycache__").mkdir()
    (tmp_path / "models" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"bytecode")
    assert input_keys.tree_fingerprint(tmp_path, "3.11") == first
    template.write_text("priority-flow-control priority 4 no-drop\n")
    assert input_keys.tree_fingerprint(tmp_path, "3.11") != first, "a template"
    template.write_text("priority-flow-control priority 3 no-drop\n")
    (tmp_path / "models" / "catalogue.yaml").rename(tmp_path / "models" / "catalog.yaml")
    assert input_keys.tree_fingerprint(tmp_path, "3.11") != first, "a file renamed (seen also through the link)"
