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

from rocefab.deploy.device_lock import PREFIX, Mark, own_mark
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
    # The first thing an apply does is reach every device of the run: that is where it times out.
    assert "timeout after 2 s" in row(result.stdout, "leaf1-b") and "failed" in row(result.stdout, "leaf1-b")
    assert "before the first commit - nothing was changed" in result.stdout
    assert time.monotonic() - started < 60
    assert {name: state(lab, name) for name in before} == before


def marks(lab: FabricLab) -> dict[str, list[str]]:
    """The lock marks on every device of the lab, read from the emulators (EOS flash, Linux /tmp)."""
    found: dict[str, list[str]] = {}
    for name in [d.name for d in lab.devices]:
        device = lab.emulator(name)
        if hasattr(device, "flash_dirs"):
            names = list(device.flash_dirs)
        else:
            folder = (device.sandbox if hasattr(device, "sandbox") else device.root) / "tmp"
            names = [p.name for p in folder.iterdir()]
        found[name] = sorted(n for n in names if n.startswith(PREFIX))
    return found


def _wait_for_mark(lab: FabricLab, name: str, process: subprocess.Popen[str]) -> Mark:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if held := marks(lab)[name]:
            mark = Mark.parse(held[0])
            assert mark is not None, held
            return mark
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the first run never placed its mark")


@pytest.mark.parametrize("second", ["same intent", "different intent"])
def test_two_applies_at_once_the_second_is_refused(lab: FabricLab, tmp_path: Path, second: str) -> None:
    """The second run starts from a copy of the inventory (another operator's checkout): the devices' marks stop it
    before it changes anything, naming the first run."""
    other = INTENT
    if second == "different intent":
        doc = yaml.safe_load(INTENT.read_text(encoding="utf-8"))
        doc["qos"] = {"ets": {"roce_percent": 70, "default_percent": 30}}
        other = tmp_path / "other.yaml"
        other.write_text(yaml.safe_dump(doc), encoding="utf-8")
    copy = tmp_path / "elsewhere" / "inventory.yaml"
    copy.parent.mkdir()
    copy.write_text(inventory(lab).read_text(encoding="utf-8"), encoding="utf-8")
    lab.emulator("leaf1-a").faults.delay_seconds = 0.3  # the first run takes a while
    first = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b", background=True)
    holder = _wait_for_mark(lab, "leaf1-a", first)
    assert holder.pid == first.pid and holder.host == socket.gethostname().split(".")[0]
    # The first run is paused while the second starts: on a loaded machine a Python start-up can outlast a whole
    # apply of two leaves, and the second run would then find the devices free. Paused, it still holds them.
    os.kill(first.pid, signal.SIGSTOP)
    try:
        refused = rocefab(lab, "apply", "--only", "leaf1-a,leaf1-b", intent=other, inventory_path=copy)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=240)
    assert first.returncode == 0, out + err
    assert refused.returncode == 1, refused.stdout + refused.stderr
    for leaf in ("leaf1-a", "leaf1-b"):
        seen = row(refused.stdout, leaf)
        assert f"locked by rocefab run {holder.run_id} of {holder.user} on {holder.host} (pid {first.pid})" in seen, \
            seen
    assert "could not be reached, locked or settled before the first commit - nothing was changed" in refused.stdout
    assert not any(marks(lab).values()), "each run took its marks away again"
    again = rocefab(lab, "diff", "--only", "leaf1-a,leaf1-b")  # the first run's intent is what runs
    assert again.returncode == 0 and "2 unchanged" in again.stdout, again.stdout + again.stderr
    assert "bandwidth percent 70" not in state(lab, "leaf1-a") + state(lab, "leaf1-b")


