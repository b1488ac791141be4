"""Deploy faults, one device at a time, through the command a user runs: `rocefab apply` in its own process
against the lab of intents/lab.yaml (Cumulus spine1, EOS leaf1-a/leaf1-b, hosts gpu001-gpu004) served by this
test process, whose emulators a test can cut off at a chosen command.

Each test asserts what was printed for every device it touched and what every one of them runs afterwards:
a device said to be rolled back runs its old config; a device whose state could not be read back is reported
as "FAILED - state unknown" (exit 3), never as rolled back.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rocefab.lab.fabric import FabricLab
from rocefab.lab.host.fakehost import snapshot
from rocefab.renderers.pipeline import check_file

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intents" / "lab.yaml"
UNKNOWN = "FAILED - state unknown"


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[FabricLab]:
    checked = check_file(INTENT, "lab")
    assert checked.plan is not None
    fabric = FabricLab(checked.plan, tmp_path / "lab")
    fabric.start()
    fabric.write_files()
    yield fabric
    fabric.stop()


def inventory(lab: FabricLab, timeout_s: int | None = None) -> Path:
    path = lab.folder / "inventory.yaml"
    if timeout_s is not None:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["defaults"]["timeout_s"] = timeout_s
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def rocefab(lab: FabricLab, *args: str, intent: Path = INTENT, inventory_path: Path | None = None,
            background: bool = False) -> Any:
    command = [sys.executable, "-m", "rocefab", args[0], str(intent), "-i", str(inventory_path or inventory(lab)),
               *(["--yes"] if args[0] == "apply" else []), *args[1:]]
    env = {**os.environ, "COLUMNS": "250"}
    if background:
        return subprocess.Popen(command, cwd=lab.folder.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)
    done = subprocess.run(command, cwd=lab.folder.parent, capture_output=True, text=True, timeout=240, env=env)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr  # library noise ends up in the reasons
    return done


def state(lab: FabricLab, name: str) -> str:
    device = lab.emulator(name)
    if hasattr(device, "running_text"):
        return str(device.running_text())
    if hasattr(device, "applied"):
        return json.dumps(device.applied, sort_keys=True)
    files = snapshot(device.sandbox / "sys")
    return json.dumps({k: v.decode(errors="replace") for k, v in files.items() if ".stubstate" not in k},
                      sort_keys=True)


def row(output: str, device: str) -> str:
    """The table row of `device`, its cells joined across the lines rich wraps them onto."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(rf"^\W*{re.escape(device)}\s", line)]
    assert starts, f"no row for {device}:\n{output}"
    cells = [c.strip() for c in lines[starts[-1]].split("│")]
    for line in lines[starts[-1] + 1:]:
        more = [c.strip() for c in line.split("│")]
        if len(more) != len(cells) or more[1]:
            break  # the next row, or the table's end
        cells = [f"{a} {b}".strip() for a, b in zip(cells, more, strict=True)]
    return " | ".join(cells)


def test_unreachable_mid_commit_is_state_unknown_and_its_wave_is_rolled_back(lab: FabricLab) -> None:
    before = {name: state(lab, name) for name in ("leaf1-a", "leaf1-b")}
    leaf = lab.emulator("leaf1-b")
    # The commit (with its timer) is made on leaf1-b, then its management link goes: no answer, no rollback.
    leaf.reach.down_on, leaf.reach.down_after = r"^configure session \S+ commit timer", True
    result = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b")
    assert result.returncode == 3, result.stdout + result.stderr
    assert UNKNOWN in row(result.stdout, "leaf1-b") and "commit failed" in row(result.stdout, "leaf1-b")
    assert "rollback did not complete" in row(result.stdout, "leaf1-b")
    assert "rolled back" in row(result.stdout, "leaf1-a") and UNKNOWN not in row(result.stdout, "leaf1-a")
    assert "state unknown for 1 device(s): leaf1-b" in result.stderr
    assert f"rocefab diff {INTENT} -i" in result.stderr and "--only leaf1-b" in result.stderr
    assert state(lab, "leaf1-a") == before["leaf1-a"], "rolled back means the old config"
    assert state(lab, "leaf1-b") != before["leaf1-b"], "unknown was right: leaf1-b runs the new config for now"
    leaf.expire_commit_timer_now()
    assert state(lab, "leaf1-b") == before["leaf1-b"], "its commit timer reverts it"


def test_unreachable_at_confirm_is_state_unknown_and_names_the_commit_timer(lab: FabricLab) -> None:
    before = {name: state(lab, name) for name in ("leaf1-a", "leaf1-b")}
    leaf = lab.emulator("leaf1-b")
    leaf.reach.down_on = r"^configure session \S+ commit$"  # the confirm never arrives
    result = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b", "--confirm", "120")
    assert result.returncode == 3, result.stdout + result.stderr
    b = row(result.stdout, "leaf1-b")
    assert UNKNOWN in b and "confirm failed" in b and "commit timer reverts it 120 s after the commit" in b
    assert "rolled back" in row(result.stdout, "leaf1-a")
    assert state(lab, "leaf1-a") == before["leaf1-a"]
    leaf.expire_commit_timer_now()
    assert state(lab, "leaf1-b") == before["leaf1-b"]


def test_unreachable_mid_rollback_is_state_unknown(lab: FabricLab) -> None:
    before = {name: state(lab, name) for name in ("leaf1-a", "leaf1-b")}
    failing, cut = lab.emulator("leaf1-b"), lab.emulator("leaf1-a")
    failing.faults.drop_on = r"^configure session \S+ commit timer"  # leaf1-b's commit answer is lost, once made
    failing.faults.drop_after = True
    cut.reach.down_on = r"^configure session \S+ abort$"  # leaf1-a goes away as its rollback starts
    result = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b")
    assert result.returncode == 3, result.stdout + result.stderr
    a, b = row(result.stdout, "leaf1-a"), row(result.stdout, "leaf1-b")
    assert UNKNOWN in a and "rollback did not complete" in a and "rolled back:" not in a
    assert "failed" in b and UNKNOWN not in b and "rolled back: the running config read back equals" in b
    assert state(lab, "leaf1-b") == before["leaf1-b"]
    cut.expire_commit_timer_now()
    assert state(lab, "leaf1-a") == before["leaf1-a"]


def test_nvue_switch_unreachable_mid_apply_is_state_unknown(lab: FabricLab) -> None:
    before = state(lab, "spine1")
    spine = lab.emulator("spine1")
    spine.reach.down_on, spine.reach.down_after = r"^nv config apply -y --confirm", True
    result = rocefab(lab, "apply", "--only", "spine1")
    assert result.returncode == 3, result.stdout + result.stderr
    assert UNKNOWN in row(result.stdout, "spine1") and "rolled back:" not in row(result.stdout, "spine1")
    assert state(lab, "spine1") != before, "it is in fact fully new, with its confirm window open"
    spine.expire_confirm_now()
    assert state(lab, "spine1") == before


def test_host_unreachable_mid_script_is_state_unknown(lab: FabricLab) -> None:
    before = state(lab, "gpu001")
    host = lab.emulator("gpu001")
    host.reach.down_on, host.reach.down_after = r"^bash \S+candidate'?$", True
    result = rocefab(lab, "apply", "--only", "gpu001")
    assert result.returncode == 3, result.stdout + result.stderr
    assert UNKNOWN in row(result.stdout, "gpu001") and "may have stopped part-way" in row(result.stdout, "gpu001")
    assert state(lab, "gpu001") != before  # it ran; the answer was lost


def test_a_slow_device_times_out_and_nothing_changes(lab: FabricLab) -> None:
    before = {name: state(lab, name) for name in ("leaf1-a", "leaf1-b")}
    lab.emulator("leaf1-b").faults.delay_seconds = 4
    started = time.monotonic()
    result = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b", inventory_path=inventory(lab, timeout_s=2))
    assert result.returncode == 1, result.stdout + result.stderr
    # The first thing an apply does to every switch is save its running config: that is where it times out.
    assert "timeout after 2 s" in row(result.stdout, "leaf1-b") and "failed" in row(result.stdout, "leaf1-b")
    assert "failed - nothing was changed" in result.stdout
    assert time.monotonic() - started < 60
    assert {name: state(lab, name) for name in before} == before


