"""Review before pushing, through the command line against the lab of intents/lab.yaml: on a terminal apply shows
what would change and asks (no means nothing changes; nothing to change means no question); `--rendered` pushes
the folder that was reviewed, refuses a device file edited since unless `--allow-edited`, and refuses a folder
rendered from another intent."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import yaml

from rocefab.deploy.inventory import PasswordSource, load_inventory
from rocefab.platforms.eos.session import EosSession

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intents" / "lab.yaml"
PAIR = "leaf1-a,leaf1-b"


def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=240, env={**os.environ, "COLUMNS": "200"})


def on_terminal(*args: str | Path, answer: str | Sequence[str] | None = None,
                before_answer: Callable[[], None] | None = None) -> tuple[int, str]:
    """Run rocefab with a terminal as stdin, stdout and stderr; type `answer` at the first [y/N] question (after
    `before_answer`, which may change a device meanwhile), or each of `answer`'s items at the questions in turn."""
    answers = [answer] if isinstance(answer, str) else list(answer or [])
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "rocefab", *map(str, args)], stdin=terminal, stdout=terminal,
                               stderr=terminal, env={**os.environ, "COLUMNS": "200"}, close_fds=True)
    os.close(terminal)
    seen, answered, deadline = b"", 0, time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            if not select.select([controller], [], [], 0.5)[0]:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: every end of the terminal closed, the process is done
                break
            if not data:
                break
            seen += data
            if answered < len(answers) and seen.count(b"[y/N]") > answered:
                if before_answer is not None and not answered:
                    before_answer()
                os.write(controller, answers[answered].encode() + b"\n")
                answered += 1
            elif seen.count(b"[y/N]") > len(answers):  # a question the test has no answer for: fail now, not later
                process.kill()
                break
        code = process.wait(timeout=30)
    finally:
        os.close(controller)
    return code, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace")).replace("\r", "")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("lab") / "lab"
    started = rocefab("lab", "up", INTENT, "--dir", folder)
    assert started.returncode == 0, started.stderr
    yield folder
    assert rocefab("lab", "down", "--dir", folder).returncode == 0


def asks_and_takes_no_for_an_answer(inventory: Path, backups: Path) -> None:
    code, text = on_terminal("apply", INTENT, "-i", inventory, "--only", PAIR, "--backup-dir", backups, answer="n")
    assert code == 1, text
    assert "what apply would change" in text and "Apply these changes to 2 devices? [y/N]" in text
    assert "not applied: nothing was changed" in text
    assert not backups.exists(), "no backup before the answer"
    assert rocefab("diff", INTENT, "-i", inventory, "--only", PAIR, "--exit-code").returncode == 1


def a_device_changed_after_the_review_is_not_committed(inventory: Path, backups: Path) -> None:
    """Someone changes leaf1-a at its CLI while the question is on the screen: what apply would commit is no longer
    what was approved, so nothing of the wave is committed."""

    def by_hand() -> None:
        access = load_inventory(inventory).access("leaf1-a", "eos", PasswordSource(interactive=False))
        with EosSession(access) as session:
            session.load("interface Ethernet1/1\n   description changed-by-hand\n", replace=False)
            session.commit()

    code, text = on_terminal("apply", INTENT, "-i", inventory, "--only", PAIR, "--backup-dir",
                             backups.parent / "changed-backups", "--confirm", "0", answer="y", before_answer=by_hand)
    assert code == 1, text
    assert "changed since it was reviewed" in text, text
    assert re.search(r"│ committed\s*│", text) is None, "nothing of the wave may be committed"
    assert rocefab("diff", INTENT, "-i", inventory, "--only", PAIR, "--exit-code").returncode == 1


def yes_applies_then_nothing_is_asked(inventory: Path, backups: Path) -> None:
    # leaf1-a still carries the description set by hand in the step before, leaf1-b does not: two groups
    code, text = on_terminal("apply", INTENT, "-i", inventory, "--only", PAIR, "--backup-dir", backups,
                             "--confirm", "0", answer=["y", "y"])
    assert code == 0, text
    assert text.count("[y/N]") == 2 and "Apply group 2 of 2: these changes to 1 eos device(s)?" in text, text
    assert "2 committed" in text
    code, text = on_terminal("apply", INTENT, "-i", inventory, "--only", PAIR, "--backup-dir", backups)
    assert code == 0, text
    assert "nothing to change on 2 device(s)" in text and "[y/N]" not in text
    assert len(list(backups.iterdir())) == 1, "nothing to change: no backup either"


