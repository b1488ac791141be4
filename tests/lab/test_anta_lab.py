"""ANTA, Arista's own test framework, as a second opinion on the lab's EOS switches: the catalog rocefab renders and
the inventory it exports, run by `anta nrfu` unpatched over eAPI. A freshly pushed fabric passes every test; each
EOS fault that an ANTA test covers fails that test on that device (and the faults it cannot see are named here, so
the gap is stated rather than implied)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from verifylab import clear, fault, pushed_lab, rocefab

from rocefab.lab import control

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intents" / "lab.yaml"
# (device, fault words, the ANTA test that must fail on that device)
FAULTS = [
    ("leaf1-a", ("link-down", "Ethernet63/1"), "VerifyInterfacesStatus"),
    ("leaf1-a", ("speed", "Ethernet63/1", "100"), "VerifyInterfacesSpeed"),
    ("leaf1-a", ("mtu", "Ethernet61/1", "1500"), "VerifyL3MTU"),
    ("leaf1-a", ("miscable", "Ethernet61/1", "Ethernet62/1"), "VerifyLLDPNeighbors"),
    ("spine1", ("bgp-down", "leaf1-b"), "VerifyBGPPeerSession"),  # seen from leaf1-b, the EOS end
    ("leaf1-b", ("drops", "Ethernet62/1"), "VerifyInterfacesEgressQueueDrops"),
]
# Switch faults the catalog has no ANTA test for: QoS configuration (ANTA has no test of trust, PFC priorities,
# the DSCP map or a strict queue), counters ANTA judges as totals since clearing against a fixed threshold (PFC
# frames, watchdog, ECN marks, input errors: see renderers/anta_catalog.py), and a device ANTA cannot reach at all
# (its nrfu reports it unreachable rather than failing a test). `rocefab verify` covers each.
UNCOVERED = {"pfc-off", "dscp-map", "strict-off", "pause-storm", "watchdog-storm", "ecn-marks", "errors",
             "unreachable"}


def test_every_switch_fault_is_covered_or_named_as_uncovered() -> None:
    # deploy faults (a lost confirm) meet a run of apply, not a state of the fabric a test could judge
    switch_faults = {name for name, kind in control.KINDS.items() if kind.on_switch and not kind.deploy}
    covered = {words[0] for _, words, _ in FAULTS}
    assert covered | UNCOVERED == switch_faults and not covered & UNCOVERED


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    """The pushed lab, its rendered catalog and the exported ANTA inventory."""
    if shutil.which("anta") is None:
        pytest.skip("anta is not installed: pip install 'anta[cli]' (in the test extra)")
    base = tmp_path_factory.mktemp("anta")
    with pushed_lab(INTENT, base / "lab") as folder:
        rendered = rocefab("render", INTENT, "-o", base / "out")
        assert rendered.returncode == 0, rendered.stderr
        exported = rocefab("inventory", "export", INTENT, "--format", "anta", "-i", folder / "inventory.yaml",
                           "-o", base / "anta-inventory.yml")
        assert exported.returncode == 0, exported.stderr
        yield folder, base / "out" / "anta" / "catalog.yml", base / "anta-inventory.yml"


def nrfu(lab: tuple[Path, Path, Path], report: Path) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """`anta nrfu` as an operator runs it: the lab's CA for eAPI's certificate, credentials from ANTA's own
    variables. (device, test) -> (result, messages)."""
    folder, catalog, inventory = lab
    env = {**os.environ, "SSL_CERT_FILE": str(folder / "lab-ca.pem"), "ANTA_USERNAME": "admin",
           "ANTA_PASSWORD": (folder / "password").read_text(encoding="utf-8").strip()}
    ran = subprocess.run(["anta", "nrfu", "-i", str(inventory), "--catalog", str(catalog), "json", "--output",
                          str(report)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert report.exists(), ran.stdout + ran.stderr
    return {(r["name"], r["test"]): (r["result"], r["messages"]) for r in json.loads(report.read_text())}


def test_anta_passes_a_pushed_fabric_and_fails_each_fault(lab: tuple[Path, Path, Path], tmp_path: Path,
                                                          subtests: pytest.Subtests) -> None:
    results = nrfu(lab, tmp_path / "clean.json")
    assert {device for device, _ in results} == {"leaf1-a", "leaf1-b"}
    assert {r for r, _ in results.values()} == {"success"}, {k: v for k, v in results.items() if v[0] != "success"}
    for device, words, test in FAULTS:
        with subtests.test(msg=f"{device} {' '.join(words)}"):
            try:
                fault(lab[0], device, *words)
                found = nrfu(lab, tmp_path / f"{words[0]}.json")
                target = "leaf1-b" if words[0] == "bgp-down" else device
                assert found[(target, test)][0] == "failure", found[(target, test)]
            finally:
                clear(lab[0])