def _wait_for_lock(lock: Path, process: subprocess.Popen[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if lock.exists() and lock.read_text(encoding="utf-8").strip():
            holder: dict[str, Any] = json.loads(lock.read_text(encoding="utf-8"))
            return holder
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the first run never took the lock")


@pytest.mark.parametrize("second", ["same intent", "different intent"])
def test_two_applies_at_once_the_second_is_refused(lab: FabricLab, tmp_path: Path, second: str) -> None:
    other = INTENT
    if second == "different intent":
        doc = yaml.safe_load(INTENT.read_text(encoding="utf-8"))
        doc["qos"] = {"ets": {"roce_percent": 70, "default_percent": 30}}
        other = tmp_path / "other.yaml"
        other.write_text(yaml.safe_dump(doc), encoding="utf-8")
    lab.emulator("leaf1-a").faults.delay_seconds = 0.3  # the first run takes a while
    first = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b", background=True)
    holder = _wait_for_lock(inventory(lab).with_name("inventory.yaml.lock"), first)
    assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
    # The first run is paused while the second starts: on a loaded machine a Python start-up can outlast a whole
    # apply of two leaves, and the second run would then find the lock free. Paused, it still holds the lock.
    os.kill(first.pid, signal.SIGSTOP)
    try:
        refused = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b", intent=other)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=240)
    assert first.returncode == 0, out + err
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "another rocefab run holds" in refused.stderr and f"pid {first.pid} on {socket.gethostname()}" in \
        refused.stderr and "nothing was changed" in refused.stderr
    again = rocefab(lab, "diff", "--only", "leaf1-a,leaf1-b")  # the first run's intent is what runs
    assert again.returncode == 0 and "2 unchanged" in again.stdout, again.stdout + again.stderr
    assert "bandwidth percent 70" not in state(lab, "leaf1-a") + state(lab, "leaf1-b")


def test_a_stale_lock_is_taken_over_and_another_hosts_lock_needs_force(lab: FabricLab) -> None:
    lock = inventory(lab).with_name("inventory.yaml.lock")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    record = {"pid": int(dead.stdout), "host": socket.gethostname(), "started": "2026-01-01 00:00:00 UTC",
              "command": "apply", "run_id": "20260101T000000-000000"}
    lock.write_text(json.dumps(record), encoding="utf-8")
    result = rocefab(lab, "diff", "--only", "leaf1-a")
    assert result.returncode == 0, result.stderr
    assert f"took over a stale lock: pid {record['pid']} on {socket.gethostname()}" in result.stderr
    lock.write_text(json.dumps({**record, "host": "ops-jumphost-2"}), encoding="utf-8")
    refused = rocefab(lab, "diff", "--only", "leaf1-a")
    assert refused.returncode == 2 and "--force-unlock" in refused.stderr and "ops-jumphost-2" in refused.stderr
    forced = rocefab(lab, "diff", "--only", "leaf1-a", "--force-unlock")
    assert forced.returncode == 0 and "--force-unlock: took over the lock of pid" in forced.stderr
    assert lock.read_text(encoding="utf-8") == "", "a finished run leaves the lock free"


def test_a_killed_run_leaves_leftovers_that_the_next_run_cleans(lab: FabricLab) -> None:
    leaf, spine, host = lab.emulator("leaf1-a"), lab.emulator("spine1"), lab.emulator("gpu001")
    leaf.faults.delay_seconds = spine.faults.delay_s = 0.5
    run = rocefab(lab, "diff", "--only", "leaf1-a,spine1,gpu001", background=True)
    deadline = time.monotonic() + 60

    def staged() -> bool:
        sessions = [n for n, s in leaf.sessions.items() if n.startswith("rocefab_") and s.state == "pending"]
        files = [p.name for p in spine.root.iterdir() if p.name.startswith("rocefab-")]
        return bool(sessions and files)

    while not staged():
        assert time.monotonic() < deadline and run.poll() is None, run.communicate()
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.wait()
    leaf.faults.delay_seconds = spine.faults.delay_s = 0
    (host.sandbox / "rocefab").mkdir(exist_ok=True)
    (host.sandbox / "rocefab" / "gpu001.roce.sh.20260101T000000-000000.candidate").write_text("#!/bin/bash\n")
    result = rocefab(lab, "diff", "--only", "leaf1-a,spine1,gpu001")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "took over a stale lock" in result.stderr
    assert re.search(r"leaf1-a: aborted configuration session rocefab_\S+, left by an earlier run", result.stderr)
    assert re.search(r"spine1: removed rocefab-\S+\.candidate\.yaml, left by an earlier run", result.stderr)
    assert "gpu001: removed rocefab/gpu001.roce.sh.20260101T000000-000000.candidate" in result.stderr
    assert not [n for n, s in leaf.sessions.items() if n.startswith("rocefab_") and s.state == "pending"]
    assert not [p for p in spine.root.iterdir() if p.name.startswith("rocefab-")]
    assert not list((host.sandbox / "rocefab").glob("*.candidate"))