def each_group_is_asked_once_and_a_declined_one_stays(inventory: Path, tmp_path: Path) -> None:
    """A fabric-wide ECN change over the applied pair and the never-applied spine: the pair changes alike (one
    group, one question); the spine's whole config is a group of its own. Yes to the first, no to the second: the
    pair is committed, the spine is left exactly as it was."""
    changed = tmp_path / "ecn.yaml"
    doc = yaml.safe_load(INTENT.read_text(encoding="utf-8"))
    doc["qos"] = {"ecn": {"min_threshold_kbytes": 200, "max_threshold_kbytes": 1200, "max_mark_percent": 50}}
    changed.write_text(yaml.safe_dump(doc), encoding="utf-8")
    devices = f"{PAIR},spine1"
    def spine_diff() -> list[str]:
        document = json.loads(rocefab("diff", changed, "-i", inventory, "--only", "spine1", "--json").stdout)
        return list(document["devices"][0]["diff"])

    spine_before = spine_diff()
    assert spine_before, "the spine was never applied: it has a diff"
    pair = json.loads(rocefab("diff", changed, "-i", inventory, "--only", PAIR, "--json").stdout)
    assert pair["disruption"] == {"qos-reprogram": 2}, "EOS: no Arista source for an ECN change, so cautious"
    assert [g["disruption"] for g in pair["groups"]] == ["qos-reprogram"]
    assert pair["drain"] == {"steps": [{"devices": ["leaf1-a"], "nodes_losing_a_rail": []},
                                       {"devices": ["leaf1-b"], "nodes_losing_a_rail": []}], "not_drainable": {}}
    worst = pair["devices"][0]["disruption"]
    assert worst["class"] == "qos-reprogram" and any("random-detect ecn" in w["line"] for w in worst["worst"])
    code, text = on_terminal("apply", changed, "-i", inventory, "--only", devices, "--backup-dir",
                             tmp_path / "group-backups", "--confirm", "0", answer=["y", "n"])
    assert code == 0, text
    assert text.count("[y/N]") == 2, text
    assert re.search(r"# group 1 of 2 \(qos-reprogram\): leaf1-a and 1 more eos device\(s\) change alike: leaf1-b",
                     text), text
    assert "Apply group 1 of 2: these changes to 2 eos device(s)? [y/N]" in text, text
    assert "# group 2 of 2 (" in text and "Apply group 2 of 2: these changes to 1 cumulus device(s)?" in text
    assert "group 2 declined: spine1 stay as they are" in text, text
    assert "2 committed" in text, text
    assert rocefab("diff", changed, "-i", inventory, "--only", PAIR, "--exit-code").returncode == 0
    assert spine_diff() == spine_before, "the spine is left as it was"


def running(inventory: Path, name: str) -> str:
    access = load_inventory(inventory).access(name, "eos", PasswordSource(interactive=False))
    with EosSession(access) as session:
        return session.running_config()


def rendered_folder_is_checked_then_pushed_as_reviewed(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert rocefab("render", INTENT, "-o", out).returncode == 0
    config = out / "switches" / "leaf1-a.cfg"
    original = config.read_text()
    first = re.search(r"^   description (.+)$", original, re.M)
    assert first is not None
    config.write_text(original.replace(first.group(0), "   description reviewed-by-hand", 1))

    refused = rocefab("diff", INTENT, "-i", inventory, "--rendered", out, "--only", "leaf1-a")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "edited since the render: switches/leaf1-a.cfg" in refused.stderr and "--allow-edited" in refused.stderr

    pushed = rocefab("apply", INTENT, "-i", inventory, "--yes", "--rendered", out, "--allow-edited", "--only",
                     "leaf1-a", "--confirm", "0", "--backup-dir", tmp_path / "backups")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert f"--allow-edited: pushing {config} as edited" in pushed.stderr
    assert "   description reviewed-by-hand" in running(inventory, "leaf1-a"), "the edited file is what runs"
    again = rocefab("diff", INTENT, "-i", inventory, "--only", "leaf1-a")  # rendered afresh: the edit shows
    assert "\n-   description reviewed-by-hand\n" in again.stdout, again.stdout

    other = tmp_path / "other.yaml"
    doc = yaml.safe_load(INTENT.read_text(encoding="utf-8"))
    doc["qos"] = {"ets": {"roce_percent": 70, "default_percent": 30}}
    other.write_text(yaml.safe_dump(doc), encoding="utf-8")
    config.write_text(original)
    foreign = rocefab("diff", other, "-i", inventory, "--rendered", out, "--allow-edited")
    assert foreign.returncode == 2, foreign.stdout + foreign.stderr
    assert "rendered from another intent" in foreign.stderr and str(other) in foreign.stderr


def test_review_then_push(lab: Path, tmp_path: Path, subtests: pytest.Subtests) -> None:
    inventory, backups = lab / "inventory.yaml", tmp_path / "backups"
    steps = [("asks, no changes nothing", lambda: asks_and_takes_no_for_an_answer(inventory, backups)),
             ("changed after the review: not committed",
              lambda: a_device_changed_after_the_review_is_not_committed(inventory, backups)),
             ("yes applies, then nothing to ask", lambda: yes_applies_then_nothing_is_asked(inventory, backups)),
             ("one question per group", lambda: each_group_is_asked_once_and_a_declined_one_stays(inventory, tmp_path)),
             ("--rendered", lambda: rendered_folder_is_checked_then_pushed_as_reviewed(inventory, tmp_path))]
    for name, step in steps:
        with subtests.test(msg=name):
            step()
