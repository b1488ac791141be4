"""The host library (templates/host/lib.sh) written once per render and named by its content, instead of once in
every host's script: at 12,288 hosts it was most of the render's bytes.

A host's rendered script holds, where the library's text used to be, a block that loads `lib/roce-lib.<hash>.sh`
from beside the script and refuses to run when that file is missing or holds other bytes than the ones the script
was rendered with (its SHA-256 is in the block). What reaches the host is self-contained all the same: `rocefab
apply` stages the script with the library's text in place of the block (`embed`, byte for byte the script a
render used to write), and a script run from the render folder installs itself that way too (lib.sh
`self_text`), so the installed script and its boot unit never depend on a file beside them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cache

from rocefab.renderers.templating import render

FOLDER = "hosts/lib"
KIND = "host-library"
BEGIN = "# >>> rocefab host library"
END = "# <<< rocefab host library"
_BLOCK = re.compile(rf"^{re.escape(BEGIN)} (?P<name>roce-lib\.[0-9a-f]{{12}}\.sh) sha256=(?P<sha>[0-9a-f]{{64}})\n"
                    rf".*?^{re.escape(END)}$", re.MULTILINE | re.DOTALL)


class LibraryMismatch(Exception):
    """A host script and the library it names do not go together."""


@cache
def library() -> tuple[str, str, str]:
    """(the library's text, its SHA-256, its file name)."""
    text = render("host/lib.sh")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text, digest, f"roce-lib.{digest[:12]}.sh"


def library_path() -> str:
    return f"{FOLDER}/{library()[2]}"


def inline_text() -> str:
    """The library as a script carries it inline: its text without the final newline (the template's line ends it)."""
    return library()[0].removesuffix("\n")


@cache
def loader_block() -> str:
    """The lines a rendered script carries in the library's place (no final newline, as `inline_text`)."""
    _, digest, name = library()
    return "\n".join([
        f"{BEGIN} {name} sha256={digest}",
        "# Run from the render folder, this block loads the library from lib/ beside the script, refusing any other",
        "# version; `rocefab apply`, and the script's own install, put the library's text here instead.",
        'ROCEFAB_LIB_DIR=.; [[ $0 == */* ]] && ROCEFAB_LIB_DIR=${0%/*}',
        f'ROCEFAB_LIB="$ROCEFAB_LIB_DIR/lib/{name}"',
        "ROCEFAB_LIB_SUM=",
        '[[ -r $ROCEFAB_LIB ]] && read -r ROCEFAB_LIB_SUM _ < <(sha256sum "$ROCEFAB_LIB")',
        f'if [[ $ROCEFAB_LIB_SUM != {digest} ]]; then',
        f'  echo "ERROR ${{0##*/}} was rendered for host library {name}: $ROCEFAB_LIB is missing or another '
        'version (render again, and copy the render\'s hosts/lib/ beside the script)" >&2',
        "  exit 3",
        "fi",
        "# shellcheck source=/dev/null",
        '. "$ROCEFAB_LIB"',
        END,
    ])


def embed(script: str, files: Mapping[str, str]) -> str:
    """`script` as a host runs it: the library named in its loader block, from `files` (rendered path -> text), in
    place of the block. A script without the block is returned as it is; a library missing from `files`, or with
    other bytes than the script names, raises LibraryMismatch."""
    found = _BLOCK.search(script)
    if found is None:
        return script
    path = f"{FOLDER}/{found.group('name')}"
    text = files.get(path)
    if text is None:
        raise LibraryMismatch(f"the host library {path} the script was rendered for is not in the render")
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != found.group("sha"):
        raise LibraryMismatch(f"{path} is not the host library the script was rendered for (its SHA-256 differs)")
    return script[:found.start()] + text.removesuffix("\n") + script[found.end():]
