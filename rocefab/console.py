"""The command line's consoles and exit codes, shared by every command module."""

from __future__ import annotations

import sys
from typing import Any

import typer
from rich.console import Console

# 3: a deploy left a device in a state it could not establish (see the run's output for how to check)
EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_UNKNOWN = 0, 1, 2, 3

# Wide enough for tables when piped; a terminal keeps its own width. No emoji codes: a position such as
# `intent.yaml:100:9` must print as itself, not as `intent.yaml💯9`.
out = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


def command_group(**options: Any) -> typer.Typer:
    """A command group as every rocefab group is: `-h` and `--help`, plain help text (typer's rich panels
    print a `<bool>` placeholder after every flag), no arguments shows the help, no tracebacks."""
    settings: dict[str, Any] = {"no_args_is_help": True, "add_completion": False, "pretty_exceptions_enable": False,
                                "rich_markup_mode": None,
                                "context_settings": {"help_option_names": ["-h", "--help"]}}
    return typer.Typer(**(settings | options))
