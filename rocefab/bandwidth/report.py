"""Printing a judgement: a line per pair and per NCCL run, the shortfall where a target was missed."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rocefab.bandwidth.judge import Judgement, NcclVerdict, PairVerdict

MAX_MISSING_SHOWN = 20  # a check of one round's folder against the whole plan would list thousands


def _gib(size: int) -> str:
    return f"{size / 2**30:g} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size} B"


def pair_line(v: PairVerdict) -> str:
    what = f"round {v.round} pair {v.pair}: {v.client} -> {v.server}"
    if v.gbps is None:
        return f"{v.status.upper():7} {what}: {v.reason}" + (f" ({v.file})" if v.file else "")
    share = v.gbps / v.line_rate_gbps * 100
    target = v.line_rate_gbps * v.percent / 100
    text = f"{v.gbps:.1f} Gb/s of {v.line_rate_gbps} Gb/s line rate = {share:.0f} %"
    if v.status == "pass":
        return f"PASS    {what}: {text} (target {v.percent} %)"
    shortfall = f", below {v.percent} % ({target:g} Gb/s): short by {target - v.gbps:.1f} Gb/s"
    extra = f"; {v.reason}" if v.reason else ""
    return f"FAIL    {what}: {text}{shortfall if v.gbps < target else ''}{extra} ({v.file})"


def nccl_line(v: NcclVerdict) -> str:
    what = f"nccl {v.nodes} node(s), {v.ranks} ranks" + ("" if v.planned else " (not every planned host)")
    if v.busbw is None:
        return f"FAIL    {what}: {v.reason} ({v.file})"
    share = v.busbw * 8 / v.node_line_rate_gbps * 100
    text = (f"busbw {v.busbw:g} GB/s at {_gib(v.size)} = {share:.0f} % of a node's {v.node_line_rate_gbps} Gb/s "
            f"({v.node_line_rate_gbps / 8:g} GB/s)")
    if v.status == "pass":
        return f"PASS    {what}: {text} (target {v.percent} %, {v.target:g} GB/s)"
    short = f", below {v.percent} % ({v.target:g} GB/s): short by {v.target - v.busbw:.1f} GB/s" \
        if v.busbw < v.target else ""
    reasons = "; ".join(r for r in v.reason.split("; ") if r != "below target")
    return f"FAIL    {what}: {text}{short}{'; ' + reasons if reasons else ''} ({v.file})"


def text_lines(j: Judgement) -> list[str]:
    lines = [pair_line(v) for v in j.pairs if v.status != "missing"]
    missing = [v for v in j.pairs if v.status == "missing"]
    lines += [pair_line(v) for v in missing[:MAX_MISSING_SHOWN]]
    if len(missing) > MAX_MISSING_SHOWN:
        lines.append(f"... and {len(missing) - MAX_MISSING_SHOWN} more planned pairs without a result")
    lines += [nccl_line(v) for v in j.nccl]
    if j.nccl_missing:
        lines.append("MISSING nccl all_reduce_perf over every planned host: no result")
    lines += [f"note    {u}" for u in j.unplanned]
    lines.append(summary(j))
    return lines


def summary(j: Judgement) -> str:
    count = {s: sum(v.status == s for v in j.pairs) for s in ("pass", "fail", "missing")}
    nccl_pass = sum(v.status == "pass" for v in j.nccl)
    nccl = f"; nccl {nccl_pass} of {len(j.nccl)} run(s) pass" + (", the planned run missing" if j.nccl_missing
                                                                  else "")
    verdict = "PASS" if j.ok else "FAIL"
    if not j.pairs:
        return f"{verdict}: {nccl.removeprefix('; ')}"
    return (f"{verdict}: perftest {count['pass']} pass, {count['fail']} fail, {count['missing']} missing of "
            f"{len(j.pairs)}{nccl if j.nccl or j.nccl_missing else ''}")


def as_json(j: Judgement) -> dict[str, Any]:
    return {"ok": j.ok, "pairs": [asdict(v) for v in j.pairs], "nccl": [asdict(v) for v in j.nccl],
            "nccl_missing": j.nccl_missing, "unplanned": j.unplanned, "summary": summary(j)}
