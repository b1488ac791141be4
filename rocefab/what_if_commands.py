"""`rocefab what-if`: what failing devices, links, a rail or a pod would do to the planned fabric, before it
happens (renderers/failure_impact.py computes; this prints)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, err, out
from rocefab.renderers.failure_impact import (
    FabricIndex,
    FailureSpecError,
    Impact,
    SwitchImpact,
    each_single_failure,
    evaluate,
)

SHOWN_ROWS = 40  # table rows before "and N more" (--json has them all)


def _few(names: Sequence[str], shown: int = 6) -> str:
    return ", ".join(names) if len(names) <= shown + 1 else f"{', '.join(names[:shown])} and {len(names) - shown} more"


def _pair(value: tuple[int, int] | None) -> str:
    return "-" if value is None else f"{value[1]}/{value[0]}"


def _ratio(value: float) -> str:
    return f"{value:g}:1"


def _oversubscription(s: SwitchImpact) -> str:
    planned, now = s.oversubscription
    if planned is None:
        return "-"
    if now is None:  # no uplink that leads beyond: cut off, or (a spine cut from above) its pod only
        return f"{'cut off' if s.cut_off else 'its pod only'} ({_ratio(planned)})"
    return f"{_ratio(now)} ({_ratio(planned)})"


def impact_json(impact: Impact) -> dict[str, Any]:
    return {
        "failed": {"devices": list(impact.failed_devices), "links": list(impact.failed_links)},
        "switches": [{"name": s.name, "role": s.role,
                      "ecmp_up": None if s.ecmp_up is None else {"planned": s.ecmp_up[0], "now": s.ecmp_up[1]},
                      "uppers": None if s.uppers is None else {"planned": s.uppers[0], "now": s.uppers[1]},
                      "ecmp_down_min": None if s.ecmp_down_min is None else {"planned": s.ecmp_down_min[0],
                                                                             "now": s.ecmp_down_min[1]},
                      "lowers_lost": list(s.lowers_lost),
                      "oversubscription": {"planned": s.oversubscription[0], "now": s.oversubscription[1]},
                      "peer_lost": s.peer_lost, "cut_off": s.cut_off, "pfc_storm_risk": list(s.pfc_storm_risk)}
                     for s in impact.switches],
        "unchanged_switches": impact.unchanged_switches,
        "hosts": [{"name": h.host, "path": h.path, "planned": h.paths[0], "now": h.paths[1]} for h in impact.hosts],
        "summary": _summary(impact),
    }


def _summary(impact: Impact) -> dict[str, Any]:
    return {"switches_changed": len(impact.switches), "hosts_cut_off": len(impact.hosts_cut_off),
            "hosts_degraded": len(impact.hosts_degraded), "rails_hit": impact.rails_hit,
            "pfc_storm_risk": len(impact.storm_risk),
            "worst_oversubscription": _worst(impact), "switches_isolated": list(_isolated(impact))}


def _isolated(impact: Impact) -> tuple[str, ...]:
    """Surviving switches left without an uplink to a surviving switch."""
    return tuple(s.name for s in impact.switches if s.cut_off)


def _worst(impact: Impact) -> float | None:
    """The highest oversubscription a surviving switch with an uplink left is left with (None: none changes)."""
    return max((now for s in impact.switches if (now := s.oversubscription[1]) is not None
                and s.oversubscription[0] is not None), default=None)


def print_impact(impact: Impact) -> None:
    what = ", ".join([*impact.failed_devices, *impact.failed_links])
    out.print(f"what-if: failing {what} ({len(impact.failed_devices)} device(s), {len(impact.failed_links)} "
              "link(s))", markup=False, soft_wrap=True)
    table = Table(title=f"{len(impact.switches)} surviving switch(es) change; {impact.unchanged_switches} as planned",
                  title_justify="left")
    for column in ("switch", "role", "ECMP up", "uppers", "ECMP down (min)", "lowers lost", "oversub. (planned)",
                   "notes"):
        table.add_column(column, justify="right" if column.startswith(("ECMP", "uppers")) else "left")
    for s in impact.switches[:SHOWN_ROWS]:
        notes = [*(["peer lost"] if s.peer_lost else []), *(["PFC-storm risk"] if s.pfc_storm_risk else [])]
        table.add_row(s.name, s.role, _pair(s.ecmp_up), _pair(s.uppers), _pair(s.ecmp_down_min),
                      _few(s.lowers_lost, 3) or "-", _oversubscription(s), "; ".join(notes))
    if impact.switches:
        out.print(table)
    if len(impact.switches) > SHOWN_ROWS:
        out.print(f"... and {len(impact.switches) - SHOWN_ROWS} more switch(es) (--json lists them all)")
    cut, degraded = impact.hosts_cut_off, impact.hosts_degraded
    out.print(f"hosts: {len(cut)} lose a bond or NIC entirely{': ' + _few(cut) if cut else ''}; {len(degraded)} keep "
              f"each on fewer members{': ' + _few(degraded) if degraded else ''}", markup=False, soft_wrap=True)
    if impact.rails_hit:
        out.print("rails cut: " + ", ".join(f"{rail}: {n} host(s)" for rail, n in impact.rails_hit.items()),
                  markup=False, soft_wrap=True)
    risky = [s for s in impact.switches if s.pfc_storm_risk]
    if risky:
        out.print(f"PFC-storm risk on {len(risky)} switch(es): {_few([s.name for s in risky])}: "
                  f"{risky[0].pfc_storm_risk[0]} (the rule and its source: rocefab what-if --help)",
                  markup=False, soft_wrap=True)


def _severity(row: tuple[str, Impact]) -> tuple[int, int, int, int, float, str]:
    impact = row[1]
    return (-len(impact.hosts_cut_off), -len(impact.hosts_degraded), -len(_isolated(impact)),
            -len(impact.storm_risk), -(_worst(impact) or 0.0), row[0])


def print_each(rows: list[tuple[str, Impact]]) -> None:
    ranked = sorted(rows, key=_severity)
    table = Table(title=f"every single-switch failure ({len(rows)}), worst first", title_justify="left")
    for column in ("fails", "switches changed", "hosts cut off", "hosts degraded", "switches isolated",
                   "PFC-storm risk", "worst oversub."):
        table.add_column(column, justify="left" if column == "fails" else "right")
    for name, impact in ranked[:SHOWN_ROWS]:
        worst = _worst(impact)
        table.add_row(name, str(len(impact.switches)), str(len(impact.hosts_cut_off)),
                      str(len(impact.hosts_degraded)), str(len(_isolated(impact))), str(len(impact.storm_risk)),
                      "-" if worst is None else _ratio(worst))
    out.print(table)
    if len(rows) > SHOWN_ROWS:
        out.print(f"... and {len(rows) - SHOWN_ROWS} more (--json lists them all)")


def what_if(
    intent: Annotated[Path, typer.Argument(help="intent YAML file", show_default=False)],
    fail: Annotated[list[str] | None, typer.Option(
        "--fail", "-f", help="what fails: a device (spine3), a cable by either end (leaf7-a:Ethernet1/1, "
                             "gpu001:ens1f0np0), every leaf of a rail (rail:3) or every switch of a pod (pod:2); "
                             "repeat for several")] = None,
    each: Annotated[bool, typer.Option("--each", help="every switch failing on its own, one at a time, worst "
                                                      "first")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
) -> None:
    """What a failure would do to the planned fabric: per surviving switch its ECMP width up and down against the
    plan, the switches of the tier above it still reaches and its oversubscription; the hosts whose bonds or rail
    NICs lose a member or every path; and a PFC-storm risk flag. The flag follows Juniper's validated AI data
    center designs, which recommend at least four spines because with two, dual failures combined with congestion
    left the fabric susceptible to PFC storms: a switch the failure leaves oversubscribed beyond its plan and beyond
    1:1, reaching fewer than four switches of the tier above, is flagged. Exit 0, 1 when a host loses a bond or NIC
    entirely or a switch is flagged (with --each: by any single failure), 2 bad input."""
    from rocefab.pipeline_commands import checked_plan

    if not fail and not each:
        err.print("say what fails: --fail DEVICE|DEVICE:PORT|rail:N|pod:N (repeatable), or --each", markup=False)
        raise typer.Exit(EXIT_INPUT)
    plan = checked_plan(intent)
    index = FabricIndex(plan)
    if each:
        started = time.perf_counter()
        rows = each_single_failure(index)
        err.print(f"evaluated {len(rows)} single-switch failures in {time.perf_counter() - started:.2f} s",
                  markup=False)
        if as_json:
            json.dump({"each": [{"fails": name, **_summary(impact)} for name, impact in rows]}, sys.stdout)
            sys.stdout.write("\n")
        else:
            print_each(rows)
        hurt = any(impact.hosts_cut_off or impact.storm_risk for _, impact in rows)
        raise typer.Exit(EXIT_FINDINGS if hurt else EXIT_OK)
    try:
        devices, links = index.resolve(fail or [])
    except FailureSpecError as exc:
        err.print(f"--fail {exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    impact = evaluate(index, devices, links)
    if as_json:
        json.dump(impact_json(impact), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_impact(impact)
    raise typer.Exit(EXIT_FINDINGS if impact.hosts_cut_off or impact.storm_risk else EXIT_OK)
