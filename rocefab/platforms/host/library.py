"""The host scripts' libraries, each written once per render and named by its content instead of once in every
host's script: the NIC/bond script's (templates/host/lib.sh) and the preflight's checks
(templates/host/preflight-lib.sh). At 12,288 hosts the copies were most of the render's bytes.

A host's rendered script holds, where the library's text used to be, a block that loads `lib/roce-lib.<hash>.sh`
from beside the script and refuses to run when that file is missing or holds other bytes than the ones the script
was rendered with (its SHA-256 is in the block). What reaches the host is self-contained all the same: `rocefab
apply` stages the script with the library's text in place of the block (`embed`: the script with its
library inline), and a script run from the render folder installs itself that way too (lib.sh
`self_text`), so the installed script and its boot unit never depend on a file beside them. The preflight, which
rocefab does not deploy, loads its library from lib/ beside it wherever it runs: hosts/lib/ goes with it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from rocefab.renderers.templating import render

FOLDER = "hosts/lib"
KIND = "host-library"


class LibraryMismatch(Exception):
    """A host script and the library it names do not go together."""


@dataclass(frozen=True)
class ScriptLibrary:
    """One library of the host scripts: its template, the stem of its file name, what the messages call it, and
    how a script that loads it says where the library comes from on a host."""

    template: str
    stem: str
    kind: str  # of its file, in the manifest
    called: str
    origin: str  # a comment line: who puts the library's text in the block's place, or where to copy it from

    @property
    def begin(self) -> str:
        return f"# >>> rocefab {self.called}"

    @property
    def end(self) -> str:
        return f"# <<< rocefab {self.called}"

    def made(self) -> tuple[str, str, str]:
        """(the library's text, its SHA-256, its file name)."""
        return _made(self.template, self.stem)

    def path(self) -> str:
        return f"{FOLDER}/{self.made()[2]}"

    def inline_text(self) -> str:
        """The library as a script carries it inline: its text without the final newline (the template's line ends
        it)."""
        return self.made()[0].removesuffix("\n")

    def loader_block(self) -> str:
        """The lines a rendered script carries in the library's place (no final newline, as `inline_text`)."""
        return _loader_block(self)

    def embed(self, script: str, files: Mapping[str, str]) -> str:
        """`script` as a host runs it: the library named in its loader block, from `files` (rendered path -> text),
        in place of the block. A script without the block is returned as it is; a library missing from `files`,
        or with other bytes than the script names, raises LibraryMismatch."""
        found = re.compile(rf"^{re.escape(self.begin)} (?P<name>{re.escape(self.stem)}\.[0-9a-f]{{12}}\.sh) "
                           rf"sha256=(?P<sha>[0-9a-f]{{64}})\n.*?^{re.escape(self.end)}$",
                           re.MULTILINE | re.DOTALL).search(script)
        if found is None:
            return script
        path = f"{FOLDER}/{found.group('name')}"
        text = files.get(path)
        if text is None:
            raise LibraryMismatch(f"the {self.called} {path} the script was rendered for is not in the render")
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != found.group("sha"):
            raise LibraryMismatch(f"{path} is not the {self.called} the script was rendered for (its SHA-256 differs)")
        return script[:found.start()] + text.removesuffix("\n") + script[found.end():]


@cache
def _made(template: str, stem: str) -> tuple[str, str, str]:
    text = render(template)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text, digest, f"{stem}.{digest[:12]}.sh"


@cache
def _loader_block(lib: ScriptLibrary) -> str:
    _, digest, name = lib.made()
    return "\n".join([
        f"{lib.begin} {name} sha256={digest}",
        "# Run from the render folder, this block loads the library from lib/ beside the script, refusing any other",
        lib.origin,
        'ROCEFAB_LIB_DIR=.; [[ $0 == */* ]] && ROCEFAB_LIB_DIR=${0%/*}',
        f'ROCEFAB_LIB="$ROCEFAB_LIB_DIR/lib/{name}"',
        "ROCEFAB_LIB_SUM=",
        '[[ -r $ROCEFAB_LIB ]] && read -r ROCEFAB_LIB_SUM _ < <(sha256sum "$ROCEFAB_LIB")',
        f'if [[ $ROCEFAB_LIB_SUM != {digest} ]]; then',
        f'  echo "ERROR ${{0##*/}} was rendered for {lib.called} {name}: $ROCEFAB_LIB is missing or another '
        'version (render again, and copy the render\'s hosts/lib/ beside the script)" >&2',
        "  exit 3",
        "fi",
        "# shellcheck source=/dev/null",
        '. "$ROCEFAB_LIB"',
        lib.end,
    ])


# The NIC/bond script's library: apply stages the script with it inline, and the script installs itself so.
ROCE = ScriptLibrary("host/lib.sh", "roce-lib", KIND, "host library",
                     "# version; `rocefab apply`, and the script's own install, put the library's text here instead.")
# The preflight's checks: the per-host script holds only that host's plan. rocefab does not deploy the preflight;
# whoever copies it to a host copies hosts/lib/ with it (the same files for every host).
PREFLIGHT = ScriptLibrary("host/preflight-lib.sh", "preflight-lib", "preflight-library", "preflight library",
                          "# version; copy hosts/lib/ beside the script on the host (the same files for every host).")
LIBRARIES = (ROCE, PREFLIGHT)


def library() -> tuple[str, str, str]:
    """The NIC/bond script's library: (its text, its SHA-256, its file name)."""
    return ROCE.made()


def library_path() -> str:
    return ROCE.path()


def inline_text() -> str:
    return ROCE.inline_text()


def loader_block() -> str:
    return ROCE.loader_block()


def embed(script: str, files: Mapping[str, str]) -> str:
    """The NIC/bond script as a host runs it (see ScriptLibrary.embed)."""
    return ROCE.embed(script, files)
