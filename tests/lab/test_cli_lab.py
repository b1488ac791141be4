"""The user's whole path from the command line: lab up, dry run (unified diffs, --exit-code, --json), apply (refused
without a terminal or --yes), an empty diff, a host's NCCL drift, rollback (--latest, --dry-run), lab down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocefab.deploy import unified

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


def _patch_part(stdout: str, title: str) -> str:
    """What a run printed before its table: the devices' unified diffs, as one patch."""
    return stdout[:stdout.index(title)]


def test_whole_path(lab: Path, tmp_path: Path) -> None:
    inventory = lab / "inventory.yaml"
    assert (lab / "password").stat().st_mode & 0o077 == 0, "the lab password file is private"
    assert (lab / "password").read_text().strip() not in inventory.read_text()

    dry = rocefab("apply", INTENT, "-i", inventory, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "\n+   priority-flow-control priority 3 no-drop\n" in dry.stdout  # EOS, from the device's own diff
    assert "\n+nv set qos pfc default-global switch-priority 3\n" in dry.stdout  # NVUE, pending vs applied
    assert "\n-ens1f0np0 pfc priorities = 0,0,0,0,0,0,0,0\n+ens1f0np0 pfc priorities = 0,0,0,1,0,0,0,0\n" in \
        dry.stdout  # host --check
    patch = _patch_part(dry.stdout, "dry run: staged")
    assert unified.malformed(patch) == [], unified.malformed(patch)
    assert [line for line in patch.splitlines() if line.startswith("+++ ")] == [
        f"+++ {name} (candidate)" for name in ("spine1", "leaf1-a", "leaf1-b", "gpu001", "gpu002", "gpu003", "gpu004")]
    assert _status_counts(dry.stdout) == "7 would change"
    again = rocefab("diff", INTENT, "-i", inventory, "--exit-code")
    assert again.returncode == 1 and _status_counts(again.stdout) == "7 would change", "the dry run changed nothing"
    as_json = rocefab("diff", INTENT, "--json", env={"ROCEFAB_INVENTORY": str(inventory)})
    assert as_json.returncode == 0, as_json.stderr
    document = json.loads(as_json.stdout)  # stdout is the document and nothing else
    assert document["summary"]["would_change"] == 7 and document["summary"]["exit_code"] == 0
    leaf = next(d for d in document["devices"] if d["name"] == "leaf1-a")
    assert leaf["kind"] == "eos" and leaf["status"] == "pending" and leaf["added"] == unified.counts(
        "\n".join(leaf["diff"])).added > 0 and leaf["error"] is None

    backups = tmp_path / "backups"
    refused = rocefab("apply", INTENT, "-i", inventory, "--backup-dir", backups)  # no terminal, no --yes
    assert refused.returncode == 2 and "pass --yes" in refused.stderr and "Nothing was changed" in refused.stderr
    assert not backups.exists(), "no backup: nothing reached"

    applied = rocefab("apply", INTENT, "-i", inventory, "--yes", "--confirm", "120", "--backup-dir", backups)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _status_counts(applied.stdout) == "7 committed"
    # canary pair, its hosts, then the spine
    assert "apply in 3 wave(s): leaf1-a, leaf1-b | gpu001, gpu002, gpu003, gpu004 | spine1" in applied.stdout

    after = rocefab("diff", INTENT, "-i", inventory, "--exit-code")
    assert after.returncode == 0 and _status_counts(after.stdout) == "7 unchanged"
    # the intent's ETS weights changed: the switches would change, and --exit-code says so
    reweighted = tmp_path / "lab.yaml"
    reweighted.write_text(INTENT.read_text() + "qos:\n  ets:\n    roce_percent: 60\n    default_percent: 40\n")
    pending = rocefab("diff", reweighted, "-i", inventory, "--exit-code", "--only", "leaf1-a,spine1")
    assert pending.returncode == 1 and _status_counts(pending.stdout) == "2 would change", pending.stdout
    assert "+      bandwidth percent 60" in pending.stdout.splitlines(), pending.stdout
    assert "+nv set qos egress-scheduler default-global traffic-class 3 bw-percent 60" in pending.stdout.splitlines()

    nccl = lab / "hosts" / "gpu001" / "etc" / "nccl.conf"
    written = nccl.read_text()
    nccl.write_text(written.replace("NCCL_IB_TC=106", "NCCL_IB_TC=104"))
    drift = rocefab("diff", INTENT, "-i", inventory, "--only", "gpu001")
    assert f"\n # {nccl}\n-NCCL_IB_TC=104\n+NCCL_IB_TC=106\n" in drift.stdout, drift.stdout
    nccl.write_text(written)

    (backup,) = list(backups.iterdir())
    saved = {p.name: p.read_text() for p in backup.glob("*.cfg")}
    assert sorted(saved) == ["leaf1-a.cfg", "leaf1-b.cfg", "spine1.cfg"]
    for name, text in saved.items():
        for secret in ("username", "secret", "hashed-password", "password"):
            assert secret not in text, f"{name} backup holds '{secret}'"

    preview = rocefab("rollback", "-i", inventory, "--latest", "--backup-dir", backups, "--dry-run", "--exit-code")
    assert preview.returncode == 1, preview.stdout + preview.stderr
    assert f"latest backup: {backup}" in preview.stderr
    assert "\n-   priority-flow-control priority 3 no-drop\n" in preview.stdout  # what the rollback takes away
    assert _status_counts(preview.stdout.split("left as they are")[0]) == "3 would change"
    assert "left as they are: gpu001, gpu002, gpu003, gpu004 (hosts have no running config" in preview.stdout
    restored = rocefab("rollback", "-i", inventory, "--latest", "--backup-dir", backups, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    result = json.loads(restored.stdout)
    assert {d["name"]: d["status"] for d in result["devices"]} == {
        "leaf1-a": "committed", "leaf1-b": "committed", "spine1": "committed"}
    assert [u["name"] for u in result["untouched"]] == ["gpu001", "gpu002", "gpu003", "gpu004"]
    assert rocefab("rollback", "-i", inventory, "--backup", backup, "--dry-run", "--exit-code").returncode == 0
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
