"""The `rocefab` command line: parse arguments, call the layers, print. Decides nothing itself."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from rocefab import (
    __version__,
    deploy_commands,
    drain_commands,
    starter_commands,
    verify_commands,
    what_if_commands,
)
from rocefab.bandwidth_commands import bandwidth_app
from rocefab.collector import collector_paused
from rocefab.console import EXIT_INPUT, command_group, err, out
from rocefab.inventory_commands import inventory_app
from rocefab.lab_commands import lab_app
from rocefab.models.findings import Finding, Severity, dotted
from rocefab.models.intent import Intent
from rocefab.pipeline_commands import check, report
from rocefab.renderers.fanout import render_to_folder
from rocefab.renderers.headroom_rows import headroom_rows
from rocefab.renderers.jsontext import write_outline
from rocefab.renderers.output import OutputError, source_of
from rocefab.renderers.pipeline import Checked, finish_checks
from rocefab.renderers.plan import FabricPlan, PortRole
from rocefab.renderers.summary import bandwidth, ecn_profiles, fabric_summary

app = command_group(
    help="Declarative lossless RoCEv2 fabrics: intent YAML in, switch configs, host scripts and NCCL settings out.",
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish and PowerShell
)

IntentArg = Annotated[Path, typer.Argument(help="intent YAML file", show_default=False)]


def _print_version(value: bool) -> None:
    if value:
        out.print(f"rocefab {__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", "-V", is_eager=True, callback=_print_version,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Declarative lossless RoCEv2 fabrics: intent YAML in, switch configs, host scripts and NCCL settings out.
    Exit codes: 0 done, 1 findings or failed checks, 2 bad input, 3 a device's state is unknown (apply)."""


def _validated(intent: Path) -> tuple[int, dict[str, Any]]:
    """Check one intent (findings printed on stderr); its exit code and a record for --json."""
    try:
        checked = check(intent)
    except typer.Exit as stop:
        return stop.exit_code, {"file": str(intent), "valid": False, "exit_code": stop.exit_code}
    assert checked.plan is not None
    plan = checked.plan
    source = checked.loaded.source
    findings = [
        {"severity": f.severity.value, "code": f.code, "field": dotted(f.path), "line": source.locate(f.path).line,
         "col": source.locate(f.path).col, "message": f.message, "hint": f.hint}
        for f in checked.findings
    ]
    counts = Counter(f.severity for f in checked.findings)
    record = {"file": str(intent), "valid": True, "exit_code": 0, "switches": len(plan.switches),
              "hosts": len(plan.hosts), "links": len(plan.links), "warnings": counts[Severity.WARNING],
              "notes": counts[Severity.INFO], "findings": findings}
    return 0, record


@app.command()
def validate(
    intents: Annotated[list[Path], typer.Argument(help="intent YAML files", show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="one JSON document on stdout (findings also on stderr)")
                       ] = False,
) -> None:
    """Check intents: schema, semantics and a full planning pass of each. Exit 0 all valid, 1 findings in
    any, 2 bad input in any (the worst wins)."""
    results = [_validated(intent) for intent in intents]
    if as_json:
        sys.stdout.write(json.dumps({"intents": [record for _, record in results]}, indent=2) + "\n")
    else:
        for _, record in results:
            if record["valid"]:
                out.print(f"{record['file']}: valid - {record['switches']} switches, {record['hosts']} hosts, "
                          f"{record['links']} links ({record['warnings']} warning(s), {record['notes']} note(s))",
                          markup=False)
    worst = max(code for code, _ in results)
    if worst:
        raise typer.Exit(worst)


def _headroom_table(plan: FabricPlan) -> Any:
    """PFC headroom per tier and platform: the worst port's arithmetic and what the config says about it."""
    from rich.table import Table

    table = Table(title="PFC headroom of the no-drop priority (worst port per tier and platform)",
                  title_justify="left")
    # `speed`, `headroom` and `arithmetic` are the neediest port's; `longest cable` is any port's
    for column in ("tier", "platform", "devices", "longest cable", "speed", "headroom", "arithmetic", "rendered as"):
        table.add_column(column, justify="right" if column in ("devices", "headroom") else "left")
    for r in headroom_rows(plan):
        table.add_row(r.role, r.platform, str(r.switches), f"{r.longest_cable_m} m", f"{r.speed_gbps}G",
                      f"{r.headroom_bytes:,} B", r.arithmetic, r.rendered_as)
    return table


