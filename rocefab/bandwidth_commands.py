"""`rocefab bandwidth check`: judge perftest and nccl-tests output against the plan's bandwidth targets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, command_group, err, out

bandwidth_app = command_group(help="The bandwidth acceptance tests of bandwidth-tests/ (perftest, nccl-tests).",
                            no_args_is_help=True)


def _expected(plan: Path) -> dict[str, Any]:
    """The targets from a render folder, an expected.json, or an intent planned here and now."""
    from rocefab.bandwidth.judge import ExpectedError, load_expected

    candidates = [plan / "bandwidth-tests" / "expected.json", plan / "expected.json"] if plan.is_dir() else [plan]
    for candidate in candidates:
        if candidate.is_file() and candidate.suffix == ".json":
            try:
                return load_expected(candidate)
            except ExpectedError as exc:
                err.print(str(exc), markup=False)
                raise typer.Exit(EXIT_INPUT) from None
    if plan.is_dir():
        err.print(f"{plan}: no bandwidth-tests/expected.json (render the intent first, or give the intent)",
                  markup=False)
        raise typer.Exit(EXIT_INPUT)
    from rocefab.pipeline_commands import checked_plan
    from rocefab.renderers.bandwidth import expected_document
    from rocefab.renderers.bandwidth_pairs import bandwidth_plan
    from rocefab.renderers.jsontext import dumps_outline

    fabric = checked_plan(plan)
    # printed and read back, so an intent and its rendered expected.json are judged from the very same document
    document: dict[str, Any] = json.loads(dumps_outline(expected_document(fabric, bandwidth_plan(fabric)), tight=True))
    return document


def _files(paths: list[Path]) -> list[Path]:
    """The files given, and every file under a folder given (run-perftest.sh writes one folder per round)."""
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    return files


@bandwidth_app.command()
def check(
    results: Annotated[list[Path], typer.Argument(help="ib_write_bw client outputs and all_reduce_perf outputs, "
                                                       "or folders of them (run-perftest.sh's results folder)",
                                                  show_default=False)],
    plan: Annotated[Path, typer.Option("--plan", help="the render folder, its bandwidth-tests/expected.json, "
                                                      "or the intent YAML")],
    rounds: Annotated[list[int] | None, typer.Option("--round", help="judge only these perftest rounds "
                                                                     "(repeat the option)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the verdicts as JSON")] = False,
) -> None:
    """Judge ib_write_bw and all_reduce_perf results against the plan: a line per pair and run with its
    shortfall. Exit 0 all pass, 1 a failure or a planned pair (or NCCL run) without a result, 2 unreadable
    input. Pairs are judged when perftest results are given, the NCCL run when nccl-tests output is."""
    from rocefab.bandwidth.judge import judge
    from rocefab.bandwidth.parse import parse_file
    from rocefab.bandwidth.report import as_json as judgement_json
    from rocefab.bandwidth.report import text_lines
    from rocefab.bandwidth.results import NcclResult, PerftestResult, ResultFileError

    expected = _expected(plan)
    parsed: list[PerftestResult | NcclResult] = []
    errors: list[str] = []
    files = _files(results)
    for file in files:
        try:
            result = parse_file(file)
        except ResultFileError as exc:
            errors.append(str(exc))
            continue
        if result is not None:
            parsed.append(result)
    if not files:
        errors.append("no result files in " + ", ".join(map(str, results)))
    if errors:
        for error in errors:
            err.print(error, markup=False)
        err.print(f"{len(errors)} unreadable result file(s); nothing was judged", markup=False)
        raise typer.Exit(EXIT_INPUT)
    judgement = judge(expected, parsed, set(rounds) if rounds else None)
    if as_json:
        sys.stdout.write(json.dumps(judgement_json(judgement), indent=2) + "\n")
    else:
        for line in text_lines(judgement):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    if not judgement.ok:
        raise typer.Exit(EXIT_FINDINGS)
