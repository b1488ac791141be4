"""Write rendered files into an output folder, with a manifest of hashes, touching only rocefab's own files.

Everything is first written to a hidden staging folder inside the target, so a failed render changes
nothing; a file the previous render wrote that the folder still holds exactly as rendered is not written at all
(unchanged.py). Then the new files are renamed over the old ones, the previous render's files the new one no
longer has are removed, and the manifest is written last. Whatever else the folder holds — a `.git`, notes, other
folders — is never touched: a git-tracked output folder shows exactly the rendered changes in `git diff`.

The folder's own files are only rocefab's when the previous manifest lists them; a path the render would
write that holds a file no manifest claims is refused before anything changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from pathlib import Path

from rocefab.renderers.record import record
from rocefab.renderers.render import AnyFile, RenderedFile, StreamedFile, counted_lines
from rocefab.renderers.seen import Stamp, load_seen, save_seen, stamp_of
from rocefab.renderers.unchanged import Unchanged, new_file_modes, read_exactly

MANIFEST = "manifest.json"
STAGING_PREFIX = ".rocefab-staging-"


class OutputError(Exception):
    pass


@record
class Entry:
    """A written file, as the manifest lists it."""

    path: str
    device: str
    kind: str
    sha256: str
    lines: int = 0  # newlines in a device's file, for summary.md (0 for fabric-wide files); not in the manifest
    kept: bool = False  # already in the target as rendered (see unchanged.py): left there, not written
    executable: bool = False
    # the file's status when this render wrote or verified it (seen.py); not in the manifest
    stamp: Stamp | None = field(default=None, compare=False, repr=False)


@record
class Source:
    """What a folder was rendered from: the rocefab version and the intent file (its bytes' SHA-256)."""

    rocefab: str
    intent_path: str
    intent_sha256: str


@record
class Manifest:
    entries: tuple[Entry, ...]
    source: Source | None  # None for a manifest written before rocefab recorded it
    # input key per device and for "fabric" (input_keys.py); empty when the render recorded none
    inputs: dict[str, str] = field(default_factory=dict)

    @property
    def rocefab(self) -> str | None:
        return self.source.rocefab if self.source else None

    @property
    def intent_path(self) -> str | None:
        return self.source.intent_path if self.source else None

    @property
    def intent_sha256(self) -> str | None:
        return self.source.intent_sha256 if self.source else None


def source_of(intent: Path, version: str) -> Source:
    return Source(version, str(intent), hashlib.sha256(intent.read_bytes()).hexdigest())


@record
class Filled:
    """What a fill gives `publish` and `publish` returns: the entries of the files written or kept, the input keys
    they were made from (input_keys.py) and the devices whose files were rendered anew (not kept by their key)."""

    entries: list[Entry]
    inputs: dict[str, str] = field(default_factory=dict)
    rendered: tuple[str, ...] = ()

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_files(folder: Path, files: Iterable[AnyFile], unchanged: Unchanged | None = None,
                made: set[str] | None = None) -> list[Entry]:
    """Write `files` under `folder`, which holds none of them yet; modes follow the umask, as a compiler's do.
    A file `unchanged` says the target holds already as rendered is not written (its entry says `kept`).

    Raw descriptors rather than `open()`: a large fabric is thousands of small files, and the buffered
    layer's extra system calls per file (fstat, isatty, lseek) cost more than the writing itself.
    O_EXCL turns two files claiming one path into an error instead of a silent overwrite. A streamed file is
    hashed and written piece by piece, never held whole. `made` holds the folders known to exist, for a caller
    writing many devices' files one device at a time into the same few folders. Paths are joined as text: a
    render's relative paths are rocefab's own (names checked by the schema), and a pathlib object per file cost
    more than its system calls' arguments."""
    entries: list[Entry] = []
    if made is None:
        made = set()
    top = os.fspath(folder)
    for f in files:
        path = f"{top}/{f.path}"
        parent = path.rpartition("/")[0]
        if parent not in made:
            Path(parent).mkdir(parents=True, exist_ok=True)
            made.add(parent)
        mode = 0o777 if f.executable else 0o666
        if isinstance(f, StreamedFile):
            writer = _Streamed(path, mode, unchanged.open_previous(f.path, f.executable) if unchanged else None,
                               f.device)
            try:
                f.write(writer.emit)
                kept = writer.finish()
            finally:
                writer.close()
            entries.append(Entry(f.path, f.device, f.kind, writer.digest.hexdigest(), writer.lines, kept,
                                 f.executable, writer.stamp))
            continue
        data = f.content.encode()
        digest, lines = hashlib.sha256(data).hexdigest(), counted_lines(f.device, data)
        held = unchanged.holds(f.path, data, f.executable, digest) if unchanged is not None else None
        if held is not None:
            entries.append(Entry(f.path, f.device, f.kind, digest, lines, True, f.executable, held))
            continue
        fd = os.open(path, _CREATE, mode)
        try:
            _write_all(fd, data)
            written = os.fstat(fd)
        finally:
            os.close(fd)
        entries.append(Entry(f.path, f.device, f.kind, digest, lines, False, f.executable, stamp_of(written)))
    return entries


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _Streamed:
    """A streamed file hashed and written piece by piece. Given the previous render's file (`previous`, open),
    the pieces are first compared with it and nothing is written while they agree: the file is kept when all
    agree, and at the first difference the agreed part is copied from it and writing goes on from there."""

    def __init__(self, path: str, mode: int, previous: int | None, device: str) -> None:
        self.path, self.mode, self.previous = path, mode, previous
        self.digest = hashlib.sha256()
        self.device = device  # whose file: what its lines are counted for (counted_lines)
        self.lines = 0
        self.agreed = 0  # leading bytes equal to the previous file's, not written yet
        self.fd: int | None = None
        self.stamp: Stamp | None = None  # the status of the file kept or written, once finished

    def emit(self, text: str) -> None:
        data = text.encode()
        if self.fd is None:
            if self.previous is not None and read_exactly(self.previous, len(data)) == data:
                self._count(data)
                self.agreed += len(data)
                return
            self._start()
        assert self.fd is not None
        self._count(data)
        _write_all(self.fd, data)

    def _count(self, data: bytes) -> None:
        self.digest.update(data)
        self.lines += counted_lines(self.device, data)

    def _start(self) -> None:
        """Create the new file with the agreed part copied from the previous one, checked against the hash of
        what was emitted (so far exactly that part): a file changed since it was compared fails the render."""
        self.fd = os.open(self.path, _CREATE, self.mode)
        copied = hashlib.sha256()
        done = 0
        while done < self.agreed:
            assert self.previous is not None
            chunk = os.pread(self.previous, min(1 << 20, self.agreed - done), done)
            if not chunk:
                break
            copied.update(chunk)
            _write_all(self.fd, chunk)
            done += len(chunk)
        if copied.digest() != self.digest.digest():
            raise OSError(f"{Path(self.path).name} in the output folder changed while this render read it")

    def finish(self) -> bool:
        """Whether the previous file was kept (else the new one is complete)."""
        kept = self.fd is None and self.previous is not None and os.read(self.previous, 1) == b""
        if not kept and self.fd is None:
            self._start()
        done = self.previous if kept else self.fd
        assert done is not None
        self.stamp = stamp_of(os.fstat(done))
        return kept

    def close(self) -> None:
        for fd in (self.fd, self.previous):
            if fd is not None:
                os.close(fd)


def manifest_json(files: Sequence[RenderedFile | Entry], source: Source | None = None,
                  inputs: dict[str, str] | None = None) -> str:
    """The manifest: each file's path, device, kind and hash (and `executable` when it is), where the render came
    from, and the input keys it was made from (see input_keys.py), when given."""
    return _manifest_text(_manifest_lines(files), source, inputs)


def _manifest_lines(files: Iterable[RenderedFile | Entry]) -> list[str]:
    """Each file's line of the manifest, in path order."""
    text = json.encoder.encode_basestring_ascii  # what json.dumps prints for a string
    # 41,000 entries at 98,304 GPUs: each line is formatted as json.dumps prints the entry's dict, not dumped
    return [
        f'{{"path": {text(f.path)}, "device": {text(f.device)}, "kind": {text(f.kind)}, "sha256": '
        f'{text(f.sha256 if isinstance(f, Entry) else hashlib.sha256(f.content.encode()).hexdigest())}'
        + (', "executable": true}' if f.executable else "}")
        for f in sorted(files, key=lambda f: f.path)
    ]


def _manifest_text(entries: list[str], source: Source | None, inputs: dict[str, str] | None) -> str:
    head: dict[str, object] = {}
    if source is not None:
        head = {"rocefab": source.rocefab, "intent": {"path": source.intent_path, "sha256": source.intent_sha256}}
    if inputs:
        head["inputs"] = dict(sorted(inputs.items()))
    # one line per file (53,000 of them at 98,304 GPUs): a re-render's diff of the manifest is a line per changed
    # file, and the six lines each of an indented entry were a fifth of its bytes
    outline = json.dumps({**head, "files": []}, indent=2)
    listed = ",\n".join(f"    {entry}" for entry in entries)
    return outline.removesuffix("[]\n}") + (f"[\n{listed}\n  ]\n}}\n" if entries else "[]\n}\n")


def read_manifest(folder: Path) -> Manifest:
    """The manifest of a rendered folder; OutputError when there is none or it is not one rocefab wrote."""
    path = folder / MANIFEST
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        entries = tuple(Entry(str(e["path"]), str(e["device"]), str(e["kind"]), str(e["sha256"]),
                              executable=e.get("executable") is True)
                        for e in document["files"])
        intent = document.get("intent")
        source = None if intent is None else Source(str(document["rocefab"]), str(intent["path"]),
                                                    str(intent["sha256"]))
        inputs = {str(device): str(key) for device, key in document.get("inputs", {}).items()}
    except FileNotFoundError:
        raise OutputError(f"{folder} holds no {MANIFEST}: not a folder rocefab rendered") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise OutputError(f"{path}: not a rocefab manifest ({exc})") from None
    for entry in entries:
        if not _is_inside(entry.path):
            raise OutputError(f"{path}: lists {entry.path!r}, which is not a path inside the folder")
    return Manifest(entries, source, inputs)


def changed_files(folder: Path, manifest: Manifest) -> list[str]:
    """The manifest's paths whose file is missing or whose bytes no longer hash as listed, in manifest order."""
    changed = []
    for entry in manifest.entries:
        try:
            digest = hashlib.sha256((folder / entry.path).read_bytes()).hexdigest()
        except OSError:
            changed.append(entry.path)
            continue
        if digest != entry.sha256:
            changed.append(entry.path)
    return changed


def _is_inside(relative: str) -> bool:
    parts = relative.split("/")
    return bool(relative) and not relative.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _previous(target: Path) -> Manifest:
    """The previous render's manifest (an empty one for a new or foreign folder)."""
    if not (target / MANIFEST).is_file():
        return Manifest((), None)
    return read_manifest(target)


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise OutputError(f"{target} exists and is not a folder")


def _collisions(target: Path, new: Iterable[str], owned: set[str]) -> list[str]:
    """New paths that would overwrite (or sit under) something of the folder no manifest claims.

    One listing per folder, not a stat per path: a 98,304-GPU fabric writes 57,000 files into a handful of
    folders, and four failed stats per file cost seconds of system time."""
    listings: dict[str, frozenset[str] | None] = {}  # per folder: its entries; None when a file or link blocks it

    def listing(folder: str) -> frozenset[str] | None:
        if folder not in listings:
            here = target / folder
            parent = folder.rpartition("/")[0]
            if folder and (listing(parent) is None or here.is_symlink() or (here.exists() and not here.is_dir())):
                # a parent that exists as a file (or a symlink, which could lead outside) blocks the path
                listings[folder] = None
            else:
                try:
                    listings[folder] = frozenset(entry.name for entry in here.iterdir())
                except FileNotFoundError:
                    listings[folder] = frozenset()
        return listings[folder]

    clashes = []
    for path in new:
        if path in owned:
            continue
        folder, _, name = path.rpartition("/")
        names = listing(folder)
        if names is None or name in names:  # listed: there as a file, a folder or a link, dangling or not
            clashes.append(path)
    return clashes


def _prune_empty(target: Path, removed: Iterable[str]) -> None:
    """Remove folders the removed files leave empty, deepest first, never the target itself."""
    parents = {p for path in removed for p in Path(path).parents if str(p) != "."}
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty: something else lives there
            (target / parent).rmdir()


# Who stages: host and process, so a later render can tell a killed render's leftovers from a live one's (on a
# shared filesystem, only this host's processes can be asked).
_HOST = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64] or "host"
_OWNER = f"{_HOST}-{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _remove_abandoned_staging(target: Path) -> None:
    """Remove staging folders a killed render left behind: this host's, whose process is gone. Others' (another
    host's, a running render's) are left alone."""
    for child in target.glob(f"{STAGING_PREFIX}*"):
        owner = re.fullmatch(rf"{re.escape(STAGING_PREFIX)}(.+)-([0-9]+)-[^-]*", child.name)
        if owner and owner.group(1) == _HOST and int(owner.group(2)) != os.getpid() \
                and not _alive(int(owner.group(2))) and child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)


