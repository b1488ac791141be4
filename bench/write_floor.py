"""The floor under a render's wall time: its output written with no rendering at all.

Every file of a finished render is read into memory first; then as many forked processes as the render uses
each write their share into a fresh folder and hash it with SHA-256, as the render's workers do. What remains
is the file system's and the hash's cost for those bytes and files on this machine, which no rendering code
can go below; the bench prints the render's time beside it. It runs as a process of its own
(`python bench/write_floor.py RENDERED WORKERS RUNS` prints a JSON object): holding gigabytes in the bench's
process would raise the peak RSS Linux reports for every process the bench starts afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path


def write_floor(rendered: Path, workers: int, runs: int) -> tuple[float, int, int]:
    """(median wall seconds, bytes, files) of writing `rendered`'s files afresh on `workers` processes."""
    files = [(p.relative_to(rendered).as_posix(), p.read_bytes()) for p in sorted(rendered.rglob("*")) if p.is_file()]
    target = rendered.with_name(rendered.name + "-floor")
    samples = []
    for _ in range(runs):
        shutil.rmtree(target, ignore_errors=True)
        os.sync()  # as the bench does before each render
        start = time.perf_counter()
        children = []
        for k in range(workers):
            pid = os.fork()
            if pid == 0:  # a child writes every workers-th file, then leaves without the parent's cleanup
                code = 0
                try:
                    for relative, data in files[k::workers]:
                        path = target / relative
                        path.parent.mkdir(parents=True, exist_ok=True)
                        hashlib.sha256(data).digest()
                        path.write_bytes(data)
                except BaseException:
                    code = 1
                os._exit(code)
            children.append(pid)
        failed = [pid for pid in children if os.waitpid(pid, 0)[1] != 0]
        samples.append(time.perf_counter() - start)
        if failed:
            raise RuntimeError(f"{len(failed)} of {workers} writers failed")
    shutil.rmtree(target, ignore_errors=True)
    return statistics.median(samples), sum(len(data) for _, data in files), len(files)


if __name__ == "__main__":
    wall, size, count = write_floor(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    print(json.dumps({"median_s": wall, "bytes": size, "files": count}))
