"""Tell a rendered file that the output folder already holds, byte for byte, so a re-render leaves it in place.

Operators re-render after each intent change and review the result with `git diff`; most files come out the
same. Writing them again costs the most of a large re-render: a 98,304-GPU fabric is 2.2 GB in 57,000 files, and
the kernel throttles a writer while the previous render's pages are still being flushed (tens of seconds on
this project's VM). A file is left where it is only when the previous render wrote it (its manifest lists the
path) and what is there now is a regular file with exactly the new bytes and the mode a new file would get;
anything else, an edited file included, is written anew as before.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rocefab.renderers.record import record
from rocefab.renderers.render import counted_lines
from rocefab.renderers.seen import Seen, Stamp, stamp_of, still

if TYPE_CHECKING:
    from rocefab.renderers.output import Entry

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the read


def new_file_modes() -> tuple[int, int]:
    """The modes `write_files` gives a new file under this process's umask: (plain, executable)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask, 0o777 & ~umask


@record
class Unchanged:
    target: Path  # the output folder
    owned: frozenset[str]  # the paths its manifest lists
    modes: tuple[int, int]  # see new_file_modes
    # The previous manifest's entries by device, and the input key it recorded per device and for "fabric"
    # (input_keys.py); empty when it recorded none (an older or interrupted render).
    previous: dict[str, tuple[Entry, ...]] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    intent_sha256: str = ""  # of the intent the previous render was made from, as its manifest says ("": none)
    seen: dict[str, Seen] = field(default_factory=dict)  # the files as the previous render recorded them (seen.py)

    def keep(self, device: str, key: str, besides: frozenset[str] = frozenset()) -> list[Entry] | None:
        """The previous render's files of `device` (those not of a kind in `besides`), as entries marked kept,
        when that render made them from the same inputs (`key`) and each is still there as it wrote it (its hash
        and mode); None when any is not, and the device must be rendered."""
        if not key or self.inputs.get(device) != key:
            return None
        return self.intact(device, besides)

    def intact(self, device: str, besides: frozenset[str] = frozenset(),
               besides_folders: tuple[str, ...] = ()) -> list[Entry] | None:
        """`keep` without the key: the previous render's files of `device` (but those of a kind in `besides` or
        in one of `besides_folders`, each ending in '/') as kept entries, if each is still there as that render
        wrote it (for a check that can start before the key is known)."""
        return self._intact([e for e in self.previous.get(device, ())
                             if e.kind not in besides and not e.path.startswith(besides_folders)])

    def keep_part(self, path: str, key: str) -> list[Entry] | None:
        """`keep` for one fabric-wide file with a key of its own (a part of plan/), named by its path."""
        return self._keep_fabric(path, key, path.__eq__)

    def keep_folder(self, folder: str, key: str) -> list[Entry] | None:
        """`keep` for a fabric-wide folder with a key of its own (monitoring/, bandwidth-tests/), named by its path
        with a trailing '/'."""
        return self._keep_fabric(folder, key, lambda path: path.startswith(folder))

    def _keep_fabric(self, name: str, key: str, holds: Callable[[str], bool]) -> list[Entry] | None:
        if not key or self.inputs.get(name) != key:
            return None
        return self._intact([e for e in self.previous.get("fabric", ()) if holds(e.path)])

    def _intact(self, entries: list[Entry]) -> list[Entry] | None:
        if not entries:
            return None
        kept = []
        for entry in entries:
            seen = self.trusted(entry.path, entry.sha256, entry.executable)
            if seen is not None:
                kept.append(replace(entry, lines=seen.lines, kept=True, stamp=seen.stamp))
                continue
            found = self.previous_bytes(entry.path, entry.executable)
            if found is None or hashlib.sha256(found[0]).hexdigest() != entry.sha256:
                return None
            kept.append(replace(entry, lines=counted_lines(entry.device, found[0]), kept=True, stamp=found[1]))
        return kept

    def trusted(self, path: str, sha256: str, executable: bool) -> Seen | None:
        """The previous render's record of `target/path` when it recorded these bytes (`sha256`) and the file is
        still exactly as recorded, with the mode a new file would get: then it holds those bytes, unread."""
        seen = self.seen.get(path)
        if seen is None or seen.sha256 != sha256 or path not in self.owned:
            return None
        mode = seen.stamp[2]
        if not stat.S_ISREG(mode) or stat.S_IMODE(mode) != self.modes[executable]:
            return None
        return seen if still(self.target, path, seen) else None

    def previous_bytes(self, path: str, executable: bool, size: int | None = None) -> tuple[bytes, Stamp] | None:
        """What `target/path` holds and its status, when `open_previous` accepts it (and it is `size` bytes long,
        when given: a file of another size is not read)."""
        fd = self.open_previous(path, executable)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)
            if size is not None and st.st_size != size:
                return None
            data = read_exactly(fd, st.st_size + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return (data, stamp_of(st)) if len(data) == st.st_size else None

    def holds(self, path: str, data: bytes, executable: bool, sha256: str) -> Stamp | None:
        """The status of `target/path` when it is a file the previous render wrote that already holds `data` (whose
        hash is `sha256`) as it would be written; None when it is not."""
        seen = self.trusted(path, sha256, executable)
        if seen is not None:
            return seen.stamp
        found = self.previous_bytes(path, executable, len(data))
        return found[1] if found is not None and found[0] == data else None

    def open_previous(self, path: str, executable: bool) -> int | None:
        """A descriptor open for reading on `target/path` when the previous render wrote it and it is a regular
        file with the mode a new one would get; None otherwise."""
        if path not in self.owned:
            return None
        try:
            fd = os.open(self.target / path, _READ)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != self.modes[executable]:
            os.close(fd)
            return None
        return fd


def read_exactly(fd: int, size: int) -> bytes:
    """`size` bytes from `fd`, fewer only at its end."""
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
