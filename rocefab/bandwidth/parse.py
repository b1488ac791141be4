"""Reading ib_write_bw (perftest) and all_reduce_perf (nccl-tests) output as those tools print it.

perftest (src/perftest_parameters.h, perftest_communication.c): a header of `Key : value` lines, a `local
address:` line per QP each followed by `GID: ` and 16 decimal bytes, the same for `remote address:`, then
` #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]` and one row per size (MB/sec or
MiB/sec without --report_gbits; both are 2**20 bytes). The server of a write test prints a banner and no row.
nccl-tests (src/util.cu): `#  Rank  0 Group  0 Pid ... on HOST device ...` per rank, a row per size
`size count type redop root time algbw busbw #wrong time algbw busbw #wrong` (older releases: no root
column), then `# Out of bounds values : N OK|FAILED` and `# Avg bus bandwidth : X`.
"""

from __future__ import annotations

import re
from pathlib import Path

from rocefab.bandwidth.results import NcclResult, NcclRow, PerftestResult, ResultFileError

PERFTEST_TABLE = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb/sec|MB/sec|MiB/sec)\]\s+BW average\[")
PERFTEST_ROW = re.compile(r"\s*(\d+)\s+(\d+)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*")
PERFTEST_TITLE = re.compile(r"^\s+(\S+?)\s+((?:Bidirectional\s+)?)(?:Post List\s+)?BW Test\s*$")
GID = re.compile(r"^\s*M?GID:\s*((?:\d{1,3}:){15}\d{1,3})\s*$")
SERVER_BANNER = "* Waiting for client to connect... *"
# what perftest (and the runner's own lookup) prints when a run ends without a result
PERFTEST_FAILURE = re.compile(r"Couldn't|Unable to|Failed to|failed|Completion with error|rocefab: |error", re.I)
TO_GBPS = {"Gb/sec": 1.0, "MB/sec": 2**20 * 8 / 1e9, "MiB/sec": 2**20 * 8 / 1e9}

NCCL_RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+")
NCCL_START = re.compile(r"^# (?:Collective test starting: (\S+)|nThread \d+ nGpus \d+)")
NCCL_SUMMARY = re.compile(r"^#\s*(Out of bounds values|Avg bus bandwidth)\s*:\s*(\S+)")
NCCL_FAILURE = re.compile(r"Test (?:NCCL|CUDA) failure|NCCL WARN|\bError\b")


def read_lines(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultFileError(str(path), 0, f"cannot read: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise ResultFileError(str(path), data[: data.index(b"\0")].count(b"\n") + 1, "binary data, not tool output")
    return data.decode("utf-8", errors="replace").splitlines()


def _ipv4(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID (RoCE v2 over IPv4), as perftest prints GIDs.

    >>> _ipv4("00:00:00:00:00:00:00:00:00:00:255:255:10:128:00:01")
    '10.128.0.1'
    """
    raw = [int(b) for b in gid.split(":")]
    if raw[:10] != [0] * 10 or raw[10:12] != [255, 255]:
        return None
    return ".".join(str(b) for b in raw[12:])


def parse_perftest(file: str, lines: list[str]) -> PerftestResult | None:
    """One ib_write_bw client's output; None for a server's (its client's file holds the result)."""
    if any(SERVER_BANNER in line for line in lines):
        return None
    device = qps = local = remote = None
    side = ""
    unit = ""
    table_at = 0
    for n, line in enumerate(lines, start=1):
        if (m := PERFTEST_TITLE.match(line)) and not table_at:
            if m.group(1) != "RDMA_Write" or m.group(2):
                raise ResultFileError(file, n, f"a {line.strip()}; the plan's targets are ib_write_bw, one way")
        elif (m := re.search(r"\bDevice\s+:\s+(\S+)", line)) and device is None:
            device = m.group(1)
        elif (m := re.match(r"\s*Number of qps\s+:\s+(\d+)", line)) and qps is None:
            qps = int(m.group(1))
        elif (m := re.match(r"\s*(local|remote) address:", line)):
            side = m.group(1)
        elif (m := GID.match(line)) and side:
            if side == "local" and local is None:
                local = _ipv4(m.group(1))
            elif side == "remote" and remote is None:
                remote = _ipv4(m.group(1))
            side = ""
        elif (m := PERFTEST_TABLE.search(line)):
            unit, table_at = m.group(1), n
        elif table_at and line.strip() and not set(line.strip()) <= {"-"}:
            row = PERFTEST_ROW.fullmatch(line)
            if row is None:
                if PERFTEST_FAILURE.search(line):
                    return PerftestResult(file, n, device, qps, local, remote, None, line.strip())
                raise ResultFileError(file, n, f"not a result row under the table header of line {table_at}: "
                                               f"{line.strip()[:80]!r}")
            return PerftestResult(file, n, device, qps, local, remote,
                                  round(float(row.group(4)) * TO_GBPS[unit], 2))
    for n, line in enumerate(lines, start=1):
        if PERFTEST_FAILURE.search(line):
            return PerftestResult(file, n, device, qps, local, remote, None, line.strip())
    where = f"the result table of line {table_at} has no row" if table_at else "no result table"
    raise ResultFileError(file, max(1, len(lines)), f"ib_write_bw output ends early: {where} (truncated?)")


# the columns of nccl-tests' default table; a run prints its own header, which replaces these
DEFAULT_COLUMNS: tuple[str, ...] = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                                   "time", "algbw", "busbw", "#wrong")


def _row(file: str, n: int, line: str, columns: tuple[str, ...]) -> NcclRow:
    """A result row read by its header's column names: out-of-place columns come before in-place ones, and a
    per-iteration table (-I) has more of them."""
    words = line.split()
    busbw = [i for i, c in enumerate(columns) if c == "busbw"]
    wrong = [i for i, c in enumerate(columns) if c in ("#wrong", "error")]
    try:
        if len(words) < len(columns) or len(busbw) != 2:
            raise ValueError
        errors = sum(0 if words[i] == "N/A" else int(float(words[i])) for i in wrong)
        return NcclRow(int(words[0]), float(words[busbw[0]]), float(words[busbw[1]]), errors)
    except ValueError:
        raise ResultFileError(file, n, f"not an all_reduce_perf result row: {line.strip()[:80]!r}") from None


def parse_nccl(file: str, lines: list[str]) -> NcclResult:
    test = "all_reduce_perf"
    hosts: dict[int, str] = {}
    rows: list[NcclRow] = []
    row_lines: list[int] = []
    columns = DEFAULT_COLUMNS
    avg = bounds = None
    for n, line in enumerate(lines, start=1):
        if " NCCL INFO " in line:
            continue  # NCCL_DEBUG=INFO lines between the table's
        if (m := NCCL_START.match(line)) and m.group(1):
            test = m.group(1)
        elif m := NCCL_RANK.match(line):
            hosts[int(m.group(1))] = m.group(2)
        elif line.startswith("#") and re.search(r"\bsize\b.*\bcount\b.*\bbusbw\b", line):
            columns = tuple(line.lstrip("#").split())
        elif m := NCCL_SUMMARY.match(line):
            try:
                value = float(m.group(2))
            except ValueError:
                raise ResultFileError(file, n, f"unreadable {m.group(1).lower()}: {m.group(2)!r}") from None
            if m.group(1).startswith("Avg"):
                avg = value
            else:
                bounds = int(value)
        elif re.match(r"\s*\d", line) and not NCCL_FAILURE.search(line):
            rows.append(_row(file, n, line, columns))
            row_lines.append(n)
        elif NCCL_FAILURE.search(line):
            return NcclResult(file, n, test, _ordered(hosts), tuple(rows), avg, bounds, line.strip())
    if not hosts:
        raise ResultFileError(file, max(1, len(lines)), "no '#  Rank ... on HOST' lines: which hosts ran is unknown")
    if avg is None or not rows:
        raise ResultFileError(file, max(1, len(lines)), f"{test} output ends before '# Avg bus bandwidth'"
                                                       + ("" if rows else " and without a result row")
                                                       + " (truncated?)")
    largest = max(range(len(rows)), key=lambda i: rows[i].size)
    return NcclResult(file, row_lines[largest], test, _ordered(hosts), tuple(rows), avg, bounds)


def _ordered(hosts: dict[int, str]) -> tuple[str, ...]:
    return tuple(hosts[r] for r in sorted(hosts))


def parse_file(path: Path) -> PerftestResult | NcclResult | None:
    """The result in one file; None for a perftest server's side. Raises ResultFileError when unreadable."""
    lines = read_lines(path)
    text = "\n".join(lines[:200])
    if NCCL_START.search(text) or "# Using devices" in text or any(NCCL_RANK.match(line) for line in lines[:400]):
        return parse_nccl(str(path), lines)
    if "BW Test" in text or "#bytes" in text or "address:" in text or SERVER_BANNER in text:
        return parse_perftest(str(path), lines)
    raise ResultFileError(str(path), 1, "neither ib_write_bw nor all_reduce_perf output")