def test_a_stale_mark_is_removed_and_another_hosts_mark_needs_force(lab: FabricLab) -> None:
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)
    here = own_mark("20260101T000000-000000")
    stale = Mark("20260101T000000-000000", here.user, here.host, dead)
    lab.emulator("leaf1-a").flash_dirs.add(stale.name)
    (lab.emulator("spine1").root / "tmp" / stale.name).mkdir()
    result = rocefab(lab, "apply", "--only", "leaf1-a,spine1", "--no-verify")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("leaf1-a", "spine1"):
        assert f"{name}: removed the lock mark of {stale}: that process is no longer running" in result.stderr
    assert not any(marks(lab).values())

    away = Mark("20260101T000000-0a0b0c", "bob", "ops-jumphost-2", 4242)
    (lab.emulator("gpu001").sandbox / "tmp" / away.name).mkdir()
    before = {name: state(lab, name) for name in ("leaf1-b", "gpu001")}
    looked = rocefab(lab, "diff", "--only", "leaf1-b,gpu001")
    assert looked.returncode == 1 and "ops-jumphost-2" in row(looked.stdout, "gpu001"), looked.stdout
    assert "not compared" in row(looked.stdout, "gpu001") and "would change" in row(looked.stdout, "leaf1-b")
    refused = rocefab(lab, "apply", "--only", "leaf1-b,gpu001", "--no-verify")
    assert refused.returncode == 1 and "--force-unlock" in row(refused.stdout, "gpu001"), refused.stdout
    assert {name: state(lab, name) for name in before} == before, "refused: nothing changed"
    assert marks(lab)["gpu001"] == [away.name] and marks(lab)["leaf1-b"] == [], "only the other run's mark is left"
    forced = rocefab(lab, "apply", "--only", "leaf1-b,gpu001", "--no-verify", "--force-unlock")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert f"gpu001: --force-unlock: removed the lock mark {away.name}" in forced.stderr
    assert not any(marks(lab).values()), "a finished run leaves every device free"


def test_a_killed_run_leaves_leftovers_that_diff_leaves_and_apply_cleans(lab: FabricLab) -> None:
    """diff is read-only, even towards what a killed run left: it names the leftover session that blocks it and
    leaves it; apply removes every leftover and says so."""
    leaf, spine, host = lab.emulator("leaf1-a"), lab.emulator("spine1"), lab.emulator("gpu001")
    # Each command 2 s late, so both leftovers are there together long enough to be seen however loaded the
    # machine is; and the discard that would remove them never runs, even one already on its way at the kill.
    leaf.faults.delay_seconds = spine.faults.delay_s = 2.0
    leaf.faults.drop_on, spine.faults.drop_on = r"abort$", r"^nv config detach"
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
    time.sleep(2.5)  # what the killed run had sent is answered (or dropped) before the faults go
    leaf.faults.delay_seconds = spine.faults.delay_s = 0
    leaf.faults.drop_on = spine.faults.drop_on = None
    (host.sandbox / "rocefab").mkdir(exist_ok=True)
    (host.sandbox / "rocefab" / "gpu001.roce.sh.20260101T000000-000000.candidate").write_text("#!/bin/bash\n")

    def leftovers() -> tuple[list[str], list[str], list[Path]]:
        return ([n for n, s in leaf.sessions.items() if n.startswith("rocefab_") and s.state == "pending"],
                [p.name for p in spine.root.iterdir() if p.name.startswith("rocefab-")],
                list((host.sandbox / "rocefab").glob("*.candidate")))

    left = leftovers()
    looked = rocefab(lab, "diff", "--only", "leaf1-a,spine1,gpu001")
    assert looked.returncode == 1, looked.stdout + looked.stderr
    a = row(looked.stdout, "leaf1-a")
    assert "configuration locked by another session" in a and f"{left[0][0]} (left by rocefab run" in a, a
    assert "`rocefab apply` removes it" in a and leftovers() == left, "diff removed nothing"
    result = rocefab(lab, "apply", "--only", "leaf1-a,spine1,gpu001", "--no-verify")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"leaf1-a: aborted configuration session rocefab_\S+, left by an earlier run", result.stderr)
    assert re.search(r"spine1: removed rocefab-\S+\.candidate\.yaml, left by an earlier run", result.stderr)
    assert "gpu001: removed rocefab/gpu001.roce.sh.20260101T000000-000000.candidate" in result.stderr
    assert leftovers() == ([], [], [])


