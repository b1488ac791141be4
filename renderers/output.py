"""Write rendered files into an output folder all at once, with a manifest of hashes.

Nothing is written in place: the files go to a sibling temporary folder that replaces the target only
when complete, so an interrupted or failed render never leaves a half-written folder behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocefab.renderers.render import RenderedFile

MANIFEST = "manifest.json"


class OutputError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Entry:
    """A written file, as the manifest lists it."""

    path: str
    device: str
    kind: str
    sha256: str


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_files(folder: Path, files: Iterable[RenderedFile]) -> list[Entry]:
    """Write `files` under `folder`, which holds none of them yet; modes follow the umask, as a compiler's do.

    Raw descriptors rather than `open()`: a large fabric is thousands of small files, and the buffered
    layer's extra system calls per file (fstat, isatty, lseek) cost more than the writing itself.
    O_EXCL turns two files claiming one path into an error instead of a silent overwrite."""
    entries: list[Entry] = []
    made: set[Path] = set()
    for f in files:
        path = folder / f.path
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        data = f.content.encode()
        fd = os.open(path, _CREATE, 0o777 if f.executable else 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        entries.append(Entry(f.path, f.device, f.kind, hashlib.sha256(data).hexdigest()))
    return entries


def manifest_json(files: Sequence[RenderedFile | Entry]) -> str:
    entries = [
        {
            "path": f.path,
            "device": f.device,
            "kind": f.kind,
            "sha256": f.sha256 if isinstance(f, Entry) else hashlib.sha256(f.content.encode()).hexdigest(),
        }
        for f in sorted(files, key=lambda f: f.path)
    ]
    return json.dumps({"files": entries}, indent=2) + "\n"


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise OutputError(f"{target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / MANIFEST).is_file():
        raise OutputError(
            f"{target} is not empty and holds no {MANIFEST}: refusing to replace a folder rocefab did not write"
        )


def publish(target: Path, fill: Callable[[Path], list[Entry]]) -> list[Entry]:
    """Let `fill` write into a fresh staging folder, add the manifest, then swap the folder in as `target`."""
    _check_target(target)
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.rocefab-", dir=target.parent))
    try:
        entries = fill(staging)
        (staging / MANIFEST).write_text(manifest_json(entries), encoding="utf-8")
        staging.chmod(0o755)
        if target.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            target.replace(retired / "out")
            staging.replace(target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.replace(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return entries

