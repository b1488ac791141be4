"""Holding results against the plan's targets (bandwidth-tests/expected.json): which planned pair or run a
result belongs to, and whether it reached its target. Expected state comes from the plan; this only compares.

A perftest result is matched by the addresses in its GIDs (the client's own is `local`, the server's
`remote`), so files gathered by hand match too; without IPv4-mapped GIDs, by run-perftest.sh's file name
(pair-NNNNN). An all_reduce_perf run is the planned one when its ranks ran on every host of the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocefab.bandwidth.results import NcclResult, PerftestResult

EXPECTED_FORMAT = 1  # renderers/bandwidth.py EXPECTED_FORMAT, which writes it


class ExpectedError(Exception):
    """The targets could not be read: not rocefab's expected.json, or another version of it."""


@dataclass(frozen=True, slots=True)
class PairVerdict:
    round: int
    pair: int
    client: str  # host/device
    server: str
    line_rate_gbps: int
    percent: int  # the target, in percent of line rate
    gbps: float | None  # None: missing or failed
    file: str | None  # None: missing
    status: str  # pass, fail, missing
    reason: str = ""


@dataclass(frozen=True, slots=True)
class NcclVerdict:
    file: str
    nodes: int
    ranks: int
    planned: bool  # ran on every host of the plan
    size: int  # the largest size's bytes
    busbw: float | None
    target: float  # GB/s
    node_line_rate_gbps: int
    percent: int
    status: str
    reason: str = ""


@dataclass(slots=True)
class Judgement:
    pairs: list[PairVerdict] = field(default_factory=list)
    nccl: list[NcclVerdict] = field(default_factory=list)
    unplanned: list[str] = field(default_factory=list)  # results the plan has no pair for
    nccl_missing: bool = False

    @property
    def ok(self) -> bool:
        return (all(v.status == "pass" for v in self.pairs) and all(v.status == "pass" for v in self.nccl)
                and not self.nccl_missing)


def load_expected(path: Path) -> dict[str, Any]:
    import json

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExpectedError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ExpectedError(f"{path}: not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != EXPECTED_FORMAT or "perftest" not in document:
        raise ExpectedError(f"{path}: not a rocefab bandwidth-tests/expected.json of format {EXPECTED_FORMAT}")
    return document


def _name(end: dict[str, Any]) -> str:
    return f"{end['host']}/{end['device']}"


def _pair_verdict(pair: dict[str, Any], percent: int, result: PerftestResult | None) -> PairVerdict:
    base = {"round": pair["round"], "pair": pair["pair"], "client": _name(pair["client"]),
            "server": _name(pair["server"]), "line_rate_gbps": pair["line_rate_gbps"], "percent": percent}
    if result is None:
        return PairVerdict(**base, gbps=None, file=None, status="missing", reason="no result")
    if result.failure is not None:
        return PairVerdict(**base, gbps=None, file=result.file, status="fail",
                           reason=f"the run failed: {result.failure}")
    assert result.gbps is not None
    if result.device is not None and result.device != pair["client"]["device"]:
        return PairVerdict(**base, gbps=result.gbps, file=result.file, status="fail",
                           reason=f"ran on {result.device}, not the planned {pair['client']['device']}")
    ok = result.gbps >= pair["min_gbps"]
    return PairVerdict(**base, gbps=result.gbps, file=result.file, status="pass" if ok else "fail")


def _short(host: str) -> str:
    return host.split(".")[0]


def _nccl_verdict(plan: dict[str, Any], result: NcclResult) -> NcclVerdict:
    hosts = {_short(h) for h in result.hosts}
    planned = set(plan["hosts"])
    largest = max(result.rows, key=lambda r: r.size) if result.rows else None
    base = {"file": result.file, "nodes": len(hosts), "ranks": len(result.hosts), "planned": planned <= hosts,
            "size": largest.size if largest else 0, "target": plan["min_busbw_gbytes_per_s"],
            "node_line_rate_gbps": plan["node_line_rate_gbps"], "percent": plan["percent_of_line_rate"]}
    if result.failure is not None:
        return NcclVerdict(**base, busbw=None, status="fail", reason=f"the run failed: {result.failure}")
    assert largest is not None
    busbw = largest.busbw_out
    reasons = []
    if len(hosts) < 2:
        reasons.append("ran on one node: NVLink only, the fabric carried nothing")
    if not hosts <= planned:
        reasons.append("hosts outside the plan: " + ", ".join(sorted(hosts - planned)[:5]))
    if any(r.wrong for r in result.rows) or result.out_of_bounds:
        reasons.append("wrong results (#wrong / out of bounds values): data was corrupted")
    if busbw < plan["min_busbw_gbytes_per_s"]:
        reasons.append("below target")
    return NcclVerdict(**base, busbw=busbw, status="fail" if reasons else "pass", reason="; ".join(reasons))


def _pair_of(result: PerftestResult, by_addresses: dict[tuple[str, str], dict[str, Any]],
             by_number: dict[int, dict[str, Any]]) -> dict[str, Any] | None:
    if result.local_ipv4 and result.remote_ipv4:
        return by_addresses.get((result.local_ipv4, result.remote_ipv4))
    m = re.search(r"pair-(\d+)", Path(result.file).name)
    return by_number.get(int(m.group(1))) if m else None


def judge(expected: dict[str, Any], results: list[PerftestResult | NcclResult],
          rounds: set[int] | None = None) -> Judgement:
    """Every planned pair (of `rounds`, if given) with its result or as missing, and every NCCL run."""
    perftest = expected["perftest"]
    planned = [p for p in perftest["pairs"] if rounds is None or p["round"] in rounds]
    by_addresses = {(p["client"]["address"], p["server"]["address"]): p for p in planned}
    by_number = {p["pair"]: p for p in planned}
    found: dict[int, list[PerftestResult]] = {}
    judgement = Judgement()
    for result in results:
        if isinstance(result, NcclResult):
            if expected.get("nccl") is None:
                judgement.unplanned.append(f"{result.file}: the plan has no NCCL run (fewer than two hosts)")
            else:
                judgement.nccl.append(_nccl_verdict(expected["nccl"], result))
            continue
        pair = _pair_of(result, by_addresses, by_number)
        if pair is None:
            judgement.unplanned.append(f"{result.file}: {result.local_ipv4 or '?'} -> {result.remote_ipv4 or '?'} "
                                       "is not a planned pair" + (" of these rounds" if rounds else ""))
            continue
        found.setdefault(pair["pair"], []).append(result)
    # Each half of the plan is judged when results of its kind were given (or none at all): a check of the
    # perftest rounds alone does not miss the NCCL run, and the other way round.
    given_perftest = any(isinstance(r, PerftestResult) for r in results)
    given_nccl = any(isinstance(r, NcclResult) for r in results)
    if given_perftest or not given_nccl:
        for pair in planned:
            matched: list[PerftestResult | None] = [*found.get(pair["pair"], [])] or [None]
            for one in matched:
                judgement.pairs.append(_pair_verdict(pair, perftest["percent_of_line_rate"], one))
    if given_nccl or not given_perftest:
        judgement.nccl_missing = expected.get("nccl") is not None and not any(v.planned for v in judgement.nccl)
    return judgement