# -- commits awaiting their confirm are device state ---------------------------------------------------------------
@pytest.mark.parametrize("device", ["spine1", "leaf1-a"])
def test_a_lost_confirm_stays_pending_until_apply_settles_it(lab: FabricLab, device: str) -> None:
    """The confirm never arrives (`lab fault DEVICE lose-confirm`): apply exits 3. Once the device answers again,
    diff and verify report the pending revert and exit 1, changing nothing; the next apply confirms it, since it
    runs what the intent renders and passes verify, and says so; the window closing later changes nothing."""
    assert lab.faults is not None
    before = state(lab, device)
    lab.faults.make(device, "lose-confirm", [])
    lost = rocefab(lab, "apply", "--only", device)
    assert lost.returncode == 3, lost.stdout + lost.stderr
    assert UNKNOWN in row(lost.stdout, device)
    lab.faults.clear()
    new = state(lab, device)
    assert new != before, "the commit runs, unconfirmed"
    for _ in range(2):  # twice: the first diff changed nothing the second could see
        looked = rocefab(lab, "diff", "--only", device)
        assert looked.returncode == 1, looked.stdout + looked.stderr
        seen = row(looked.stdout, device)
        assert "pending revert" in seen and re.search(r"pending revert in \d+ s", seen), seen
        assert "committed by rocefab run" in seen and "never confirmed" in seen
        assert state(lab, device) == new
    checked = rocefab(lab, "verify", "--only", device, "--json")
    rows = [r for r in json.loads(checked.stdout)["checks"] if r["check"] == "commit-confirmed"]
    assert checked.returncode != 0 and rows and rows[0]["verdict"] == "fail", rows
    diagnosed = json.loads(rocefab(lab, "doctor", "--only", device, "--json").stdout)["diagnoses"]
    assert any(d["code"] == "pending-revert" and d["device"] == device for d in diagnosed), diagnosed
    assert state(lab, device) == new
    settled = rocefab(lab, "apply", "--only", device)
    assert settled.returncode == 0, settled.stdout + settled.stderr
    assert re.search(rf"{device}: pending revert in \d+ s .*: confirmed \(it is what this run would push and "
                     r"verify passes\)", settled.stderr), settled.stderr
    assert "confirmed" in row(settled.stdout, device) and "unchanged" in row(settled.stdout, device)
    assert "no commit timer was pending" in lab.faults.make(device, "expire-confirm", []) or \
        "no confirm window was open" in lab.faults.make(device, "expire-confirm", [])
    assert state(lab, device) == new, "confirmed: the window closing reverts nothing"


def test_a_pending_commit_the_intent_no_longer_renders_is_reverted_first(lab: FabricLab, tmp_path: Path) -> None:
    """leaf1-a's confirm is lost; then the intent changes (a VLAN renamed): apply reverts the pending commit now,
    says why, and commits the new intent."""
    assert lab.faults is not None
    lab.faults.make("leaf1-a", "lose-confirm", [])
    assert rocefab(lab, "apply", "--only", "leaf1-a").returncode == 3
    lab.faults.clear()
    changed = tmp_path / "lab.yaml"
    changed.write_text(INTENT.read_text(encoding="utf-8").replace("name: train-rail0", "name: train-rail9"),
                       encoding="utf-8")
    result = rocefab(lab, "apply", "--only", "leaf1-a", intent=changed)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"leaf1-a: pending revert in \d+ s .*: reverted now \(it is not what this run would push\)",
                     result.stderr), result.stderr
    assert "committed" in row(result.stdout, "leaf1-a")
    assert "train-rail9" in state(lab, "leaf1-a") and "train-rail0" not in state(lab, "leaf1-a")
    assert not [s for s in lab.emulator("leaf1-a").sessions.values() if s.state == "pendingCommitTimer"]


