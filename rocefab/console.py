"""The command line's consoles and exit codes, shared by every command module."""

from __future__ import annotations

import sys

from rich.console import Console

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2

# Wide enough for tables when piped; a terminal keeps its own width.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True)
