"""Device-local sections a full replace must not wipe: accounts, management access, logging (each
platform unit lists the block headers it preserves).

rocefab's rendered config owns the fabric; the device keeps its own users and management plane. Before a
replace, the running config's top-level blocks that match these prefixes and that the candidate does not
configure are carried into the candidate, so a replace never locks the operator out and never needs the
secrets those blocks hold to pass through rocefab's files.
"""

from __future__ import annotations

from rocefab.renderers.configtext import parse_indented


def top_level_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Split an indented config into (header line, raw lines of the block) pairs; `!` and `end` dropped."""
    return [(node.raw, node.block()) for node in parse_indented(text).children]


def carry_preserved(prefixes: tuple[str, ...], running: str, candidate: str) -> str:
    """The candidate plus every preserved block (a header starting with one of `prefixes`, which the
    platform's unit lists) of the running config it does not already configure."""
    configured = {header for header, _ in top_level_blocks(candidate)}
    carried = [
        "\n".join(lines)
        for header, lines in top_level_blocks(running)
        if header.startswith(prefixes) and header not in configured
    ]
    if not carried:
        return candidate
    body = candidate.rstrip("\n")
    tail = ""
    if body.endswith("\nend"):
        body, tail = body[: -len("\nend")], "\nend"
    return body + "\n" + "\n".join(carried) + tail + "\n"


def without_preserved(prefixes: tuple[str, ...], running: str) -> str:
    """The running config minus the blocks a replace carries over (accounts and secrets among them)."""
    kept = [lines for header, lines in top_level_blocks(running) if not header.startswith(prefixes)]
    return "\n".join(line for block in kept for line in block) + "\n"
