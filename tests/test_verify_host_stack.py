"""verify below the host script, without a lab: the readers of NIC firmware, nvidia_peermem and the host counters on
the tools' and sysfs' real formats; the rows they make (one firmware per board across the fleet, retransmissions
against the intent's threshold, pause storms, unanswered ECN marks); doctor's diagnoses of them."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import needs_tool

from rocefab.deploy.verify.checks import Row, Verdict, driver_rows, firmware_rows
from rocefab.deploy.verify.doctor import diagnose
from rocefab.deploy.verify.host_counter_checks import host_counter_rows
from rocefab.deploy.verify.observation import HostCounters, HostObservation, NetdevPause, RdmaCounters, RdmaDevice
from rocefab.platforms.host import counters, observe
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, HostNic

ROOT = Path(__file__).resolve().parents[1]
_checked = check_file(ROOT / "intents" / "lab.yaml", "lab")
assert _checked.plan is not None
PLAN: FabricPlan = _checked.plan
HOST = PLAN.hosts[0]  # gpu001: bond0 over ens1f0np0 (leaf1-a Ethernet1/1) and ens1f1np1, RDMA device mlx5_bond_0

# what the host read script prints for one RDMA device and the modules, around the sections this file is about
OBSERVED = """@@rocefab rdma mlx5_bond_0
state\t4: ACTIVE
tclass\tGlobal tclass=106
gid\t3\t0000:0000:0000:0000:0000:ffff:0a65:0001\tRoCE v2\tbond0
tos\t106
fw\t28.39.1002
board\tMT_0000000834
@@rocefab modules
loaded\tnvidia_peermem
@@rocefab nccl
@@rocefab absent
"""

# `ethtool -S` of an mlx5 PF (ConnectX-7, MLNX_OFED 24.10): a cut of its ~1,500 lines, its own layout
ETHTOOL_S = """NIC statistics:
     rx_packets: 912387
     tx_packets: 903311
     rx_vport_rdma_unicast_packets: 81234567
     rx_pause_ctrl_phy: 0
     tx_pause_ctrl_phy: 0
     rx_prio0_bytes: 11734
     rx_prio0_packets: 102
     rx_prio3_bytes: 918273645
     rx_prio3_packets: 81234001
     rx_prio3_pause: 1204
     rx_prio3_pause_duration: 5310
     tx_prio3_pause: 87
     tx_prio3_pause_duration: 402
     rx_prio3_pause_transition: 602
     rx_prio4_pause: 0
     tx_prio4_pause: 0
     tx_pause_storm_warning_events: 0
     tx_pause_storm_error_events: 0
