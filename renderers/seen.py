"""What the last render saw of the files it left in an output folder, so the next one can keep a file without
reading it back.

A re-render keeps a file only when it still holds the bytes the previous render wrote (unchanged.py). Reading and
hashing every kept file to know that was half of a 98,304-GPU re-render's work (a gigabyte). So after each render
rocefab records, per file, its hash, its line count and its status as the file system reports it (device, inode,
mode, size, modification and change times, each to the nanosecond); the next render takes a file whose status is
still exactly that one as holding the recorded bytes, and reads only the others. A write, truncation, chmod,
rename over it or replacement sets a new change time, which no program can set back, so an edited file always
reads as changed.

As git does with its index, a status is recorded only when its times are older than a probe file made after
every file was seen: the file system stamps times from a clock that ticks coarsely (milliseconds), and a file
edited in the very tick it was seen in would keep its recorded times. A file changed after a render wrote or
verified it but before that render recorded it, within one tick of its own writing, is the one case this cannot
tell, as for git.

The record lives in rocefab's private cache folder `seen` (cache_home.py: $XDG_CACHE_HOME/rocefab/seen, else
~/.cache/rocefab/seen, used only when nobody else can write there), one file per output folder, never in the
output folder: a re-render that changes nothing leaves the folder untouched, and
inode numbers would differ in every copy of it. A missing, unreadable or foreign record only means files are read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from rocefab.renderers.cache_home import private_cache_folder
from rocefab.renderers.record import record

if TYPE_CHECKING:
    from rocefab.renderers.output import Entry

SEEN_FORMAT = 1
KEEP_RECORDS = 32  # output folders whose record is kept; the least recently rendered go first

# A file's status as recorded: st_dev, st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns.
Stamp = tuple[int, int, int, int, int, int]


def stamp_of(st: os.stat_result) -> Stamp:
    return st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@record
class Seen:
    """One file as the last render left it: its hash, its line count (render.counted_lines) and its status."""

    sha256: str
    lines: int
    stamp: Stamp


def record_path(target: Path) -> Path | None:
    """The record of output folder `target` (its resolved path)."""
    folder = private_cache_folder("seen")
    return None if folder is None else folder / f"{hashlib.sha256(os.fsencode(target)).hexdigest()[:32]}.json"


def load_seen(target: Path) -> dict[str, Seen]:
    """The files of `target` as the last render recorded them; empty when there is no usable record."""
    path = record_path(target)
    if path is None:
        return {}
    try:
        document = orjson.loads(path.read_bytes())
        if document.get("format") != SEEN_FORMAT or document.get("target") != os.fsdecode(target):
            return {}
        return {name: Seen(sha, lines, (dev, ino, mode, size, mtime, ctime))
                for name, (sha, lines, dev, ino, mode, size, mtime, ctime) in document["files"].items()
                if isinstance(name, str) and isinstance(sha, str) and all(
                    type(n) is int for n in (lines, dev, ino, mode, size, mtime, ctime))}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return {}


def still(target: Path, path: str, seen: Seen) -> bool:
    """Whether `target/path` is exactly as recorded in `seen` (a symbolic link never is: it is not followed)."""
    try:
        return stamp_of(os.lstat(target / path)) == seen.stamp
    except OSError:
        return False


def _probe_time(folder: Path) -> int:
    """The file system's clock now, read off a file made in `folder` (in nanoseconds)."""
    fd, name = tempfile.mkstemp(prefix=".rocefab-probe-", dir=folder)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
        Path(name).unlink()
    return max(st.st_mtime_ns, st.st_ctime_ns)


def save_seen(target: Path, scratch: Path, entries: Iterable[Entry], renamed: frozenset[str]) -> None:
    """Record the files of `entries` as `target` now holds them. Each entry's stamp is its file's status when the
    render wrote or verified it; a file renamed into place since (`renamed`) got a new change time, so its status
    is read again and recorded only if the rest is unchanged. `scratch` is a folder on the same file system for
    the probe. Nothing is recorded when the cache folder cannot be written."""
    path = record_path(target)
    if path is None:
        return
    try:
        now = _probe_time(scratch)
    except OSError:
        return
    files: dict[str, list[object]] = {}
    for entry in entries:
        stamp = entry.stamp
        if stamp is None:
            continue
        if entry.path in renamed:
            try:
                moved = stamp_of(os.lstat(target / entry.path))
            except OSError:
                continue
            if moved[:5] != stamp[:5]:
                continue
            stamp = moved
        if not stat.S_ISREG(stamp[2]) or stamp[4] >= now or stamp[5] >= now:
            continue  # racy: stamped in the probe's tick (or a clock set back), so not to be trusted later
        files[entry.path] = [entry.sha256, entry.lines, *stamp]
    document = {"format": SEEN_FORMAT, "target": os.fsdecode(target), "files": files}
    try:
        fd, name = tempfile.mkstemp(prefix=".seen-", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(orjson.dumps(document))
        Path(name).replace(path)
        _prune(path.parent)
    except OSError:
        Path(name).unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    """Keep the KEEP_RECORDS most recently written records."""
    records = []
    for child in folder.glob("*.json"):
        try:
            records.append((child.stat().st_mtime_ns, child))
        except OSError:
            continue
    for _, child in sorted(records, reverse=True)[KEEP_RECORDS:]:
        child.unlink(missing_ok=True)
