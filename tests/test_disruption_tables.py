"""The platforms' disruption tables: every rule has a source and compiles, a line nobody classed is never taken as
hitless, each unit's reload sections class as reload, and a fabric-wide change on pod32 (every platform) is classed
as the vendors document it."""

from __future__ import annotations

import copy
import re
import tempfile
from pathlib import Path

import pytest
import yaml

from rocefab.deploy import unified
from rocefab.deploy.diff_groups import group_diffs
from rocefab.deploy.disruption import classify, classify_path
from rocefab.platforms import unit
from rocefab.platforms.disruption import Disruption
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import device_files

ROOT = Path(__file__).resolve().parents[1]
KINDS = ["eos", "nxos", "cumulus", "host"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_rule_names_its_source_and_an_unclassed_line_is_not_hitless(kind: str) -> None:
    table = unit(kind).disruption
    assert table.rules and table.unknown is not Disruption.HITLESS
    for rule in table.rules:
        re.compile(rule.pattern)
        assert len(rule.source) > 10, rule


@pytest.mark.parametrize("kind", ["eos", "nxos", "cumulus"])
def test_the_reload_gates_sections_class_as_reload(kind: str) -> None:
    spec = unit(kind).spec
    assert spec is not None
    for section in spec.reload_sections:
        assert classify_path(section, unit(kind).disruption)[0] is Disruption.RELOAD
        assert classify_path(f"{section} > mode per-packet", unit(kind).disruption)[0] is Disruption.RELOAD


# Reload-class lines the gate does not hold back, and why: the gate stages every switch of a platform that has
# reload sections before each apply (a second session per switch), and rocefab renders the model EOS defaults to,
# so only a switch someone moved to ribd by hand meets this line: its review shows `reload`.
NOT_GATED = {"eos": ("^service routing protocols model ribd",)}


@pytest.mark.parametrize("kind", ["eos", "nxos", "cumulus"])
def test_every_reload_class_section_is_held_back_by_the_reload_gate(kind: str) -> None:
    """The other way round: a top-level section the table classes as needing a reload is one the reload gate holds
    back (apply pushes it only with --accept-reload, in a step of its own), so the class shown in the review and
    what apply does agree."""
    spec = unit(kind).spec
    assert spec is not None
    for rule in unit(kind).disruption.rules:
        if rule.disruption is Disruption.RELOAD and rule.pattern not in NOT_GATED.get(kind, ()):
            section = rule.pattern.removeprefix("^")
            assert re.fullmatch(r"[a-z][a-z -]*", section), f"{kind}: a reload rule the gate cannot name: {rule}"
            assert section in spec.reload_sections, f"{kind}: {section!r} is classed reload but not gated"


def _candidates(intent: dict[str, object], folder: Path) -> dict[str, tuple[str, list[str]]]:
    path = folder / "intent.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None
    kinds = {s.name: s.platform for s in checked.plan.switches}
    return {f.device: (kinds[f.device], f.content.splitlines())
            for f in device_files(checked.plan, range(len(checked.plan.switches)))
            if f.path.endswith((".cfg", ".nv-set.txt"))}


def _review(change: dict[str, object]) -> dict[str, set[str]]:
    """kind -> the disruption classes of its groups, for pod32 with `change` merged into its qos section."""
    base = yaml.safe_load((ROOT / "intents" / "pod32.yaml").read_text(encoding="utf-8"))
    changed = copy.deepcopy(base)
    changed.setdefault("qos", {}).update(change)
    with tempfile.TemporaryDirectory() as folder:
        before, after = _candidates(base, Path(folder)), _candidates(changed, Path(folder))
    diffs = [(name, kind, unified.from_lines(name, lines, after[name][1], indented=kind != "cumulus"))
             for name, (kind, lines) in before.items()]
    out: dict[str, set[str]] = {}
    for group in group_diffs(diffs, before):
        diff = next(d for n, _, d in diffs if n == group.example)
        out.setdefault(group.kind, set()).add(classify(diff, unit(group.kind).disruption).disruption.value)
    return out


def test_an_ecn_retune_is_hitless_on_nvue_and_reprograms_nxos_queuing() -> None:
    """NVUE keeps ECN in qos_features.conf (a reload that leaves forwarding alone); NX-OS configures it in the
    queuing policy, whose changes Cisco documents as disruptive; EOS has no source: cautious."""
    classes = _review({"ecn": {"min_threshold_kbytes": 200, "max_threshold_kbytes": 1200, "max_mark_percent": 50}})
    assert classes == {"cumulus": {"hitless"}, "nxos": {"qos-reprogram"}, "eos": {"qos-reprogram"}}


def test_moving_the_lossless_priority_reprograms_buffers_everywhere() -> None:
    """PFC moves to another priority: NVUE's PFC and RoCE settings re-program the buffers (documented), NX-OS's
    queuing and network-qos too; EOS cautious."""
    classes = _review({"roce": {"dscp": 24, "priority": 4}})
    assert classes == {"cumulus": {"qos-reprogram"}, "nxos": {"qos-reprogram"}, "eos": {"qos-reprogram"}}


def test_a_pfc_watchdog_timer_is_hitless_on_nvue() -> None:
    """NVUE's PFC watchdog is in qos_features.conf (a reload that leaves forwarding alone); NX-OS renders the
    platform's own timers (nothing changes there); EOS cautious."""
    assert _review({"pfc": {"watchdog": {"polling_interval_ms": 200}}}) == {"cumulus": {"hitless"},
                                                                            "eos": {"qos-reprogram"}}
