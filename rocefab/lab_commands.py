"""`rocefab lab up|down|status`: a local lab of emulated devices for a fabric, to try diff and apply on."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from rocefab.console import EXIT_FINDINGS, EXIT_INPUT, command_group, err, out
from rocefab.pipeline_commands import checked_plan

lab_app = command_group(help="A local lab on 127.0.0.1 that speaks each device's real protocol.", no_args_is_help=True)
DirOpt = Annotated[Path, typer.Option("--dir", help="where the lab keeps its inventory and state")]
DEFAULT_DIR = Path(".rocefab-lab")
STATE = "lab.json"
START_TIMEOUT_S = 120
# The fault kinds lab/control.py knows, for the help text without importing the lab (tests compare the two).
KIND_NAMES = ("mtu", "pfc-off", "speed", "link-down", "miscable", "bgp-down", "trust-pcp", "ecn-off", "global-pause",
              "dscp-map", "nic-dscp-map", "strict-off", "unreachable", "pause-storm", "drops", "errors",
              "watchdog-storm", "ecn-marks", "bond-leave", "no-address", "tos-reset", "nccl-set", "firmware",
              "peermem-unload", "retransmits", "host-pause-storm", "lose-confirm", "expire-confirm",
              "drop-at", "delay", "reject", "wrong-password")


def _state(folder: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads((folder / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@lab_app.command()
def up(intent: Annotated[Path, typer.Argument(help="intent YAML file")], folder: DirOpt = DEFAULT_DIR) -> None:
    """Start an emulated device for every switch and host of the intent, in the background."""
    if importlib.util.find_spec("asyncssh") is None:
        err.print("the lab's SSH servers need the lab extra: pip install 'rocefab[lab]'", markup=False)
        raise typer.Exit(EXIT_INPUT)
    plan = checked_plan(intent)
    state = _state(folder)
    if state and _alive(int(state["pid"])):
        if state.get("intent_sha256") == plan.source.intent_sha256 and state.get("ready"):
            # `up` twice is still up: the lab of this very intent keeps running, with whatever was pushed to it
            out.print(f"lab already up (pid {state['pid']}) for this intent; inventory: {state['inventory']}")
            return
        err.print(f"a lab for another intent is running from {folder} (pid {state['pid']}); `rocefab lab down` first",
                  markup=False)
        raise typer.Exit(EXIT_INPUT)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STATE).unlink(missing_ok=True)
    log = (folder / "lab.log").open("w", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "rocefab.lab.serve", str(intent), "--dir", str(folder)],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        state = _state(folder)
        if state and state.get("ready"):
            break
        if process.poll() is not None:
            err.print(f"the lab did not start:\n{(folder / 'lab.log').read_text(encoding='utf-8')}", markup=False)
            raise typer.Exit(EXIT_FINDINGS)
        time.sleep(0.1)
    else:
        process.terminate()
        err.print(f"the lab did not become ready within {START_TIMEOUT_S} s; see {folder / 'lab.log'}", markup=False)
        raise typer.Exit(EXIT_FINDINGS)
    kinds: dict[str, int] = {}
    for kind in state["devices"].values():
        kinds[kind] = kinds.get(kind, 0) + 1
    out.print(f"lab up (pid {process.pid}): {len(plan.switches)} switches and {len(plan.hosts)} hosts on 127.0.0.1 "
              f"({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
    out.print(f"inventory: {state['inventory']}")


@lab_app.command()
def down(folder: DirOpt = DEFAULT_DIR) -> None:
    """Stop the lab started from this folder."""
    state = _state(folder)
    if state is None:
        out.print(f"no lab is running from {folder}")
        return
    pid = int(state["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    (folder / STATE).unlink(missing_ok=True)
    out.print(f"lab down (pid {pid})")


@lab_app.command()
def status(folder: DirOpt = DEFAULT_DIR) -> None:
    """Say whether a lab runs from this folder, and where its inventory is."""
    state = _state(folder)
    if state is None or not _alive(int(state["pid"])):
        out.print(f"no lab is running from {folder}")
        raise typer.Exit(EXIT_FINDINGS)
    out.print(f"lab running (pid {state['pid']}): {len(state['devices'])} devices; inventory {state['inventory']}")


@lab_app.command()
def fault(
    device: Annotated[str | None, typer.Argument(help="the device to break")] = None,
    kind: Annotated[str | None, typer.Argument(help="what breaks: " + ", ".join(KIND_NAMES))] = None,
    args: Annotated[list[str] | None, typer.Argument(help="the fault's arguments (a port, a value)")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="undo every fault: devices and cables as before")] = False,
    folder: DirOpt = DEFAULT_DIR,
) -> None:
    """Break the running lab as fabrics break (`mtu PORT BYTES`, `pfc-off PORT`, `speed PORT GBPS`, `link-down
    PORT`, `miscable PORT PORT`, `bgp-down PEER`; on hosts `trust-pcp NETDEV`, `ecn-off NETDEV`, `mtu NETDEV
    BYTES`, `global-pause NETDEV`; for a deploy to meet `lose-confirm`, `expire-confirm`, `drop-at PATTERN`,
    `delay SECONDS`, `reject PATTERN`, `wrong-password`), or `--clear` them all
    (a deploy fault's `--clear` gives the device back its voice and leaves what was committed)."""
    from rocefab.lab import control

    state = _state(folder)
    if state is None or not _alive(int(state["pid"])):
        err.print(f"no lab is running from {folder}; `rocefab lab up INTENT` first", markup=False)
        raise typer.Exit(EXIT_INPUT)
    if clear == (device is not None):
        err.print("give DEVICE KIND [ARGS...] or --clear", markup=False)
        raise typer.Exit(EXIT_INPUT)
    body: dict[str, Any] = {"clear": True} if clear else {"device": device, "kind": kind or "", "args": args or []}
    try:
        reply = control.request(folder, body)
    except OSError as exc:
        err.print(f"the lab at {folder} does not answer its control socket: {exc}", markup=False)
        raise typer.Exit(EXIT_FINDINGS) from None
    if not reply.get("ok"):
        err.print(str(reply.get("error")), markup=False)
        raise typer.Exit(EXIT_INPUT)
    out.print(str(reply.get("said")), markup=False)
