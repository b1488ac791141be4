"""Device-local sections a full replace must not wipe: accounts, management access, logging.

rocefab's rendered config owns the fabric; the device keeps its own users and management plane. Before a
replace, the running config's top-level blocks that match these prefixes and that the candidate does not
configure are carried into the candidate, so a replace never locks the operator out and never needs the
secrets those blocks hold to pass through rocefab's files.
"""

from __future__ import annotations

PRESERVED_PREFIXES: dict[str, tuple[str, ...]] = {
    "eos": (
        "username ", "aaa ", "enable password", "enable secret", "role ", "management ssh",
        "management security", "management api", "interface Management", "vrf instance", "ip route vrf ",
        "ntp ", "logging ", "snmp-server ", "ip name-server", "dns domain", "daemon ",
    ),
    "nxos": (
        "version ", "username ", "feature ssh", "feature nxapi", "feature scp-server", "ssh ", "aaa ", "role ",
        "interface mgmt0", "vrf context management", "boot ", "line ", "snmp-server ", "ntp ", "logging ",
        "ip domain", "copp profile", "rmon ", "nxapi ",
    ),
}


def top_level_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Split an indented config into (header line, lines of the block) pairs; `!` and `end` dropped."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or line == "end":
            continue
        if line[0] != " ":
            blocks.append((line, [line]))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def carry_preserved(platform: str, running: str, candidate: str) -> str:
    """The candidate plus every preserved block of the running config it does not already configure."""
    prefixes = PRESERVED_PREFIXES.get(platform, ())
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


def without_preserved(platform: str, running: str) -> str:
    """The running config minus the blocks a replace carries over (accounts and secrets among them)."""
    prefixes = PRESERVED_PREFIXES[platform]
    kept = [lines for header, lines in top_level_blocks(running) if not header.startswith(prefixes)]
    return "\n".join(line for block in kept for line in block) + "\n"