"""
HW_COUNTERS = {"out_of_sequence": 12, "packet_seq_err": 3, "local_ack_timeout_err": 1, "rnr_nak_retry_err": 0,
               "np_ecn_marked_roce_packets": 5012, "np_cnp_sent": 4990, "rp_cnp_handled": 301,
               "duplicate_request": 0, "implied_nak_seq_err": 0}


def test_host_reader_takes_firmware_and_modules() -> None:
    obs = observe.parse(OBSERVED, "gpu001")
    device = obs.rdma["mlx5_bond_0"]
    assert (device.fw_version, device.board_id, device.firmware) == \
        ("28.39.1002", "MT_0000000834", "28.39.1002 (MT_0000000834)")
    assert obs.modules == frozenset({"nvidia_peermem"})
    unreadable = observe.parse(OBSERVED.replace("loaded\tnvidia_peermem", "unreadable"), "gpu001")
    assert unreadable.modules is None
    assert observe.parse(OBSERVED.replace("loaded\tnvidia_peermem\n", ""), "gpu001").modules == frozenset()


def test_host_read_script_reads_firmware_and_modules_from_files(tmp_path: Path) -> None:
    """The new sections, run by bash against a sysfs and /proc of files: no tool answers for them."""
    ib = tmp_path / "sys" / "class" / "infiniband" / "mlx5_bond_0"
    ib.mkdir(parents=True)
    (ib / "fw_ver").write_text("28.39.1002\n")
    (ib / "board_id").write_text("MT_0000000834\n")
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "modules").write_text(
        "nvidia_uvm 4956160 0 - Live 0x0000000000000000 (OE)\n"
        "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n")
    env = {"PATH": "/usr/bin:/bin", "ROCEFAB_SYSFS_ROOT": str(tmp_path / "sys"),
           "ROCEFAB_PROC_ROOT": str(tmp_path / "proc"), "ROCEFAB_ETC_ROOT": str(tmp_path / "etc")}
    out = subprocess.run(["/bin/bash", "-c", observe.script([], ["mlx5_bond_0"])], env=env, capture_output=True,
                         text=True, check=True).stdout
    obs = observe.parse(out, "gpu001")
    assert obs.rdma["mlx5_bond_0"].firmware == "28.39.1002 (MT_0000000834)"
    assert obs.modules == frozenset({"nvidia_peermem"})


def test_counters_script_reads_sysfs_and_ethtool(tmp_path: Path) -> None:
    """The sampling script on mlx5's sysfs files and a real `ethtool -S` listing: only the per-priority pause
    counters are kept, and only the hw_counters verify asks for."""
    port = tmp_path / "sys" / "class" / "infiniband" / "mlx5_bond_0" / "ports" / "1"
    (port / "hw_counters").mkdir(parents=True)
    (port / "counters").mkdir()
    (port / "counters" / "port_xmit_packets").write_text("81234567\n")
    for name, value in HW_COUNTERS.items():
        (port / "hw_counters" / name).write_text(f"{value}\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "listing").write_text(ETHTOOL_S)
    (tools / "ethtool").write_text(f'#!/bin/bash\n[[ $1 == -S && $2 == ens1f0np0 ]] && exec cat {tools}/listing\n'
                                   'echo "Cannot get stats strings information: No such device" >&2; exit 96\n')
    (tools / "ethtool").chmod(0o755)
    env = {"PATH": f"{tools}:/usr/bin:/bin", "ROCEFAB_SYSFS_ROOT": str(tmp_path / "sys")}
    out = subprocess.run(["/bin/bash", "-c", counters.script(["ens1f0np0", "ens9"], ["mlx5_bond_0", "mlx5_9"])],
                         env=env, capture_output=True, text=True, check=True).stdout
    read = counters.parse(out)
    assert read.rdma == {"mlx5_bond_0": RdmaCounters(
        81234567, {"out_of_sequence": 12, "packet_seq_err": 3, "local_ack_timeout_err": 1}, 5012, 4990, 301)}
    assert read.pause == {"ens1f0np0": NetdevPause({3: 1204, 4: 0}, {3: 87, 4: 0})}


@needs_tool("shellcheck", "shellcheck")
def test_host_read_scripts_pass_shellcheck(tmp_path: Path) -> None:
    for name, text in (("observe", observe.script(["bond0", "ens1f0np0"], ["mlx5_bond_0", "mlx5_2"])),
                       ("counters", counters.script(["ens1f0np0", "ens1f1np1"], ["mlx5_bond_0", "mlx5_2"]))):
        script = tmp_path / f"{name}.sh"
        script.write_text("#!/bin/bash\n" + text)
        result = subprocess.run(["shellcheck", "-S", "style", str(script)], capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, result.stdout


def _observed(firmware: str | None = "28.43.1014", board: str = "MT_0000000838",
              modules: frozenset[str] | None = frozenset({"nvidia_peermem"})) -> HostObservation:
    device = RdmaDevice("mlx5_bond_0", "4: ACTIVE", (), 106, 106, firmware, board)
    return HostObservation(HOST.name, {}, {"mlx5_bond_0": device}, None, modules)


def _by(rows: list[Row], check: str) -> list[Row]:
    return [r for r in rows if r.check == check]


def test_driver_rows() -> None:
    rows = driver_rows(PLAN, HOST, _observed())
    assert [(r.port, r.observed, r.verdict) for r in _by(rows, "nic-firmware")] == \
        [("mlx5_bond_0", "28.43.1014 (MT_0000000838)", Verdict.PASS)]
    assert _by(rows, "nvidia-peermem")[0].verdict is Verdict.PASS
    assert _by(driver_rows(PLAN, HOST, _observed(firmware=None)), "nic-firmware")[0].observed == "not reported"
    for modules, said in ((frozenset(), "not loaded"), (None, "/proc/modules not readable")):
        row = _by(driver_rows(PLAN, HOST, _observed(modules=modules)), "nvidia-peermem")[0]
        assert (row.observed, row.verdict) == (said, Verdict.FAIL)
    predecessor = _by(driver_rows(PLAN, HOST, _observed(modules=frozenset({"nv_peer_mem"}))), "nvidia-peermem")[0]
    assert predecessor.verdict is Verdict.PASS


def test_one_firmware_per_board_model_across_the_fleet() -> None:
    hosts = PLAN.hosts[:4]
    fleet = [(h, replace(_observed(), device=h.name)) for h in hosts]
    fleet[2] = (hosts[2], _observed(firmware="28.39.1002"))
    fleet.append((replace(hosts[0], name="gpu099"), _observed(firmware="28.39.1002", board="MT_0000000999")))
    rows = firmware_rows(fleet)
    failed = [(r.device, r.port, r.observed) for r in rows if r.failed]
    assert failed == [(hosts[2].name, "mlx5_bond_0", "28.39.1002")], rows
    assert "28.43.1014, as 3 of 4 MT_0000000838 NICs run" in rows[0].expected
    tie = firmware_rows([(hosts[0], _observed()), (hosts[1], _observed(firmware="28.39.1002"))])
    assert all(r.failed for r in tie) and "no majority" in tie[0].expected


def _read(seconds: float, *, retransmits: int = 0, sent: int = 1_000_000, marked: int = 50, cnps: int = 50,
          tx_pause: int = 5) -> HostCounters:
    rdma = RdmaCounters(int(sent * seconds), {"out_of_sequence": retransmits, "packet_seq_err": 0},
                        int(marked * seconds), int(cnps * seconds), 0)
    pause = {m.netdev: NetdevPause({3: int(5 * seconds)}, {3: int(tx_pause * seconds)})
             for m in HOST.bonds[0].members}
    return HostCounters({"mlx5_bond_0": rdma}, pause)


def test_host_counter_rows() -> None:
    healthy = host_counter_rows(PLAN, HOST, _read(0), _read(1, retransmits=50), 1)
    assert not [r for r in healthy if r.verdict is not Verdict.PASS], healthy
    assert {r.check for r in healthy} == {"roce-retransmit-rate", "nic-cnp", "nic-pause-rate"}
    assert len(_by(healthy, "nic-pause-rate")) == 2  # each bond port, on the one lossless priority
    lossy = _by(host_counter_rows(PLAN, HOST, _read(0), _read(1, retransmits=1_000), 1), "roce-retransmit-rate")[0]
    assert lossy.failed and lossy.expected == "<= 0.01 % of packets sent" and "out_of_sequence +1,000" in lossy.observed
    storm = host_counter_rows(PLAN, HOST, _read(0), _read(1, tx_pause=200_000), 1)
    assert [r.port for r in _by(storm, "nic-pause-rate") if r.failed] == [m.netdev for m in HOST.bonds[0].members]
    unanswered = _by(host_counter_rows(PLAN, HOST, _read(0), _read(1, cnps=0), 1), "nic-cnp")[0]
    assert unanswered.failed
    missing = host_counter_rows(PLAN, HOST, _read(0), HostCounters({}, {}), 1)
    # nothing read the second time: every row says so, as a warning, and none passes
    assert missing and all(r.verdict is Verdict.WARN and r.observed == "not reported" for r in missing)


def test_doctor_names_retransmissions_with_what_else_failed_nearby() -> None:
    port = HOST.bonds[0].members[0]
    rows = [Row(HOST.name, "mlx5_bond_0", "roce-retransmit-rate", "<= 0.01 % of packets sent", "0.1000 %",
                Verdict.FAIL),
            Row(port.switch, port.port, "input-error-rate", "<= 0.001% of packets in", "0.0100%", Verdict.FAIL),
            Row("spine1", "swp1", "mtu", "9216", "1500", Verdict.FAIL)]
    found = {d.code: d for d in diagnose(PLAN, rows, "lab.yaml", "inventory.yaml")}
    rtx = found["roce-retransmissions"]
    assert (rtx.device, rtx.port) == (HOST.name, "mlx5_bond_0")
    assert any(f"{port.switch} {port.port} input-error-rate" in e for e in rtx.evidence), rtx.evidence
    assert not any("spine1" in e for e in rtx.evidence)
    alone = diagnose(PLAN, rows[:1], "lab.yaml", "inventory.yaml")
    assert "nothing else failed" in alone[0].evidence[-1]


@pytest.mark.parametrize(("check", "code"), [("firmware-match", "firmware-mismatch"),
                                             ("nvidia-peermem", "peermem-missing"),
                                             ("nic-pause-rate", "nic-pause-storm"), ("nic-cnp", "dcqcn-off"),
                                             ("nic-cable-len", "nic-headroom-short")])
def test_doctor_rules_of_the_host_stack(check: str, code: str) -> None:
    row = Row(HOST.name, "x", check, "e", "o", Verdict.FAIL)
    (diagnosis,) = diagnose(PLAN, [row], "lab.yaml", "inventory.yaml")
    assert diagnosis.code == code and diagnosis.symptom and diagnosis.fix


def test_fake_host_counters_advance_and_faults_make_them_grow(tmp_path: Path) -> None:
    """The lab's traffic model on a fake host: two renders apart in time, read by the real sampling script and the
    ethtool stub; a retransmitting device and a storming port are the ones that fail."""
    from rocefab.lab.host import fakehost
    from rocefab.lab.host.traffic import HostTraffic

    root = fakehost.make_host(tmp_path / "host", ["ens1f0np0", "ens1f1np1"])
    fakehost.stub(root, "mlnx_qos", "-i", "ens1f0np0", "--pfc", "0,0,0,1,0,0,0,0")
    clock = [100.0]
    traffic = HostTraffic(clock=lambda: clock[0])
    env = fakehost.host_env(root)
    # rail NICs: each port with an RDMA device of its own, as the fake host has them without a bond
    nics = replace(HOST, bonds=(), nics=tuple(
        HostNic(netdev, rdma, 400, rail, "leaf1-a", f"Ethernet{rail + 1}/1", f"10.1.0.{2 * rail + 1}/31",
                f"10.1.0.{2 * rail}", (), 100 + rail, ())
        for rail, (netdev, rdma) in enumerate((("ens1f0np0", "mlx5_0"), ("ens1f1np1", "mlx5_1")))))

    def read() -> HostCounters:
        traffic.render(root)
        script = counters.script(["ens1f0np0", "ens1f1np1"], ["mlx5_0", "mlx5_1"])
        return counters.parse(subprocess.run(["/bin/bash", "-c", script], env=env, capture_output=True,
                                             text=True, check=True).stdout)

    clock[0] = 110.0
    first = read()
    clock[0] = 111.0
    assert not [r for r in host_counter_rows(PLAN, nics, first, read(), 1) if r.failed]
    traffic.retransmit("mlx5_1")
    traffic.storm("ens1f0np0")
    first = read()
    clock[0] = 112.0
    failed = {(r.port, r.check) for r in host_counter_rows(PLAN, nics, first, read(), 1) if r.failed}
    assert failed == {("mlx5_1", "roce-retransmit-rate"), ("ens1f0np0", "nic-pause-rate")}, failed
    listing = fakehost.stub(root, "ethtool", "-S", "ens1f0np0").stdout
    assert listing.startswith("NIC statistics:\n     rx_packets_phy: ") and "     tx_prio3_pause: " in listing
    assert fakehost.stub(root, "ethtool", "-S", "nope", check=False).returncode == 96


def test_fake_host_firmware_follows_its_hardware(tmp_path: Path) -> None:
    from rocefab.lab.host import fakehost

    root = fakehost.make_host(tmp_path / "host", ["ens1f0np0"])
    fw = root / "sys" / "class" / "infiniband" / "mlx5_0" / "fw_ver"
    assert fw.read_text() == "28.43.1014\n"
    address = fakehost.state(root)["hw"]["netdev_pci"]["ens1f0np0"]
    fakehost.edit_hardware(root, lambda hw: hw["pci"][address].__setitem__("fw", "28.39.1002"))
    assert fw.read_text() == "28.39.1002\n"
    driver = fakehost.stub(root, "ethtool", "-i", "ens1f0np0").stdout
    assert "firmware-version: 28.39.1002 (MT_0000000838)" in driver


def test_a_nic_left_at_the_drivers_default_cable_fails_and_an_unread_one_warns() -> None:
    """The host script tells each NIC port its planned cable (3 m in the lab); a port still at the driver's 7 m fails,
    one whose mlnx_qos printed no `Cable len:` is not reported."""
    from rocefab.deploy.verify.checks import host_rows
    from rocefab.deploy.verify.observation import HostNetdev

    member = HOST.bonds[0].members[0]
    assert member.nic_cable_len == 3

    def netdev(cable: int | None) -> HostNetdev:
        return HostNetdev(member.netdev, True, 400.0, 9000, "dscp", PLAN.qos.pfc_vector, PLAN.qos.dscp_classes,
                          False, False, frozenset({3}), frozenset({3}), cable_m=cable)

    for cable, verdict in ((3, Verdict.PASS), (7, Verdict.FAIL), (None, Verdict.WARN)):
        obs = HostObservation(HOST.name, {member.netdev: netdev(cable)}, {}, None, None)
        (row,) = [r for r in host_rows(PLAN, HOST, obs) if r.check == "nic-cable-len"]
        assert (row.expected, row.verdict) == ("3 m", verdict), row
