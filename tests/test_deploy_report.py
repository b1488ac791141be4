"""`print_diffs` writes an uncoloured printable diff itself: it must write exactly what rich would."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from rocefab import deploy_report
from rocefab.deploy.fleet import DeviceResult, Status

DIFFS = [
    "--- leaf1-a running\n+++ leaf1-a candidate\n@@ -1,2 +1,2 @@\n-interface Ethernet1/1\n+interface Ethernet1/1 \n"
    "  mtu 9216\n+" + "x" * 450,  # a trailing blank, a line far wider than the console
    "# a note\n+ wide 日本語 \uff57\uff49\uff44\uff45\n- trailing   \n\n\n+last",  # wide characters, empty lines inside
    "+a\tb\n-c\x07d",  # a tab rich expands and a bell it drops: these go through rich
    "",  # nothing to show
    "+\u200dzero width joiner",  # not printable: through rich
]


def _rich(diffs: list[str]) -> str:
    console = Console(file=io.StringIO(), highlight=False, width=200, color_system=None)
    for diff in diffs:
        if diff:
            console.print(Text("\n".join(diff.splitlines())), soft_wrap=True)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_plain_diffs_are_what_rich_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(file=io.StringIO(), highlight=False, width=200, color_system=None)
    monkeypatch.setattr(deploy_report, "out", console)
    deploy_report.print_diffs([DeviceResult(f"d{i}", "eos", Status.PENDING, diff=d) for i, d in enumerate(DIFFS)])
    assert isinstance(console.file, io.StringIO)
    assert console.file.getvalue() == _rich(DIFFS)
    assert "+a" + " " * 6 + "b" in console.file.getvalue()  # the tab went through rich, which expands it


def test_coloured_diffs_stay_styled(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(file=io.StringIO(), highlight=False, width=200, color_system="standard", force_terminal=True)
    monkeypatch.setattr(deploy_report, "out", console)
    deploy_report.print_diffs([DeviceResult("d", "eos", Status.PENDING, diff="+added\n-removed")])
    assert isinstance(console.file, io.StringIO)
    assert "\x1b[32m+added" in console.file.getvalue()
