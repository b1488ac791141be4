"""plan/: the parts hold the plan `rocefab plan --json` prints, record for record, each device and link once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import example_plan

from rocefab.renderers.fanout import render_to_folder
from rocefab.renderers.plan import plan_to_json
from rocefab.renderers.plan_parts import INDEX, part_path


@pytest.mark.parametrize("example", ["lab", "tor128-3tier", "cluster1024-rail"])
def test_the_parts_are_the_plan(tmp_path: Path, example: str) -> None:
    plan = example_plan(example)
    render_to_folder(plan, tmp_path, jobs=2, min_devices=1)
    whole = json.loads(plan_to_json(plan))
    index = json.loads((tmp_path / INDEX).read_text(encoding="utf-8"))
    assert {k: v for k, v in index.items() if k != "parts"} == {
        k: v for k, v in whole.items() if k not in ("switches", "hosts", "links")}
    found: dict[str, list[dict[str, object]]] = {"switch": [], "host": [], "link": []}
    pods = {sw["name"]: sw["pod"] for sw in whole["switches"]}
    for listed in index["parts"]:
        lines = (tmp_path / listed["path"]).read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        assert all(len(r) == 1 for r in records)
        kinds = [next(iter(r)) for r in records]
        assert kinds == sorted(kinds, key=["switch", "host", "link"].index), "switches, then hosts, then links"
        mine = {kind: [r[kind] for r in records if kind in r] for kind in found}
        assert [len(mine["switch"]), len(mine["host"]), len(mine["link"])] == \
            [listed["switches"], listed["hosts"], listed["links"]]
        assert listed["path"] == part_path(listed["pod"])
        assert all(sw["pod"] == listed["pod"] for sw in mine["switch"])
        for link in mine["link"]:
            assert pods.get(link["a"]["device"]) == listed["pod"] or link["a"]["device"] not in pods
        for kind in found:
            found[kind] += mine[kind]
    assert sorted(p.name for p in (tmp_path / "plan").iterdir()) == sorted(
        [Path(INDEX).name, *(Path(p["path"]).name for p in index["parts"])])

    def ordered(records: list[dict[str, object]]) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True) for r in records)

    assert ordered(found["switch"]) == ordered(whole["switches"])
    assert ordered(found["host"]) == ordered(whole["hosts"])
    assert ordered(found["link"]) == ordered(whole["links"])
