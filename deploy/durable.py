"""Files a later run relies on (backups), written whole or not at all, and the room to write them checked first.

A backup written straight into place is a trap on a full disk: the file exists, holds nothing, and a rollback
would restore nothing from it. So each file goes to a temporary name in its folder, is flushed to the disk and
only then renamed over its name (a rename within one file system is atomic): a reader sees the old file, the
whole new one, or none.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

# Free space a backup folder must have before apply changes anything: far above what a few hundred switch
# configs take (the 202-device bench lab's backups are under 10 MB), so a nearly full disk stops the run first.
MIN_FREE_BYTES = 64 * 1024 * 1024


def write_whole(path: Path, text: str) -> None:
    """`text` into `path`, atomically (see the module's docstring); OSError as the file system raised it."""
    temporary = path.with_name(f".{path.name}.partial")
    try:
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    with contextlib.suppress(OSError):  # the rename itself on the disk (not every file system allows this)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def writable_with_room(folder: Path, need: int = MIN_FREE_BYTES) -> str | None:
    """None when `folder` takes a file and has `need` bytes free; else why not, in words. Tried for real (a folder
    made, a file written and removed): the folders it had to make are removed again, so nothing is left."""
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_whole(folder / ".rocefab-write-test", "")
        (folder / ".rocefab-write-test").unlink()
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return f"cannot write there: {exc.strerror or exc}"
    finally:
        for path in made:  # deepest first
            with contextlib.suppress(OSError):
                path.rmdir()
    if free < need:
        return f"only {free / 2**20:.1f} MiB free there, {need / 2**20:.0f} MiB needed"
    return None
