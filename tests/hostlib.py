"""Host scripts as the host tests place them: the rendered script with its library beside it (a render folder's
hosts/ and hosts/lib/), or the self-contained script `rocefab apply` stages (rocefab/platforms/host/library.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocefab.platforms.host import library


def place_script(path: Path, script: str) -> Path:
    """Write `script` to `path` and this rocefab's host library into lib/ beside it, as a render folder holds them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script, encoding="utf-8")
    lib = path.parent / "lib" / library.library()[2]
    lib.parent.mkdir(exist_ok=True)
    lib.write_text(library.library()[0], encoding="utf-8")
    return path


def staged(script: str, files: Mapping[str, str] | None = None) -> str:
    """The script as apply stages it on a host: its library's text in place of the block that loads it."""
    return library.embed(script, files if files is not None else {library.library_path(): library.library()[0]})
