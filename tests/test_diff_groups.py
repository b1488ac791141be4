"""One review per unique change (deploy/diff_groups.py): what is abstracted, what is not, and a fabric-wide change
on the 1,024-node rail example read as a handful of groups."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from rocefab.deploy import unified
from rocefab.deploy.diff_groups import abstract_line, group_diffs, names_pattern
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent


def test_device_values_are_set_aside_and_what_changes_is_kept() -> None:
    names = names_pattern(["leaf1-a", "leaf1-b", "spine1"])
    a = abstract_line("+   description spine1 Ethernet1/1", names)
    assert a == abstract_line("+   description leaf1-b swp7", names) == "+   description <text>"
    assert abstract_line("+hostname leaf1-a", names) == "+hostname <device>"
    assert abstract_line("+router bgp 65101", names) == abstract_line("+router bgp 4200000001", names)
    assert abstract_line("+   neighbor fe80::1%swp1 remote-as 65000", names).count("<") >= 2
    # values that are the change itself stay
    for line in ("+   random-detect minimum-threshold 950 kbytes", "+qos map dscp 24 to traffic-class 3", "+vlan 101",
                 "+  mtu 9216", "+ntp server 192.0.2.1"):
        assert any(ch.isdigit() for ch in abstract_line(line, names)), line
    assert abstract_line("+  mtu 9216", names) != abstract_line("+  mtu 9214", names)
    assert abstract_line("+ntp server 192.0.2.1", names) == "+ntp server <ipv4>"  # an address: set aside


def test_devices_that_change_differently_are_never_merged() -> None:
    head = "--- {0} (running)\n+++ {0} (candidate)\n@@ -1 +1 @@\n"
    diffs = [("a", "eos", head.format("a") + "-  mtu 1500\n+  mtu 9214"),
             ("b", "eos", head.format("b") + "-  mtu 1500\n+  mtu 9214"),
             ("c", "eos", head.format("c") + "-  mtu 1500\n+  mtu 9000"),
             ("d", "nxos", head.format("d") + "-  mtu 1500\n+  mtu 9214"),
             ("e", "eos", "")]
    groups = group_diffs(diffs, "abcde")
    assert [(g.kind, g.members) for g in groups] == [("eos", ("a", "b")), ("eos", ("c",)), ("nxos", ("d",))]


def test_a_fabric_wide_ecn_change_on_the_rail_example_is_one_group() -> None:
    """cluster1024-rail (192 NVUE switches), ECN moved from the Spectrum profile to the intent's thresholds: every
    switch's nv set list changes alike, whatever its ports and addresses."""
    def nv_sets(intent: dict, tmp: Path) -> dict[str, list[str]]:
        path = tmp / "cluster1024-rail.yaml"
        path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
        checked = check_file(path, "0.0.0-test")
        assert checked.plan is not None
        return {f.device: f.content.splitlines() for f in render_fabric(checked.plan)
                if f.path.endswith(".nv-set.txt")}

    import tempfile

    base = yaml.safe_load((ROOT / "intents" / "cluster1024-rail.yaml").read_text(encoding="utf-8"))
    changed = copy.deepcopy(base)
    changed.setdefault("qos", {})["ecn"] = {"min_threshold_kbytes": 200, "max_threshold_kbytes": 1200,
                                            "max_mark_percent": 50}
    with tempfile.TemporaryDirectory() as folder:
        before, after = nv_sets(base, Path(folder)), nv_sets(changed, Path(folder))
    diffs = [(name, "cumulus", unified.from_lines(name, before[name], after[name])) for name in before]
    groups = group_diffs(diffs, before)
    assert len(before) == 192 and len(groups) == 1 and len(groups[0].members) == 192
    assert any("min-threshold" in line for line in groups[0].key), groups[0].key