def _load_balancing_table(plan: FabricPlan) -> Any:
    """How each group of switches spreads RoCE and whether changing that needs a reload."""
    from rich.table import Table

    from rocefab.renderers.load_balancing_rows import load_balancing_rows

    table = Table(title="load balancing of RoCE", title_justify="left")
    for column in ("tier", "platform", "model", "switches", "ECMP hash", "dynamic", "change needs a reload"):
        table.add_column(column, justify="right" if column == "switches" else "left")
    for r in load_balancing_rows(plan):
        table.add_row(r.role, r.platform, r.model, str(r.switches), r.hashing, r.dynamic, r.reload)
    return table


def _summary(plan: FabricPlan, devices: bool) -> None:
    from rich.table import Table  # here, not at the top: only `plan` draws tables, and every command imports this

    summary = fabric_summary(plan)
    tiers = Table(title=f"fabric {plan.source.fabric}: {summary.hosts} hosts, {summary.gpu_nics} NIC ports",
                  title_justify="left")
    for column in ("tier", "model", "switches", "down ports", "up ports", "peer ports", "oversubscription"):
        tiers.add_column(column, justify="left" if column in ("tier", "model") else "right")
    for t in summary.tiers:
        tiers.add_row(t.role, ", ".join(t.models), str(t.count), str(t.ports_down), str(t.ports_up),
                      str(t.ports_peer), t.oversubscription)
    out.print(tiers)
    cables = ", ".join(f"{c.count} {c.kind} at {c.speed_gbps}G" for c in summary.cables)
    rails = f", {summary.rails} rails" if summary.rails else ""
    layout = f"{len(summary.tiers)} tier(s), {summary.pods} pod(s){rails}"
    out.print(f"{layout}; cables: {cables}")
    out.print(f"bisection {summary.bisection_gbps / 1000:g} Tb/s; at most {summary.max_switch_hops} switch hop(s) "
              "between two hosts")
    q = plan.qos
    out.print(
        f"RoCE DSCP {q.roce_dscp} -> priority {q.roce_priority} (lossless, PFC, ECN {ecn_profiles(plan)}); "
        f"CNP DSCP {q.cnp_dscp} -> "
        f"priority {q.cnp_priority} (strict); hosts send ToS {q.roce_tos}"
    )
    out.print(_headroom_table(plan))
    out.print(_load_balancing_table(plan))
    if not devices:
        return
    table = Table(title="switches", title_justify="left")
    numeric = ("ASN", "host", "uplink", "down", "peer", "oversub")
    for column in ("switch", "role", "model", "platform", "ASN", "loopback", *numeric[1:]):
        table.add_column(column, justify="right" if column in numeric else "left")
    for sw in plan.switches:
        roles = Counter(p.role for p in sw.ports)
        table.add_row(
            sw.name, sw.role.value, sw.model, f"{sw.platform} {sw.release}", str(sw.asn), sw.loopback_ipv4,
            str(roles[PortRole.HOST]), str(roles[PortRole.UPLINK]), str(roles[PortRole.DOWNLINK]),
            str(roles[PortRole.PEER_LINK]), bandwidth(sw).oversubscription,
        )
    out.print(table)


@app.command()
def plan(
    intent: IntentArg,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary and the full plan as JSON")] = False,
    devices: Annotated[bool | None, typer.Option("--devices/--no-devices",
                                                  help="list every switch (default: up to 24)")] = None,
) -> None:
    """Resolve an intent to every device, port, link, address, ASN and queue; summarize tiers and cabling."""
    checked = check(intent)
    assert checked.plan is not None
    if as_json:
        document = {"summary": fabric_summary(checked.plan), "plan": checked.plan}
        write_outline(document, sys.stdout.write)  # in pieces: a 98,304-GPU plan is hundreds of megabytes
    else:
        _summary(checked.plan, devices if devices is not None else len(checked.plan.switches) <= 24)


