"""Helpers of the verify/doctor lab tests: the command line, a lab started and pushed for an intent, faults."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from napalm import get_network_driver

from rocefab.deploy.inventory import PasswordSource, load_inventory
from rocefab.lab import control
from rocefab.renderers.plan import Switch


def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=600, env={**os.environ, "COLUMNS": "250"})


@contextmanager
def pushed_lab(intent: Path, folder: Path) -> Iterator[Path]:
    """`rocefab lab up` and `rocefab apply` for `intent`; the lab folder, until `lab down`."""
    started = rocefab("lab", "up", intent, "--dir", folder)
    assert started.returncode == 0, started.stderr
    try:
        applied = rocefab("apply", intent, "-i", folder / "inventory.yaml", "--yes", "--confirm", "0")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        yield folder
    finally:
        rocefab("lab", "down", "--dir", folder)


def ecn_retuned(intent: Path, folder: Path, minimum: int) -> Path:
    """`intent` with its ECN thresholds changed (a change beyond hitless on EOS and NX-OS), written into `folder`."""
    doc = yaml.safe_load(intent.read_text(encoding="utf-8"))
    doc["qos"] = {"ecn": {"min_threshold_kbytes": minimum, "max_threshold_kbytes": 1200, "max_mark_percent": 50}}
    path = folder / f"ecn-{minimum}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def napalm_driver(inventory: Path, sw: Switch) -> Any:
    """An open NAPALM driver for the switch, as the lab's inventory reaches it (its CA pinned)."""
    a = load_inventory(inventory).access(sw.name, sw.platform, PasswordSource(False))
    tls: dict[str, Any] = {"ssl_verify": str(a.ca_file) if a.ca_file else False} if sw.platform == "nxos" else \
        {"context": ssl.create_default_context(cafile=str(a.ca_file)) if a.ca_file else None}
    device = get_network_driver(sw.platform)(a.host, a.username, a.password.reveal(), timeout=a.timeout_s,
                                             optional_args={"transport": a.scheme, "port": a.port, **tls})
    device.open()
    return device


def fault(lab: Path, device: str, kind: str, *args: str) -> None:
    """Through the lab's control socket, as `rocefab lab fault` does."""
    reply = control.request(lab, {"device": device, "kind": kind, "args": list(args)})
    assert reply["ok"], reply


def clear(lab: Path) -> None:
    assert control.request(lab, {"clear": True})["ok"]


def verify_json(intent: Path, inventory: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = rocefab("verify", intent, "-i", inventory, "--json", *extra)
    return result.returncode, json.loads(result.stdout)


def doctor_json(intent: Path, inventory: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    result = rocefab("doctor", intent, "-i", inventory, "--json", *extra)
    return result.returncode, json.loads(result.stdout)["diagnoses"]


def pushed_lab_fixture(intent: Path, name: str) -> Any:
    """A module-scoped `lab` fixture: `intent`'s lab, up and pushed, for the module's tests."""

    @pytest.fixture(scope="module")
    def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
        with pushed_lab(intent, tmp_path_factory.mktemp(name) / "lab") as folder:
            yield folder

    return lab


def run_steps(lab: Path, subtests: Any, steps: list[tuple[str, Callable[[], None]]]) -> None:
    """Each step as a subtest of one test (one lab, one worker), with the lab's faults cleared after each."""
    for name, step in steps:
        with subtests.test(msg=name):
            try:
                step()
            finally:
                clear(lab)


def named(diagnoses: list[dict[str, Any]], code: str) -> set[tuple[str, str]]:
    return {(d["device"], d["port"]) for d in diagnoses if d["code"] == code}