def test_rollback_reverts_a_pending_commit_before_it_restores(lab: FabricLab) -> None:
    assert lab.faults is not None
    before = state(lab, "spine1")
    lab.faults.make("spine1", "lose-confirm", [])
    assert rocefab(lab, "apply", "--only", "spine1").returncode == 3
    lab.faults.clear()
    backups = sorted((lab.folder.parent / "rocefab-backups").iterdir())
    done = subprocess.run([sys.executable, "-m", "rocefab", "rollback", "-i", str(inventory(lab)), "--backup",
                           str(backups[-1])], cwd=lab.folder.parent, capture_output=True, text=True,
                          timeout=240, env={**os.environ, "COLUMNS": "250"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"spine1: pending revert in \d+ s .*: reverted now \(this run restores a backup\)", done.stderr)
    assert state(lab, "spine1") == before


def test_a_device_failing_at_backup_leaves_the_others_not_checked(lab: FabricLab) -> None:
    """Backup fails on spine1 (it stops answering at `nv config show`): the run stops with nothing changed, and
    the switches it never compared are `not checked`, with what would change unknown (null), never 0."""
    before = {name: state(lab, name) for name in ("spine1", "leaf1-a", "leaf1-b")}
    lab.emulator("spine1").reach.down_on = r"^nv config show"
    result = rocefab(lab, "apply", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    document = json.loads(result.stdout)
    devices = {d["name"]: d for d in document["devices"]}
    assert document["stage"] == "backup" and document["summary"]["would_change"] is None, document["summary"]
    assert devices["spine1"]["status"] == "failed"
    assert devices["leaf1-a"]["status"] == devices["leaf1-b"]["status"] == "not_checked"
    assert {name: state(lab, name) for name in before} == before


@pytest.mark.parametrize("device", ["gpu004", "spine1"])
def test_every_device_is_reached_before_the_first_commit(lab: FabricLab, device: str) -> None:
    """A host or the spine of the last wave does not answer: with --yes too, apply finds it before any wave
    commits, lists it and changes nothing anywhere (before, the leaves of the first wave had committed)."""
    names = ("spine1", "leaf1-a", "leaf1-b", "gpu001", "gpu004")
    before = {name: state(lab, name) for name in names}
    lab.emulator(device).reach.down = True
    result = rocefab(lab, "apply")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "could not be reached, locked or settled before the first commit - nothing was changed" in result.stdout
    assert "cannot reach" in row(result.stdout, device) or "cannot open" in row(result.stdout, device)
    assert not (lab.folder.parent / "rocefab-backups").exists() or not any(
        (lab.folder.parent / "rocefab-backups").iterdir()), "stopped before the backup"
    assert {name: state(lab, name) for name in names} == before
    lab.emulator(device).reach.clear()
    assert not any(marks(lab).values()), "the marks the refused run placed are gone again"


# -- signals ----------------------------------------------------------------------------------------------------------
def _committed_with_timer(lab: FabricLab, name: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 90
    leaf = lab.emulator(name)
    while not [s for s in list(leaf.sessions.values()) if s.state == "pendingCommitTimer"]:
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.02)


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_stops_the_run_rolls_the_wave_back_and_says_so(lab: FabricLab, sent: signal.Signals) -> None:
    """Mid-wave (leaf1-a committed with its timer, leaf1-b still at it): each device finishes its step, the wave
    is rolled back and read back, later waves never start, the table is printed, the lock is free and the exit
    code says which signal (128 + its number)."""
    names = ("spine1", "leaf1-a", "leaf1-b", "gpu001")
    before = {name: state(lab, name) for name in names}
    lab.emulator("leaf1-b").faults.delay_seconds = 1.0
    run = rocefab(lab, "apply", background=True)
    _committed_with_timer(lab, "leaf1-a", run)
    run.send_signal(sent)
    stdout, stderr = run.communicate(timeout=240)
    assert run.returncode == 128 + sent, stdout + stderr
    assert f"{sent.name}: stopping" in stderr and "Traceback" not in stderr
    for leaf in ("leaf1-a", "leaf1-b"):
        seen = row(stdout, leaf)
        assert "rolled back" in seen and f"stopped by {sent.name}" in seen, seen
    assert "not started" in row(stdout, "spine1") and f"stopped by {sent.name}" in row(stdout, "spine1")
    assert {name: state(lab, name) for name in names} == before
    assert not [s for s in lab.emulator("leaf1-a").sessions.values() if s.state == "pendingCommitTimer"]
    assert not any(marks(lab).values()), "the devices are free"


def test_a_second_signal_exits_at_once_naming_what_is_unknown(lab: FabricLab) -> None:
    lab.emulator("leaf1-b").faults.delay_seconds = 2.0
    run = rocefab(lab, "apply", background=True)
    _committed_with_timer(lab, "leaf1-a", run)
    run.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    run.send_signal(signal.SIGTERM)
    stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == 3, stdout + stderr
    assert "SIGTERM again: exiting now; state unknown for" in stderr and "leaf1-a" in stderr, stderr
    assert "this run's lock mark stays on 7 device(s); the next rocefab run from this host removes it" in stderr
    assert all(marks(lab).values()), "no time to take them away"
    lab.emulator("leaf1-b").faults.delay_seconds = 0
    looked = rocefab(lab, "diff", "--only", "leaf1-a")
    assert "pending revert" in row(looked.stdout, "leaf1-a"), looked.stdout  # what it left is found next time


# -- the management-plane faults `rocefab lab fault` makes, each met by a run ------------------------------------------
@pytest.mark.parametrize(("device", "words", "said"), [
    ("gpu001", ("wrong-password",), "SSH authentication failed"),
    ("spine1", ("wrong-password",), "SSH authentication failed"),
    ("leaf1-a", ("wrong-password",), "Unauthorized"),
    ("leaf1-b", ("drop-at", "^show configuration sessions"), "leaf1-b"),
    ("spine1", ("drop-at", "confirm-status"), "spine1"),
])
def test_a_management_fault_stops_apply_before_anything_changes(lab: FabricLab, device: str,
                                                                words: tuple[str, ...], said: str) -> None:
    assert lab.faults is not None
    names = ("spine1", "leaf1-a", "leaf1-b", "gpu001", "gpu004")
    before = {name: state(lab, name) for name in names}
    lab.faults.make(device, words[0], list(words[1:]))
    result = rocefab(lab, "apply")
    assert result.returncode == 1, result.stdout + result.stderr
    seen = row(result.stdout, device)
    assert "failed" in seen and said in seen, seen
    assert {name: state(lab, name) for name in names} == before
    lab.faults.clear()
    assert rocefab(lab, "apply").returncode == 0, "cleared: the management plane answers again"


def test_delay_and_reject_from_the_fault_book(lab: FabricLab) -> None:
    """`delay` past the inventory's timeout stops apply before any change; `reject` refuses spine1's QoS when
    its wave stages it: the earlier waves stand committed, spine1 is unchanged and the run stops."""
    assert lab.faults is not None
    before = state(lab, "spine1")
    lab.faults.make("leaf1-b", "delay", ["3"])
    slow = rocefab(lab, "apply", inventory_path=inventory(lab, timeout_s=1))
    assert slow.returncode == 1 and "timeout after 1 s" in row(slow.stdout, "leaf1-b"), slow.stdout
    lab.faults.clear()
    lab.faults.make("spine1", "reject", ["qos"])
    refused = rocefab(lab, "apply", inventory_path=inventory(lab, timeout_s=120))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "failed" in row(refused.stdout, "spine1") and "committed" in row(refused.stdout, "leaf1-a")
    assert state(lab, "spine1") == before