def _move_into_place(staging: Path, target: Path, new: Sequence[str]) -> frozenset[str]:
    """Rename each staged file over its place in `target`; a folder the target does not have yet moves whole,
    in one rename (a fresh render of a 98,304-GPU fabric: 57,000 renames fewer). Only the staged files live in
    the staging folder, so a folder moved whole carries nothing but new files. Returns the files renamed one by
    one (a rename sets a file's change time; moving its folder does not)."""
    moved: dict[str, bool] = {"": False}  # per folder met: whether it moved whole (with all its files)

    def place(folder: str) -> bool:
        if folder not in moved:
            parent = folder.rpartition("/")[0]
            if place(parent):
                moved[folder] = True
            elif (target / folder).exists():
                moved[folder] = False
            else:
                (staging / folder).rename(target / folder)
                moved[folder] = True
        return moved[folder]

    renamed = []
    for path in new:
        if not place(path.rpartition("/")[0]):
            (staging / path).replace(target / path)
            renamed.append(path)
    return frozenset(renamed)


def _holds_text(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def publish(target: Path, fill: Callable[[Path, Unchanged], Filled], source: Source | None = None) -> Filled:
    """Let `fill` write into a staging folder inside `target` (skipping what `Unchanged` says is there already),
    then move its files into place (see the module's docstring); returns the manifest entries. The input keys
    `fill` gives are recorded in the final manifest only, so an interrupted render leaves none behind."""
    _check_target(target)
    created = not target.exists()  # a render that fails leaves no folder it made
    target.mkdir(parents=True, exist_ok=True)
    target = target.resolve()
    previous = _previous(target)
    owned = {e.path for e in previous.entries}
    by_device: dict[str, list[Entry]] = {}
    for entry in previous.entries:
        by_device.setdefault(entry.device, []).append(entry)
    _remove_abandoned_staging(target)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{_OWNER}-", dir=target))
    published = False
    try:
        unchanged = Unchanged(target, frozenset(owned), new_file_modes(),
                              {device: tuple(e) for device, e in by_device.items()}, previous.inputs,
                              previous.source.intent_sha256 if previous.source is not None else "",
                              load_seen(target) if owned else {})  # nothing to keep: no record needed
        filled = fill(staging, unchanged)
        entries = filled.entries
        new = [e.path for e in entries]
        clashes = _collisions(target, new, owned)
        if clashes:
            shown = ", ".join(clashes[:5]) + (f" and {len(clashes) - 5} more" if len(clashes) > 5 else "")
            raise OutputError(f"{target} already holds {shown}, which no previous render of rocefab wrote "
                              f"(per {MANIFEST}): refusing to overwrite")
        stale = sorted(owned - set(new))
        lines = _manifest_lines(entries)
        final = _manifest_text(lines, source, filled.inputs)
        if not stale and all(e.kept for e in entries) and _holds_text(target / MANIFEST, final):
            published = True  # nothing to move, nothing to remove, the very manifest: the folder is left as it is
            save_seen(target, staging, entries, frozenset())
            return filled
        # Until the final manifest is in place, one listing every path either render owns, so an interruption
        # leaves no rocefab file unclaimed (the next render then replaces or removes it).
        # (the same lines as the final manifest's when nothing is stale: made once, 41,000 at 98,304 GPUs)
        claim = _manifest_lines([*entries, *(Entry(p, "fabric", "stale", "") for p in stale)]) if stale else lines
        (target / MANIFEST).write_text(_manifest_text(claim, source, None), encoding="utf-8")
        renamed = _move_into_place(staging, target, [e.path for e in entries if not e.kept])
        for path in stale:
            with contextlib.suppress(FileNotFoundError):
                (target / path).unlink()
        _prune_empty(target, stale)
        written = target / f".{MANIFEST}.new"
        written.write_text(final, encoding="utf-8")
        written.replace(target / MANIFEST)
        published = True
        save_seen(target, staging, entries, renamed)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not published:
            with contextlib.suppress(OSError):
                target.rmdir()
    return filled