@app.command()
def render(
    intent: IntentArg,
    output: Annotated[Path, typer.Option(
        "-o", "--output", help="output folder: the previous render's files are replaced, anything else there is kept")],
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, max=64,
                                             help="processes rendering at once [default: one per CPU, at most 4]")
                    ] = None,
    also: Annotated[list[str] | None, typer.Option(
        "--with", metavar="KIND",
        help="also write this kind of file, left out unless asked for (nvue-commands: each Cumulus switch's NVUE "
             "document as `nv set` lines)")] = None,
) -> None:
    """Render every switch config, host script and NCCL file, the cabling plan, bill of materials, topology
    diagram, containerlab lab cut, summary and plan into OUTPUT. A failed render changes nothing there; files
    the previous render did not write (a .git, notes) are kept."""
    from rocefab.platforms import on_request_kinds

    optional = on_request_kinds()
    unknown = sorted(set(also or ()) - optional)
    if unknown:
        err.print(f"--with: {', '.join(unknown)}: not a kind rocefab leaves out (those are: "
                  f"{', '.join(sorted(optional))})", markup=False)
        raise typer.Exit(EXIT_INPUT)
    checked = check(intent, plan_checks=False)
    assert checked.plan is not None
    finished: list[Checked] = []  # the checks' outcome, once they have run

    def checks() -> list[Finding]:
        """The plan's own checks, run while the workers render: printed with the intent's findings; an error
        stops the render before anything is published."""
        done = finish_checks(checked)
        finished.append(done)
        report(intent, done)
        return done.findings

    try:
        with collector_paused():  # forked workers inherit the pause
            files = render_to_folder(checked.plan, output, jobs or min(os.cpu_count() or 1, 4),
                                     source=source_of(intent, __version__), checks=checks,
                                     leave_out=optional - set(also or ()))
    except OutputError as exc:
        if not finished:  # refused before the render began: the findings first, as a check alone prints them
            checks()
        err.print(f"{exc}; nothing was written", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    except OSError as exc:  # a full or read-only disk: the render stops in its staging folder, the output is as it was
        where = exc.filename or output
        err.print(f"{where}: cannot write: {exc.strerror or exc}; {output} is as it was before", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    kinds = Counter(f.kind for f in files.entries)
    detail = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    written = sum(not f.kept for f in files.entries)
    kept = f"; {len(files.entries) - written} others were there as rendered" if written < len(files.entries) else ""
    out.print(f"wrote {written} of {len(files.entries)} files to {output} ({detail}) and manifest.json{kept}")
    devices = len(checked.plan.switches) + len(checked.plan.hosts)
    if len(files.rendered) < devices:
        out.print(f"rendered {len(files.rendered)} of {devices} devices; the others' inputs are those their files "
                  f"were rendered from last time (per manifest.json), and the files are as written")
    _done_at_once()


@app.command()
def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="write to a file instead of stdout")] = None,
) -> None:
    """Print the intent JSON Schema, for editor completion and validation."""
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rocefab.invalid/schema/intent-v1.json",
        **Intent.model_json_schema(),
    }
    text = json.dumps(document, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


@app.command()
def version() -> None:
    """Print the rocefab version."""
    out.print(__version__)


app.command()(deploy_commands.diff)
app.command()(deploy_commands.apply)
app.command()(deploy_commands.rollback)
app.command()(verify_commands.verify)
app.command()(verify_commands.doctor)
app.command(name="what-if")(what_if_commands.what_if)
app.command()(drain_commands.drain)
app.command()(drain_commands.undrain)
app.add_typer(lab_app, name="lab")
app.add_typer(bandwidth_app, name="bandwidth")
app.add_typer(inventory_app, name="inventory")
app.command()(starter_commands.init)
app.add_typer(starter_commands.examples_app, name="examples")


_whole_process = False  # set by `main`: this process is the `rocefab` command, not a caller of `app`


def _done_at_once() -> None:
    """End the `rocefab` process here, all written and printed, without freeing the plan and the render's records
    one by one on the way out (millions of objects for a large fabric: time spent on memory the process is
    about to give back whole). A caller of `app` (the tests) returns as usual."""
    if _whole_process:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def main() -> None:
    global _whole_process
    _whole_process = True
    app()
