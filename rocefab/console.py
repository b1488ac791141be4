"""The command line's consoles and exit codes, shared by every command module."""

from __future__ import annotations

import sys

from rich.console import Console

# 3: a deploy left a device in a state it could not establish (see the run's output for how to check)
EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_UNKNOWN = 0, 1, 2, 3

# Wide enough for tables when piped; a terminal keeps its own width.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True)
