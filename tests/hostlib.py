"""Host scripts as the host tests place them: the rendered script with its libraries beside it (a render folder's
hosts/ and hosts/lib/), or the self-contained script `rocefab apply` stages (rocefab/platforms/host/library.py);
the preflight likewise, with its checks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocefab.platforms.host import library


def place_script(path: Path, script: str) -> Path:
    """Write `script` to `path` and this rocefab's host libraries into lib/ beside it, as a render folder holds
    them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script, encoding="utf-8")
    for lib in library.LIBRARIES:
        text, _, name = lib.made()
        (path.parent / "lib").mkdir(exist_ok=True)
        (path.parent / "lib" / name).write_text(text, encoding="utf-8")
    return path


def staged(script: str, files: Mapping[str, str] | None = None) -> str:
    """The script as a host runs it: the text of the library it loads in place of the block that loads it (as apply
    stages the NIC/bond script; the preflight, which loads its checks from lib/, runs the same program)."""
    if files is None:
        files = {lib.path(): lib.made()[0] for lib in library.LIBRARIES}
    for lib in library.LIBRARIES:
        script = lib.embed(script, files)
    return script
