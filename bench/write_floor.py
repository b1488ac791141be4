"""The floor under a render's wall time: its output written with no rendering at all.

Every file of a finished render is read into memory first; then as many forked processes as the render uses
each write their share into a fresh folder and hash it with SHA-256, as the render's workers do. What remains
is the file system's and the hash's cost for those bytes and files on this machine, which no rendering code
can go below; the bench prints the render's time beside it. It runs as a process of its own
(`python bench/write_floor.py RENDERED WORKERS RUNS [TRASH]` prints a JSON object): holding gigabytes in the
bench's process would raise the peak RSS Linux reports for every process the bench starts afterwards. Each run
writes a folder of its own; with TRASH they are moved there for the bench to delete when it ends (creating files
right after deleting as many costs seconds of kernel time, see bench.py), else deleted after the last run.
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


def write_floor(rendered: Path, workers: int, runs: int, trash: Path | None = None) -> tuple[float, int, int]:
    """(median wall seconds, bytes, files) of writing `rendered`'s files afresh on `workers` processes."""
    files = [(p.relative_to(rendered).as_posix(), p.read_bytes()) for p in sorted(rendered.rglob("*")) if p.is_file()]
    samples = []
    written = []
    for run in range(runs):
        target = rendered.with_name(f"{rendered.name}-floor-{run}")
        shutil.rmtree(target, ignore_errors=True)  # none there, unless an earlier bench was interrupted
        written.append(target)
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
    for target in written:
        if trash is not None:
            target.rename(trash / f"{target.name}-{len(list(trash.iterdir()))}")
        else:
            shutil.rmtree(target, ignore_errors=True)
    return statistics.median(samples), sum(len(data) for _, data in files), len(files)


if __name__ == "__main__":
    wall, size, count = write_floor(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                    Path(sys.argv[4]) if len(sys.argv) > 4 else None)
    print(json.dumps({"median_s": wall, "bytes": size, "files": count}))
