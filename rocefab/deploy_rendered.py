"""Push what was reviewed: the device files of a folder `rocefab render` wrote, instead of rendering again.

The folder's manifest records the rocefab version that rendered it, the SHA-256 of the intent file's bytes,
and every file's SHA-256. The folder is pushed only when it was rendered from this intent file, as it is
now, by this rocefab version, and no device file was edited or removed since; `--allow-edited` pushes edited
files as they are, after listing them. A missing file is never pushed around: it is refused either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import typer

from rocefab import __version__
from rocefab.console import EXIT_INPUT, err
from rocefab.platforms import UNITS
from rocefab.renderers.output import Manifest, OutputError, changed_files, read_manifest
from rocefab.renderers.render import RenderedFile

FABRIC = "fabric"  # the device name of fabric-wide files, which are never pushed


def _refuse(folder: Path, problem: str) -> NoReturn:
    err.print(f"--rendered {folder}: {problem}; nothing was changed", markup=False)
    raise typer.Exit(EXIT_INPUT)


def provenance_problem(intent: Path, manifest: Manifest, version: str = __version__) -> str | None:
    """Why a folder with `manifest` is not a render of `intent` by this rocefab, or None when it is."""
    if manifest.source is None:
        return "its manifest does not record the intent and rocefab version it was rendered from: render it again"
    if manifest.rocefab != version:
        return f"rendered by rocefab {manifest.rocefab}, this is rocefab {version}: render it again"
    digest = hashlib.sha256(intent.read_bytes()).hexdigest()
    if digest != manifest.intent_sha256:
        return (f"rendered from another intent ({manifest.intent_path}, sha256 {str(manifest.intent_sha256)[:12]}), "
                f"not {intent} as it is now (sha256 {digest[:12]}): render it again from {intent}")
    return None


def reviewed_files(intent: Path, folder: Path, allow_edited: bool,
                   devices: Sequence[str] | None = None) -> list[RenderedFile]:
    """The device files of `folder` (of `devices`, if given), checked against its manifest; exits 2 with the
    reason when the folder is not what was reviewed."""
    try:
        manifest = read_manifest(folder)
    except OutputError as exc:
        _refuse(folder, str(exc))
    problem = provenance_problem(intent, manifest)
    if problem:
        _refuse(folder, problem)
    wanted = set(devices) if devices is not None else None
    shared = {kind for u in UNITS.values() if u.shared_files for _, kind, _ in u.shared_files()}
    entries = [e for e in manifest.entries if (e.device != FABRIC and (wanted is None or e.device in wanted))
               or e.kind in shared]
    changed = set(changed_files(folder, Manifest(tuple(entries), manifest.source)))
    missing = sorted(e.path for e in entries if e.path in changed and not (folder / e.path).is_file())
    edited = sorted(changed - set(missing))
    if missing:
        _refuse(folder, f"device file(s) missing since the render: {', '.join(missing)}")
    if edited and not allow_edited:
        _refuse(folder, f"device file(s) edited since the render: {', '.join(edited)} (--allow-edited pushes them "
                        "as they are)")
    for path in edited:
        err.print(f"--allow-edited: pushing {folder / path} as edited, not as rendered", markup=False)
    try:
        return [RenderedFile(e.path, e.device, e.kind, (folder / e.path).read_text(encoding="utf-8"))
                for e in entries]
    except (OSError, UnicodeDecodeError) as exc:
        _refuse(folder, f"cannot read a device file: {exc}")
