"""A fabric with a services section on the lab (EOS leaves, a Cumulus spine, hosts): the dry run shows the service
lines, `rocefab apply` commits them, and the diff afterwards is empty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=240, env={**os.environ, "COLUMNS": "200"})


def test_services_apply_on_the_lab_and_leave_no_diff(tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / "intents" / "lab.yaml").read_text(encoding="utf-8"))
    doc.update(yaml.safe_load((ROOT / "tests" / "data" / "services.yaml").read_text(encoding="utf-8")))
    intent = tmp_path / "lab-services.yaml"
    intent.write_text(yaml.safe_dump(doc), encoding="utf-8")
    folder = tmp_path / "lab"
    started = rocefab("lab", "up", intent, "--dir", folder)
    assert started.returncode == 0, started.stderr
    try:
        inventory = folder / "inventory.yaml"
        dry = rocefab("apply", intent, "-i", inventory, "--dry-run")
        assert dry.returncode == 0, dry.stdout + dry.stderr
        for line in ("+ntp server 192.0.2.123 prefer iburst", "+tacacs-server host 192.0.2.49", "+banner motd",
                     "+clock timezone UTC",  # the EOS leaves' raw line
                     "+nv set service ntp default server 192.0.2.123 iburst on",
                     '+nv set system message post-login "Fabric spine"'):  # the Cumulus spine's raw line
            assert f"\n{line}\n" in dry.stdout, line
        # what the replace keeps of each switch, its credentials not shown
        assert "leaf1-a: the replace keeps 2 device-local block(s): username admin privilege 15 role network-admin " \
               "secret ***; interface Management1" in dry.stderr, dry.stderr
        assert "spine1: the replace keeps 1 device-local block(s): system aaa" in dry.stderr
        assert "$6$" not in dry.stdout + dry.stderr, "a password hash reached the output"
        applied = rocefab("apply", intent, "-i", inventory, "--yes", "--confirm", "120")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        after = rocefab("diff", intent, "-i", inventory, "--exit-code")
        assert after.returncode == 0, after.stdout + after.stderr
        assert "7 unchanged" in after.stdout.splitlines()
    finally:
        assert rocefab("lab", "down", "--dir", folder).returncode == 0
