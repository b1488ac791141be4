"""Write rendered files into an output folder all at once, with a manifest of hashes.

Nothing is written in place: the files go to a sibling temporary folder that replaces the target only
when complete, so an interrupted or failed render never leaves a half-written folder behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from renderers.render import RenderedFile

MANIFEST = "manifest.json"


class OutputError(Exception):
    pass


def manifest_json(files: list[RenderedFile]) -> str:
    entries = [
        {
            "path": f.path,
            "device": f.device,
            "kind": f.kind,
            "sha256": hashlib.sha256(f.content.encode()).hexdigest(),
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


def write_output(target: Path, files: list[RenderedFile]) -> None:
    _check_target(target)
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.rocefab-", dir=target.parent))
    try:
        for f in files:
            path = staging / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f.content, encoding="utf-8")
            if f.executable:
                path.chmod(0o755)
        (staging / MANIFEST).write_text(manifest_json(files), encoding="utf-8")
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
