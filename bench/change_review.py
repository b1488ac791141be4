"""Benchmark: the review of a fabric-wide change, without devices. The example fabric is planned and its switches
rendered twice, as they are and with the ECN thresholds changed (what a QoS retune looks like), and each switch's
diff is made, grouped by what it changes (deploy/diff_groups.py) and classed by disruption (deploy/disruption.py)
as `rocefab diff` does with the diffs the devices return. The candidates stand for the running configs, so what is
timed is rocefab's own share of a dry run of that fabric. Run from the top of the checkout:

    python bench/change_review.py cluster1024-rail --runs 3
    python bench/change_review.py cluster12288-rail --runs 3    # the 98,304-GPU fabric
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench import example_intent  # bench/ is on sys.path as the script's folder
from rocefab.deploy import unified
from rocefab.deploy.diff_groups import group_diffs
from rocefab.deploy.disruption import classify, fabric_total
from rocefab.platforms import unit
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import device_files

ECN = {"min_threshold_kbytes": 200, "max_threshold_kbytes": 1200, "max_mark_percent": 50}


def _plan(intent: dict[str, Any], folder: Path) -> FabricPlan:
    path = folder / "intent.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "bench")
    assert checked.plan is not None, [str(f) for f in checked.findings if f.is_error]
    return checked.plan


def _candidates(plan: FabricPlan) -> dict[str, tuple[str, list[str]]]:
    """Each switch's pushed candidate as lines: NVUE's `nv set` list, EOS's and NX-OS's config."""
    out: dict[str, tuple[str, list[str]]] = {}
    kinds = {s.name: s.platform for s in plan.switches}
    for f in device_files(plan, range(len(plan.switches))):
        if f.path.endswith((".nv-set.txt", ".cfg")):
            out[f.device] = (kinds[f.device], f.content.splitlines())
    return out


def run(name: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        bundled = Path(__file__).resolve().parent.parent / "intents" / f"{name}.yaml"
        path = bundled if bundled.is_file() else example_intent(name, Path(tmp))[0]
        base = yaml.safe_load(path.read_text(encoding="utf-8"))
        changed = copy.deepcopy(base)
        changed.setdefault("qos", {})["ecn"] = ECN
        started = time.perf_counter()
        before, after = _candidates(_plan(base, Path(tmp))), _candidates(_plan(changed, Path(tmp)))
        rendered = time.perf_counter()
        diffs = [(device, kind, unified.from_lines(device, lines, after[device][1], indented=kind != "cumulus"))
                 for device, (kind, lines) in before.items()]
        diffed = time.perf_counter()
        groups = group_diffs(diffs, before)
        grouped = time.perf_counter()
        classes = {device: classify(diff, unit(kind).disruption) for device, kind, diff in diffs if diff}
        classed = time.perf_counter()
    return {"example": name, "switches": len(before), "changing": len(classes), "groups": [
        {"kind": g.kind, "members": len(g.members), "example": g.example,
         "disruption": classes[g.example].disruption.value} for g in groups],
        "fabric_total": fabric_total([c.disruption for c in classes.values()]),
        "plan_and_render_twice_s": round(rendered - started, 3), "diff_s": round(diffed - rendered, 3),
        "group_s": round(grouped - diffed, 3), "classify_s": round(classed - grouped, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = [run(args.example) for _ in range(args.runs)]
    last = rows[-1]
    summary = {key: statistics.median(r[key] for r in rows) for key in
               ("plan_and_render_twice_s", "diff_s", "group_s", "classify_s")}
    print(f"{args.example}: {last['changing']} of {last['switches']} switches change, in {len(last['groups'])} "
          f"group(s): " + "; ".join(f"{g['members']} {g['kind']} ({g['disruption']})" for g in last["groups"]),
          flush=True)
    print("medians of " + str(args.runs) + " runs: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.items()))
    print(json.dumps({"runs": args.runs, "medians": summary, "last": last}, indent=1))


if __name__ == "__main__":
    main()
