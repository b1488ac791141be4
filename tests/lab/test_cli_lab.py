"""The user's whole path from the command line: lab up, dry run, apply, an empty diff, rollback, lab down."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intents" / "lab.yaml"


def rocefab(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=240, env={**os.environ, "COLUMNS": "200", **(env or {})})


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("lab") / "lab"
    started = rocefab("lab", "up", INTENT, "--dir", folder)
    assert started.returncode == 0, started.stderr
    assert "3 switches and 4 hosts" in started.stdout
    yield folder
    stopped = rocefab("lab", "down", "--dir", folder)
    assert stopped.returncode == 0, stopped.stderr
    assert rocefab("lab", "status", "--dir", folder).returncode == 1


def _status_counts(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_whole_path(lab: Path, tmp_path: Path) -> None:
    inventory = lab / "inventory.yaml"
    assert (lab / "password").stat().st_mode & 0o077 == 0, "the lab password file is private"
    assert (lab / "password").read_text().strip() not in inventory.read_text()

    dry = rocefab("apply", INTENT, "-i", inventory, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "+   priority-flow-control priority 3 no-drop" in dry.stdout  # EOS, from the device's own diff
    assert "nv set qos pfc default-global switch-priority 3" in dry.stdout  # NVUE
    assert "DRIFT   ens1f0np0 pfc priorities" in dry.stdout  # host --check
    assert _status_counts(dry.stdout) == "7 would change"
    again = rocefab("diff", INTENT, "-i", inventory)
    assert again.returncode == 0 and _status_counts(again.stdout) == "7 would change", "the dry run changed nothing"

    backups = tmp_path / "backups"
    applied = rocefab("apply", INTENT, "-i", inventory, "--confirm", "120", "--backup-dir", backups)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _status_counts(applied.stdout) == "7 committed"
    assert "apply in 3 wave(s): 2 | 4 | 1 devices" in applied.stdout  # canary pair, its hosts, then the spine

    after = rocefab("diff", INTENT, "-i", inventory)
    assert after.returncode == 0 and _status_counts(after.stdout) == "7 unchanged"

    (backup,) = list(backups.iterdir())
    saved = {p.name: p.read_text() for p in backup.glob("*.cfg")}
    assert sorted(saved) == ["leaf1-a.cfg", "leaf1-b.cfg", "spine1.cfg"]
    for name, text in saved.items():
        for secret in ("username", "secret", "hashed-password", "password"):
            assert secret not in text, f"{name} backup holds '{secret}'"

    restored = rocefab("rollback", "-i", inventory, "--backup", backup)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    back = rocefab("diff", INTENT, "-i", inventory)
    assert _status_counts(back.stdout) == "3 would change, 4 unchanged", "switches are back where they started"


def test_wrong_password_fails_every_device_and_never_shows_it(lab: Path) -> None:
    wrong = "N0t-the-Lab-Password"
    result = rocefab("diff", INTENT, "-i", lab / "inventory.yaml", env={"ROCEFAB_PASSWORD": wrong})
    assert result.returncode == 1
    assert _status_counts(result.stdout) == "7 failed"
    assert "Unauthorized" in result.stdout and "authentication failed" in result.stdout
    assert wrong not in result.stdout + result.stderr


def test_unknown_inventory_key_is_an_input_error(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("devices:\n  spine1: {host: 127.0.0.1, password: hunter2}\n")
    result = rocefab("diff", INTENT, "-i", inventory)
    assert result.returncode == 2
    assert f"{inventory}:2:29 devices.spine1.password: unknown key 'password'" in result.stderr
    assert "hunter2" not in result.stderr


def test_devices_missing_from_the_inventory(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("devices:\n  spine1: {host: 127.0.0.1}\n")
    result = rocefab("diff", INTENT, "-i", inventory)
    assert result.returncode == 2 and "no entry for: leaf1-a, leaf1-b, gpu001" in result.stderr
