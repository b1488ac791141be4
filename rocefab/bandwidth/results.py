"""What the parsers read out of a result file, and the error a file that cannot be read raises."""

from __future__ import annotations

from dataclasses import dataclass


class ResultFileError(Exception):
    """A file that is not, or no longer, readable as the tool's output: named with the line it broke at."""

    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file, self.line, self.message = file, line, message


@dataclass(frozen=True, slots=True)
class PerftestResult:
    file: str
    line: int  # of the result row, or of the error that ended the run
    device: str | None
    qps: int | None
    local_ipv4: str | None  # from the GIDs perftest prints (::ffff:a.b.c.d for RoCE v2 over IPv4)
    remote_ipv4: str | None
    gbps: float | None  # BW average, in Gb/s whatever unit the run printed
    failure: str | None = None  # the run ended with this error instead of a result row


@dataclass(frozen=True, slots=True)
class NcclRow:
    size: int
    busbw_out: float  # GB/s, out-of-place
    busbw_in: float
    wrong: int  # wrong elements, both columns ("N/A" without validation counts 0)


@dataclass(frozen=True, slots=True)
class NcclResult:
    file: str
    line: int  # of the largest size's row, or of the failure
    test: str
    hosts: tuple[str, ...]  # each rank's host, in rank order
    rows: tuple[NcclRow, ...]
    avg_busbw: float | None
    out_of_bounds: int | None
    failure: str | None = None
