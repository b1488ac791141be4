"""Where an intent (or inventory) comes from: reading its file within bounds, and the positions every error
is reported at (file:line:col and the field).

Only a regular file is read (a FIFO or device is refused, not waited on), at most `MAX_BYTES`; the YAML
reader (yamlsource.py) holds the bounds on depth, size and aliases.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path as FsPath

from rocefab.models.findings import Path, dotted

MAX_BYTES = 4 * 1024 * 1024  # an explicit intent naming 65,536 hosts one by one is about 1.2 MB
MAX_DEPTH = 32
MAX_NODES = 100_000  # values, keys and list items the text itself holds (65,536 host names fit)
ALIAS_BUDGET = 100_000  # values built through aliases and merge keys, beyond the document's own nodes
MAX_ERRORS = 50


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    col: int  # 1-based


@dataclass(frozen=True, slots=True)
class LoadError:
    file: str
    position: Position
    path: Path
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.position.line}:{self.position.col}"
        field_path = dotted(self.path)
        return f"{where} {field_path}: {self.message}" if field_path else f"{where} {self.message}"


class IntentLoadError(Exception):
    """The file could not be read or does not match the schema; nothing downstream may run."""

    def __init__(self, errors: list[LoadError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


@dataclass(frozen=True)
class SourceMap:
    """Where each key or list item of the document starts."""

    file: str
    positions: dict[Path, Position] = field(default_factory=dict)

    def locate(self, path: Path) -> Position:
        """Position of `path`, or of its nearest ancestor that exists in the file."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(tuple(path[:end]))
            if found is not None:
                return found
        return Position(1, 1)


# --- reading the file ---------------------------------------------------------------------------------------


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_source(file: str | FsPath, shown: str, max_bytes: int = MAX_BYTES) -> tuple[bytes, str]:
    """The file's bytes and its text; only a regular file of at most `max_bytes` is read.

    Opened without blocking, so a FIFO given as the intent is refused instead of waiting forever for a writer."""
    def fail(message: str, position: Position = Position(1, 1)) -> IntentLoadError:
        return IntentLoadError([LoadError(shown, position, (), message)])

    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise fail(f"cannot read: {_kind_of(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise fail(f"the file is {info.st_size:,} bytes; intents are at most {max_bytes:,}")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > max_bytes:
        raise fail(f"the file grew past {max_bytes:,} bytes while being read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        col = len(raw[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        position = Position(raw.count(b"\n", 0, exc.start) + 1, col)
        raise fail(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be decoded", position) from None
    return raw, text.removeprefix("\ufeff")
