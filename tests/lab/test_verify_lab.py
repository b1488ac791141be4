"""`rocefab verify` and `rocefab doctor` against the running lab, from the command line: a pushed fabric passes;
each fault the lab can make is found by verify and named by doctor at the right device and port; clearing the
faults passes again.

One lab serves the module, and its cases run as subtests of one test: pytest-xdist then keeps them on one worker
instead of starting (and pushing) a lab per worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from verifylab import doctor_json as doctor_lab_json
from verifylab import fault, pushed_lab, rocefab, run_steps
from verifylab import verify_json as verify_lab_json

from rocefab.deploy.inventory import PasswordSource, load_inventory
from rocefab.platforms.eos.session import EosSession

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intents" / "lab.yaml"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pushed_lab(INTENT, tmp_path_factory.mktemp("verify") / "lab") as folder:
        yield folder


def verify_json(inventory: Path) -> tuple[int, dict[str, Any]]:
    return verify_lab_json(INTENT, inventory)


def doctor_json(inventory: Path) -> tuple[int, list[dict[str, Any]]]:
    return doctor_lab_json(INTENT, inventory)


def pushed_lab_passes_and_every_check_was_made(inventory: Path) -> None:
    code, report = verify_json(inventory)
    assert code == 0, [c for c in report["checks"] if c["verdict"] != "pass"]
    checks = {(c["device"], c["check"]) for c in report["checks"]}
    for device in ("leaf1-a", "leaf1-b", "spine1"):
        for check in ("link", "speed", "lldp", "mtu", "trust", "pfc", "pfc-watchdog", "dscp-map", "cnp-strict",
                      "ecn", "bgp"):
            assert (device, check) in checks, f"{device} was not checked for {check}"
    assert ("leaf1-a", "mlag") in checks
    # ECMP: a leaf reaches the spine's loopback over both uplinks, the spine the pair's subnet over all four links
    ecmp = {(c["device"], c["port"]): c["expected"] for c in report["checks"] if c["check"] == "ecmp"}
    assert ecmp[("leaf1-a", "10.0.0.1/32")].startswith("2 paths") and ecmp[("spine1", "10.101.0.0/24")].startswith(
        "4 paths"), ecmp
    for host in ("gpu001", "gpu004"):
        for check in ("link", "speed", "mtu", "bond", "nic-trust", "nic-pfc", "nic-dscp-map", "global-pause",
                      "dcqcn", "rdma", "gid", "traffic-class", "rdma-cm-tos", "nccl", "nic-firmware", "firmware-match",
                      "nvidia-peermem"):
            assert (host, check) in checks, f"{host} was not checked for {check}"


def must_show_mtu_pfc_and_speed(lab: Path, inventory: Path) -> None:
    """The issue's walk: each fault makes verify exit 1 naming the device, the port and the value, and doctor
    print the matching diagnosis; --clear passes again."""
    for words, code, value in ((("mtu", "Ethernet61/1", "1500"), "mtu-below-jumbo", "1500"),
                               (("pfc-off", "Ethernet61/1"), "pfc-missing", "none"),
                               (("speed", "Ethernet61/1", "400"), "link-wrong-speed", "400G")):
        made = rocefab("lab", "fault", "leaf1-a", *words, "--dir", lab)
        assert made.returncode == 0, made.stderr
        checked = rocefab("verify", INTENT, "-i", inventory)
        assert checked.returncode == 1, checked.stdout
        failing = [line for line in checked.stdout.splitlines() if "fail" in line]
        assert any("leaf1-a" in line and "Ethernet61/1" in line and value in line for line in failing), checked.stdout
        diagnosed = rocefab("doctor", INTENT, "-i", inventory)
        assert diagnosed.returncode == 1
        assert f"[{code}] leaf1-a Ethernet61/1" in diagnosed.stdout, diagnosed.stdout
        assert "fix:" in diagnosed.stdout and "symptom:" in diagnosed.stdout
        assert rocefab("lab", "fault", "--clear", "--dir", lab).returncode == 0
        passed = rocefab("verify", INTENT, "-i", inventory)
        assert passed.returncode == 0, passed.stdout


# (device, fault words, diagnosis code, where it must be named (device, port); more places may be named too)
CASES = [
    ("leaf1-a", ("mtu", "Ethernet61/1", "1500"), "mtu-below-jumbo", ("leaf1-a", "Ethernet61/1")),
    ("spine1", ("mtu", "swp3", "1500"), "mtu-below-jumbo", ("spine1", "swp3")),
    ("gpu003", ("mtu", "bond0", "1500"), "mtu-below-jumbo", ("gpu003", "bond0")),
    ("leaf1-b", ("pfc-off", "Ethernet1/1"), "pfc-missing", ("leaf1-b", "Ethernet1/1")),
    ("spine1", ("pfc-off", "swp1"), "pfc-missing", ("spine1", "swp2")),
    ("leaf1-a", ("pfc-off", "Ethernet62/1"), "trust-mismatch", ("leaf1-a", "Ethernet62/1")),
    ("leaf1-a", ("pfc-off", "Ethernet62/1"), "watchdog-off", ("leaf1-a", "Ethernet62/1")),
    ("gpu001", ("trust-pcp", "ens1f0np0"), "trust-mismatch", ("gpu001", "ens1f0np0")),
    ("spine1", ("dscp-map", "24", "3"), "dscp-map-mismatch", ("spine1", "")),
    ("gpu002", ("nic-dscp-map", "ens1f1np1", "26", "0"), "dscp-map-mismatch", ("gpu002", "ens1f1np1")),
    ("gpu004", ("global-pause", "ens1f0np0"), "global-pause-on", ("gpu004", "ens1f0np0")),
    ("gpu002", ("ecn-off", "ens1f1np1"), "dcqcn-off", ("gpu002", "ens1f1np1")),
    ("leaf1-a", ("strict-off", "6"), "cnp-not-strict", ("leaf1-a", "")),
    ("spine1", ("strict-off", "6"), "cnp-not-strict", ("spine1", "")),
    ("leaf1-a", ("speed", "Ethernet62/1", "400"), "link-wrong-speed", ("spine1", "swp2")),
    ("leaf1-b", ("link-down", "Ethernet62/1"), "link-down", ("spine1", "swp4")),
    ("leaf1-b", ("link-down", "Ethernet62/1"), "oversubscribed", ("leaf1-b", "")),
    ("leaf1-a", ("miscable", "Ethernet61/1", "Ethernet62/1"), "miscabled", ("spine1", "swp1")),
    ("spine1", ("bgp-down", "leaf1-b"), "bgp-down", ("leaf1-b", "Ethernet61/1")),
    ("leaf1-a", ("link-down", "Ethernet63/1"), "link-down", ("leaf1-b", "Ethernet63/1")),
    ("gpu001", ("bond-leave", "ens1f1np1"), "bond-degraded", ("gpu001", "bond0")),
    ("gpu001", ("bond-leave", "ens1f1np1"), "rdma-inactive", ("gpu001", "mlx5_bond_0")),
    ("gpu003", ("no-address", "bond0"), "gid-missing", ("gpu003", "mlx5_bond_0")),
    ("gpu004", ("tos-reset", "mlx5_bond_0"), "tos-mismatch", ("gpu004", "mlx5_bond_0")),
    ("gpu002", ("nccl-set", "NCCL_IB_TC=0"), "nccl-env-mismatch", ("gpu002", "")),
    ("gpu004", ("unreachable",), "unreachable", ("gpu004", "")),
    ("leaf1-b", ("link-down", "Ethernet62/1"), "ecmp-below-plan", ("leaf1-b", "Ethernet62/1")),
    ("leaf1-b", ("link-down", "Ethernet62/1"), "ecmp-below-plan", ("spine1", "swp4")),
    # both sessions to the spine cut: leaf1-b reaches the spine's loopback only through its MLAG peer now
    ("spine1", ("bgp-down", "leaf1-b"), "ecmp-below-plan", ("leaf1-b", "Ethernet61/1,Ethernet62/1")),
    ("gpu003", ("firmware", "ens1f0np0", "28.39.1002"), "firmware-mismatch", ("gpu003", "mlx5_bond_0")),
    ("gpu001", ("peermem-unload",), "peermem-missing", ("gpu001", "")),
]


def _batches(cases: list[tuple[str, tuple[str, ...], str, tuple[str, str]]]
             ) -> list[list[tuple[str, tuple[str, ...], str, tuple[str, str]]]]:
    """The cases in as few lab states as keep them apart: a batch makes one fault per device (a case sharing
    its fault with the one before joins that one's batch), and never two faults on one fabric link, so no
    fault hides or explains another. One doctor run then checks a whole batch: six instead of 26."""
    leaf_spine = {("leaf1-a", "Ethernet61/1"): "swp1", ("leaf1-a", "Ethernet62/1"): "swp2",
                  ("leaf1-b", "Ethernet61/1"): "swp3", ("leaf1-b", "Ethernet62/1"): "swp4"}

    def links(device: str, words: tuple[str, ...]) -> set[str]:
        ports = {w for w in words[1:] if w.startswith(("Ethernet", "swp"))}
        if device == "spine1":
            return ports
        spine = {leaf_spine[(device, p)] for p in ports if (device, p) in leaf_spine}
        # a leaf-wide fault (a whole device unreachable or its CNP queue) touches none of the links' checks
        return spine | ({f"{device}:peer"} if any(p in ("Ethernet63/1", "Ethernet64/1") for p in ports) else set())

    batches: list[list[tuple[str, tuple[str, ...], str, tuple[str, str]]]] = []
    for case in cases:
        device, words = case[0], case[1]
        home = next((b for b in batches if (device, words) in {(c[0], c[1]) for c in b}), None)
        if home is None:
            home = next((b for b in batches
                         if device not in {c[0] for c in b}
                         and not links(device, words) & {lk for c in b for lk in links(c[0], c[1])}), None)
        if home is None:
            batches.append(home := [])
        home.append(case)
    return batches


def doctor_names_each(lab: Path, inventory: Path,
                      batch: list[tuple[str, tuple[str, ...], str, tuple[str, str]]]) -> None:
    made = set()
    for device, words, _, _ in batch:
        if (device, words) not in made:
            fault(lab, device, *words)
            made.add((device, words))
    status, diagnoses = doctor_json(inventory)
    assert status == 1
    for d in diagnoses:
        assert d["evidence"] and d["symptom"] and d["fix"], d
    found = {(d["code"], d["device"], d["port"]) for d in diagnoses}
    missing = [(code, where, device, words) for device, words, code, where in batch if (code, *where) not in found]
    assert not missing, f"not named: {missing}; doctor said {sorted(found)}"


def mlag_pair_without_its_peer_link(lab: Path, inventory: Path) -> None:
    fault(lab, "leaf1-a", "link-down", "Ethernet63/1")
    fault(lab, "leaf1-a", "link-down", "Ethernet64/1")
    _, diagnoses = doctor_json(inventory)
    assert {("mlag-unhealthy", "leaf1-a"), ("mlag-unhealthy", "leaf1-b")} <= {(d["code"], d["device"])
                                                                            for d in diagnoses}


def faults_are_refused_with_reasons(lab: Path, inventory: Path) -> None:
    for words, said in ((("leaf1-a", "mtu", "Ethernet99/1", "1500"), "no interface Ethernet99/1"),
                        (("leaf1-a", "trust-pcp", "ens1f0np0"), "host fault"),
                        (("nowhere", "link-down", "swp1"), "no device 'nowhere'"),
                        (("spine1", "explode"), "no fault kind 'explode'"),
                        (("spine1", "speed", "swp1", "fast"), "not a whole number"),
                        (("leaf1-a", "dscp-map", "24", "3"), "not modelled for leaf1-a's platform"),
                        (("gpu001", "firmware", "ens1f0np0", "new"), "not a firmware release"),
                        (("gpu001", "retransmits", "mlx5_9"), "no RDMA device 'mlx5_9'")):
        refused = rocefab("lab", "fault", *words, "--dir", lab)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr


def counters_over_a_sampling_window(lab: Path, inventory: Path) -> None:
    """--sample-s reads switch counters twice: a healthy lab passes (platforms whose counters verify does not read
    yet say so as a warning), and each counter fault is named by doctor."""
    code, report = verify_lab_json(INTENT, inventory, "--sample-s", "1")
    assert code == 0, [c for c in report["checks"] if c["verdict"] == "fail"]
    checks = {(c["device"], c["check"]) for c in report["checks"]}
    assert {("leaf1-a", "pfc-pause-rate"), ("leaf1-a", "lossless-drops"), ("leaf1-b", "input-error-rate")} <= checks
    # the Cumulus spine's counters are read too (NVUE's interface and QoS counters)
    assert {("spine1", "pfc-pause-rate"), ("spine1", "pfc-watchdog-events"), ("spine1", "ecn-marking")} <= checks
    fault(lab, "leaf1-a", "pause-storm", "Ethernet61/1")
    fault(lab, "leaf1-b", "drops", "Ethernet62/1")
    fault(lab, "leaf1-a", "errors", "Ethernet1/1")
    status, diagnoses = doctor_lab_json(INTENT, inventory, "--sample-s", "1")
    assert status == 1
    found = {(d["code"], d["device"], d["port"]) for d in diagnoses}
    assert {("pause-storm", "leaf1-a", "Ethernet61/1"), ("lossless-drops", "leaf1-b", "Ethernet62/1"),
            ("input-errors", "leaf1-a", "Ethernet1/1")} <= found, found


def host_counters_over_a_sampling_window(lab: Path, inventory: Path) -> None:
    """--sample-s reads the hosts' RDMA and NIC counters twice too: healthy hosts pass every counter check; gpu001's
    retransmissions are named with what else failed on its leaf ports (leaf1-a Ethernet1/1's input errors), and
    gpu002's pause storm at its NIC port and at the leaf port that receives it."""
    _, report = verify_lab_json(INTENT, inventory, "--sample-s", "1")
    hosts = [c for c in report["checks"] if c["device"].startswith("gpu")]
    assert not [c for c in hosts if c["verdict"] != "pass"], [c for c in hosts if c["verdict"] != "pass"]
    checks = {(c["device"], c["check"]) for c in hosts}
    assert {(h, check) for h in ("gpu001", "gpu004")
            for check in ("roce-retransmit-rate", "nic-cnp", "nic-pause-rate")} <= checks
    fault(lab, "gpu001", "retransmits", "mlx5_bond_0")
    fault(lab, "leaf1-a", "errors", "Ethernet1/1")
    fault(lab, "gpu002", "host-pause-storm", "ens1f1np1")
    status, diagnoses = doctor_lab_json(INTENT, inventory, "--sample-s", "1")
    assert status == 1
    found = {(d["code"], d["device"], d["port"]) for d in diagnoses}
    assert {("roce-retransmissions", "gpu001", "mlx5_bond_0"), ("nic-pause-storm", "gpu002", "ens1f1np1"),
            ("pause-storm", "leaf1-b", "Ethernet1/5")} <= found, found
    retransmissions = next(d for d in diagnoses if d["code"] == "roce-retransmissions")
    assert any("leaf1-a Ethernet1/1 input-error-rate" in e for e in retransmissions["evidence"]), retransmissions


def watchdog_and_ecn_marks(lab: Path, inventory: Path) -> None:
    """A stormed port whose PFC watchdog keeps shutting the lossless queue: on the Cumulus spine the watchdog's
    count fails and doctor names watchdog-firing; on an EOS leaf, whose watchdog events verify has no sourced eAPI
    answer for, the check says "not reported" (a warning, never a pass) while the storm's pause frames fail, and
    doctor names both. A congested spine port's ECN marks are a warning only."""
    fault(lab, "spine1", "watchdog-storm", "swp2")
    fault(lab, "leaf1-b", "watchdog-storm", "Ethernet1/5")
    fault(lab, "spine1", "ecn-marks", "swp1")
    code, report = verify_lab_json(INTENT, inventory, "--sample-s", "1")
    rows = {(c["device"], c["port"], c["check"]): c for c in report["checks"]}
    assert code == 1 and rows[("spine1", "swp2", "pfc-watchdog-events")]["verdict"] == "fail"
    unread = rows[("leaf1-b", "Ethernet1/5", "pfc-watchdog-events")]
    assert unread["verdict"] == "warn" and unread["observed"].startswith("not reported by"), unread
    assert rows[("leaf1-b", "Ethernet1/5", "pfc-pause-rate")]["verdict"] == "fail"
    assert rows[("spine1", "swp1", "ecn-marking")]["verdict"] == "warn", rows[("spine1", "swp1", "ecn-marking")]
    _, diagnoses = doctor_lab_json(INTENT, inventory, "--sample-s", "1")
    found = {(d["code"], d["device"], d["port"]) for d in diagnoses}
    assert {("watchdog-firing", "spine1", "swp2"), ("pause-storm", "leaf1-b", "Ethernet1/5"),
            ("not-reported", "leaf1-b", "")} <= found, found
    assert not any(d["device"] == "spine1" and d["port"] == "swp1" for d in diagnoses), diagnoses


def apply_rolls_back_a_wave_that_fails_verify(lab: Path, inventory: Path) -> None:
    """The verify gate: leaf1-a has drifted (MTU by hand) and its peer-link optic trains slow; re-applying the pair
    commits leaf1-a's MTU, verify then fails its peer link towards leaf1-b (in the same wave, so due now), and the
    commit is rolled back: leaf1-a keeps the hand-made MTU, and the output names the failed check."""
    fault(lab, "leaf1-a", "mtu", "Ethernet61/1", "1500")
    fault(lab, "leaf1-a", "speed", "Ethernet63/1", "100")
    # a 20 s revert window: the gate waits 5 s for the link to come right before it gives up
    applied = rocefab("apply", INTENT, "-i", inventory, "--yes", "--only", "leaf1-a,leaf1-b", "--confirm", "20")
    assert applied.returncode == 1, applied.stdout
    assert "verify after commit failed: speed Ethernet63/1" in applied.stdout, applied.stdout
    assert "rolled back" in applied.stdout
    _, report = verify_json(inventory)
    failing = {(c["device"], c["port"], c["check"]) for c in report["checks"] if c["verdict"] == "fail"}
    assert ("leaf1-a", "Ethernet61/1", "mtu") in failing, "the rollback restored the config from before"
    skipped = rocefab("apply", INTENT, "-i", inventory, "--yes", "--only", "leaf1-a", "--no-verify")
    assert skipped.returncode == 0, skipped.stdout


def a_quiesced_leaf_leaves_the_spines_ecmp_group(inventory: Path) -> None:
    """EOS maintenance mode on leaf1-a (the System unit quiesced) drains BGP with the graceful-shutdown community:
    the Cumulus spine keeps the pair's subnet only over leaf1-b's two links, which verify's ECMP check reads from
    FRR as 2 of the planned 4 paths; `no quiesce` gives the spine all four again."""
    def maintenance(line: str) -> None:
        access = load_inventory(inventory).access("leaf1-a", "eos", PasswordSource(interactive=False))
        with EosSession(access) as session:
            session.load(f"maintenance\n   unit System\n      {line}\n", replace=False)
            session.commit()

    def spine_subnet() -> dict[str, Any]:
        _, report = verify_json(inventory)
        return next(c for c in report["checks"]
                    if c["device"] == "spine1" and c["check"] == "ecmp" and c["port"] == "10.101.0.0/24")

    maintenance("quiesce")
    try:
        drained = spine_subnet()
        assert drained["verdict"] == "fail" and drained["observed"].startswith("2 paths"), drained
    finally:
        maintenance("no quiesce")
    again = spine_subnet()
    assert again["verdict"] == "pass" and again["observed"].startswith("4 paths"), again


def eos_leaf_drains_with_the_command_and_undrains(inventory: Path) -> None:
    """`rocefab drain leaf1-a` commits the quiesced System unit and reads the spine's route to the pair's subnet on
    leaf1-b's links only; `rocefab undrain` brings the four paths back."""
    drained = rocefab("drain", INTENT, "-i", inventory, "--only", "leaf1-a")
    try:
        assert drained.returncode == 0, drained.stdout + drained.stderr
        assert "drained leaf1-a: 1 route(s) on 1 neighbour(s) as expected" in drained.stdout
        assert "      quiesce" in running_config(inventory, "leaf1-a")
    finally:
        undrained = rocefab("undrain", INTENT, "-i", inventory, "--only", "leaf1-a")
    assert undrained.returncode == 0, undrained.stdout + undrained.stderr
    assert "quiesce" not in running_config(inventory, "leaf1-a")


def running_config(inventory: Path, name: str) -> str:
    access = load_inventory(inventory).access(name, "eos", PasswordSource(interactive=False))
    with EosSession(access) as session:
        return session.running_config()


def test_verify_and_doctor_on_the_lab(lab: Path, subtests: pytest.Subtests) -> None:
    inventory = lab / "inventory.yaml"
    steps = [("pushed lab passes", lambda: pushed_lab_passes_and_every_check_was_made(inventory)),
             ("must show: mtu, pfc-off, speed", lambda: must_show_mtu_pfc_and_speed(lab, inventory))]
    steps += [("; ".join(f"{code} at {where[0]} {where[1]}".rstrip() for _, _, code, where in batch),
               lambda b=batch: doctor_names_each(lab, inventory, b))
              for batch in _batches(CASES)]
    steps += [("mlag without its peer link", lambda: mlag_pair_without_its_peer_link(lab, inventory)),
              ("apply's verify gate rolls back", lambda: apply_rolls_back_a_wave_that_fails_verify(lab, inventory)),
              ("counters over a sampling window", lambda: counters_over_a_sampling_window(lab, inventory)),
              ("host counters over a sampling window", lambda: host_counters_over_a_sampling_window(lab, inventory)),
              ("watchdog and ECN marks", lambda: watchdog_and_ecn_marks(lab, inventory)),
              ("faults refused with reasons", lambda: faults_are_refused_with_reasons(lab, inventory)),
              ("a quiesced leaf leaves the spine's ECMP group",
               lambda: a_quiesced_leaf_leaves_the_spines_ecmp_group(inventory)),
              ("rocefab drain and undrain an EOS leaf",
               lambda: eos_leaf_drains_with_the_command_and_undrains(inventory))]
    run_steps(lab, subtests, steps)


def test_verify_input_errors_exit_2(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("devices:\n  spine1: {host: 127.0.0.1}\n")
    missing = rocefab("verify", INTENT, "-i", inventory)
    assert missing.returncode == 2 and "no entry for: leaf1-a, leaf1-b, gpu001" in missing.stderr, missing.stderr
    unknown = rocefab("doctor", INTENT, "-i", inventory, "--only", "spine1,nowhere")
    assert unknown.returncode == 2 and "the plan has no device nowhere" in unknown.stderr, unknown.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr
