"""rocefab's folders in the user's cache: $XDG_CACHE_HOME/rocefab/NAME, else ~/.cache/rocefab/NAME.

What they hold steers a render (compiled templates are loaded as code; a record of seen files decides which
output files are read back), so a folder is used only when it is its user's and nobody else can write to it or
to the rocefab folder holding it; it is made that way when missing.
"""

from __future__ import annotations

import os
from pathlib import Path


def private_cache_folder(name: str) -> Path | None:
    """The cache folder `name` of rocefab, made if missing; None where it cannot be made or is not only ours."""
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME", ""))
        if not base.is_absolute():  # the XDG rule: a relative (or empty) value is ignored
            base = Path.home() / ".cache"
        folder = base / "rocefab" / name
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        for made in (folder.parent, folder):  # whoever can write either could put anything in the other's place
            st = made.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None  # another user's, or open to others
        if folder.stat().st_mode & 0o077 or not os.access(folder, os.W_OK):
            return None
    except (OSError, RuntimeError):  # RuntimeError: no home folder to be found
        return None
    return folder
