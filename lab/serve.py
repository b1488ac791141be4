"""`python -m rocefab.lab.serve INTENT --dir DIR`: run a fabric's lab in the foreground until SIGTERM.

`rocefab lab up` starts this in the background and waits for DIR/lab.json to say it is ready.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

from rocefab.lab import control
from rocefab.lab.fabric import FabricLab
from rocefab.renderers.pipeline import check_file

STATE = "lab.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocefab.lab.serve")
    parser.add_argument("intent", type=Path)
    parser.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args(argv)
    checked = check_file(args.intent, "lab")
    if checked.plan is None:
        print(f"{args.intent} does not plan; run `rocefab validate {args.intent}`", file=sys.stderr)
        return 1
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    lab = FabricLab(checked.plan, args.dir)
    lab.start()
    stop_control = None
    try:
        assert lab.faults is not None
        stop_control = control.serve(args.dir.resolve(), lab.faults)
        inventory = lab.write_files()
        state = {"pid": os.getpid(), "intent": str(args.intent), "intent_sha256": checked.plan.source.intent_sha256,
                 "inventory": str(inventory),
                 "devices": {d.name: d.kind for d in lab.devices}, "ready": True}
        (args.dir / STATE).write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        print(f"lab ready: {len(lab.devices)} devices, inventory {inventory}", flush=True)
        stop.wait()
    finally:
        if stop_control is not None:
            stop_control()
        lab.stop()
        (args.dir / STATE).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
