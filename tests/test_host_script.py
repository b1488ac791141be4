"""The rendered host script, run for real (bash) against the fake Linux host of lab/host/fakehost.py:
--check on a fresh host, apply, idempotency, drift detection, prerequisites, exit codes, failing and lying tools;
plus `bash -n` / shellcheck for every rendered host script (the NIC/bond script and the preflight)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest
from conftest import needs_tool
from fakehost import (
    BLOCK_BEGIN,
    BLOCK_END,
    STUBS,
    Applied,
    apply_once,
    assert_drifts,
    copy_applied,
    diff,
    drifts,
    make_host,
    remove_netdev,
    run_script,
    snapshot,
    stub,
    stubs_without,
)
from hostlib import place_script, staged

from rocefab.platforms.host import config
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent
INTENTS = sorted(p.stem for p in (ROOT / "intents").glob("*.yaml"))
LAB_PORTS = ("ens1f0np0", "ens1f1np1")
LAB_LAG = {"mlx5_bond_0": LAB_PORTS}
P0, P1 = LAB_PORTS
ADDRESS, PREFIX, GATEWAY = "10.101.0.4/24", "10.101.0.0/16", "10.101.0.1"


@cache
def host_files(intent: str) -> dict[str, str]:
    """Rendered host scripts and NCCL env files of an example intent, by output path."""
    checked = check_file(ROOT / "intents" / f"{intent}.yaml", "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return {f.path: f.content for f in render_fabric(checked.plan) if f.path.startswith("hosts/")}


# the host's shell scripts: the NIC/bond script and the read-only preflight
SCRIPT_SUFFIXES = (".roce.sh", ".preflight.sh")


def host_scripts() -> list[tuple[str, str]]:
    return [(intent, path) for intent in INTENTS for path in host_files(intent) if path.endswith(SCRIPT_SUFFIXES)]


def write_script(folder: Path, intent: str, host: str) -> Path:
    """The rendered script with its library beside it, as the render folder holds them."""
    return place_script(folder / f"{intent}-{host}.roce.sh", host_files(intent)[f"hosts/{host}.roce.sh"])


def member_labels(port: str) -> list[str]:
    return [f"{port} global pause:", f"{port} rings:", f"{port} qos trust:", f"{port} dscp map:",
            f"{port} pfc priorities:", f"{port} cable length:",
            f"{port} DCQCN notification point, priority 3:", f"{port} DCQCN reaction point, priority 3:",
            f"{port} bond master:", f"{port} mtu:"]


def read(root: Path, rel: str) -> str:
    return (root / "sys" / rel).read_text()


def qos(root: Path, port: str) -> tuple[str, list[str]]:
    """(trust, PFC enabled flags) parsed from `mlnx_qos -i` the way production parsers do (by line prefix)."""
    out = stub(root, "mlnx_qos", "-i", port).stdout
    trust = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Priority trust state"))
    enabled = next(line.split()[1:] for line in out.splitlines() if line.strip().startswith("enabled"))
    return trust, enabled


@pytest.fixture(scope="module")
def lab_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_script(tmp_path_factory.mktemp("scripts"), "lab", "gpu001")


@pytest.fixture
def pristine(tmp_path: Path) -> Path:
    return make_host(tmp_path / "host", LAB_PORTS, LAB_LAG)


@pytest.fixture(scope="module")
def applied_once(tmp_path_factory: pytest.TempPathFactory, lab_script: Path) -> Applied:
    """The lab's gpu001 script applied once to a fresh host (shared: copy it with `applied` before changing it)."""
    return apply_once(lab_script, make_host(tmp_path_factory.mktemp("applied") / "host", LAB_PORTS, LAB_LAG))


@pytest.fixture
def applied(tmp_path: Path, applied_once: Applied) -> Path:
    return copy_applied(applied_once, tmp_path)


# --- a fresh host ---------------------------------------------------------------------------------------------------


def test_check_on_a_fresh_host_reports_every_setting_and_changes_nothing(pristine: Path, lab_script: Path) -> None:
    before = snapshot(pristine)
    result = run_script(lab_script, pristine, "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert_drifts(result.stdout, [
        "bond0 bond: is '<absent>', want '802.3ad/fast/layer3+4/100'", "bond0 mtu: is '<missing>', want '9000'",
        *member_labels(P0), *member_labels(P1),
        "bond0 admin state: is 'down'", f"bond0 ipv4 address: is '', want '{ADDRESS}'",
        f"route {PREFIX}: is ' ', want '{GATEWAY} bond0'", "mlx5_bond_0 RDMA device: is 'absent'",
        f"{pristine}/etc/nccl.conf rocefab block: is '<missing>'",
        f"{pristine}/usr/local/sbin/rocefab-roce.sh: is '<missing>'",
        f"{pristine}/etc/systemd/system/rocefab-roce.service: is '<missing>'",
    ])
    assert "ok      ens1f0np0 CNP DSCP = 48" in result.stdout  # the firmware default already matches
    assert result.stdout.rstrip().endswith("29 setting(s) drifted")
    assert "changed" not in result.stdout
    assert diff(before, snapshot(pristine)) == []


def test_apply_configures_a_fresh_host(applied_once: Applied) -> None:
    root, result = applied_once.root, applied_once.result
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout and "DRIFT" not in result.stdout
    assert result.stdout.rstrip().endswith("28 setting(s) changed")
    net = "class/net"
    for dev in ("bond0", *LAB_PORTS):
        assert read(root, f"{net}/{dev}/mtu") == "9000\n"
        assert "mtu 9000" in stub(root, "ip", "-o", "link", "show", "dev", dev).stdout
    bonding = {f: read(root, f"{net}/bond0/bonding/{f}") for f in ("mode", "lacp_rate", "xmit_hash_policy", "miimon")}
    assert bonding == {"mode": "802.3ad 4\n", "lacp_rate": "fast 1\n", "xmit_hash_policy": "layer3+4 1\n",
                       "miimon": "100\n"}
    assert read(root, f"{net}/bond0/bonding/slaves") == "ens1f0np0 ens1f1np1\n"
    assert "<BROADCAST,MULTICAST,MASTER,UP,LOWER_UP>" in stub(root, "ip", "-o", "link", "show", "dev", "bond0").stdout
    for port in LAB_PORTS:
        assert (root / "sys" / net / port / "master").readlink() == Path("../bond0")
        assert "<BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP>" in stub(root, "ip", "-o", "link", "show", port).stdout
        assert qos(root, port) == ("dscp", ["0", "0", "0", "1", "0", "0", "0", "0"])
        for point in ("roce_np", "roce_rp"):
            flags = [read(root, f"{net}/{port}/ecn/{point}/enable/{prio}") for prio in range(8)]
            assert flags == ["0\n", "0\n", "0\n", "1\n", "0\n", "0\n", "0\n", "0\n"]
        assert read(root, f"{net}/{port}/ecn/roce_np/cnp_dscp") == "48\n"
        assert read(root, f"{net}/{port}/ecn/roce_np/cnp_802p_prio") == "6\n"
        assert "Autonegotiate:\toff\nRX:\t\toff\nTX:\t\toff\n" in stub(root, "ethtool", "-a", port).stdout
        current = stub(root, "ethtool", "-g", port).stdout.split("Current hardware settings:")[1]
        assert "RX:\t\t8192\n" in current and "TX:\t\t8192\n" in current
    assert f"inet {ADDRESS} " in stub(root, "ip", "-4", "-o", "addr", "show", "dev", "bond0").stdout
    assert stub(root, "ip", "-4", "route", "show", PREFIX).stdout == f"{PREFIX} via {GATEWAY} dev bond0 \n"
    # RoCE LAG: the per-port RDMA devices made way for the bond's
    assert sorted(p.name for p in (root / "sys/class/infiniband").iterdir()) == ["mlx5_bond_0"]
    assert stub(root, "cma_roce_tos", "-d", "mlx5_bond_0", "-p", "1").stdout == "106\n"
    assert stub(root, "cma_roce_mode", "-d", "mlx5_bond_0", "-p", "1").stdout == "RoCE v2\n"
    gid = "class/infiniband/mlx5_bond_0/ports/1"
    assert read(root, f"{gid}/gid_attrs/types/3") == "RoCE v2\n"
    assert read(root, f"{gid}/gids/3").endswith(":ffff:0a65:0004\n")  # 10.101.0.4
    assert read(root, "class/infiniband/mlx5_bond_0/tc/1/traffic_class") == "Global tclass=106\n"  # non-CM QPs
    env = host_files("lab")["hosts/gpu001.nccl.env"]
    expected = "".join(line.removeprefix("export ") + "\n" for line in env.splitlines() if line.startswith("export "))
    assert (root / "etc" / "nccl.conf").read_text() == BLOCK_BEGIN + expected + BLOCK_END
    assert "NCCL_IB_TC=106\n" in expected and "NCCL_IB_HCA==mlx5_bond_0:1\n" in expected
    assert "NCCL_SOCKET_IFNAME==eno1\n" in expected and "NCCL_IB_GID_INDEX" not in expected  # exact; NCCL picks
    # re-applied at boot: the script installs itself and its unit, the same unit rendered for review; run from the
    # render folder it installs the self-contained script apply stages, the library's text in place of its loader
    assert (root / "usr/local/sbin/rocefab-roce.sh").read_text() == staged(host_files("lab")["hosts/gpu001.roce.sh"],
                                                                         host_files("lab"))
    unit = (root / "etc/systemd/system/rocefab-roce.service").read_text()
    plan = check_file(ROOT / "intents" / "lab.yaml", "0.0.0-test").plan
    assert plan is not None and plan.hosts[0].name == "gpu001"
    assert unit == config.render_unit(plan, plan.hosts[0])
    assert "Type=oneshot\n" in unit and "ExecStart=/bin/bash /usr/local/sbin/rocefab-roce.sh\n" in unit
    assert "note    rocefab-roce.service not enabled:" in result.stdout  # not this machine's systemd


def test_after_apply_check_is_in_sync_and_apply_changes_nothing(applied: Path, lab_script: Path) -> None:
    before = snapshot(applied)
    check = run_script(lab_script, applied, "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert drifts(check.stdout) == [] and check.stdout.rstrip().endswith("in sync")
    again = run_script(lab_script, applied)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.rstrip().endswith("0 setting(s) changed")
    assert "changed " not in again.stdout.replace("setting(s) changed", "") and again.stderr == ""
    assert diff(before, snapshot(applied)) == []


# --- drift behind the script's back ---------------------------------------------------------------------------------


def ecn_off(root: Path) -> None:
    (root / "sys/class/net" / P0 / "ecn/roce_np/enable/3").write_text("0\n")


def nccl_edit(root: Path) -> None:
    conf = root / "etc/nccl.conf"
    conf.write_text(conf.read_text().replace("NCCL_IB_TC=106\n", "NCCL_IB_TC=104\nNCCL_DEBUG=INFO\n"))


def tclass_reset(root: Path) -> None:
    (root / "sys/class/infiniband/mlx5_bond_0/tc/1/traffic_class").write_text("")


def tool(name: str, *args: str) -> Callable[[Path], object]:
    return lambda root: stub(root, name, *args)


RELEASED = [f"{P1} bond master: is '<none>'", f"{P1} admin state: is 'down'", f"{P1} mtu: is '1500'",
            "mlx5_bond_0 RDMA device: is 'absent'"]
DRIFT_CASES = {
    "pfc": (tool("mlnx_qos", "-i", P1, "--pfc", "0,0,0,0,0,0,0,0"), [f"{P1} pfc priorities: is '0,0,0,0,0,0,0,0'"]),
    "pause": (tool("ethtool", "-A", P0, "rx", "on", "tx", "on"), [f"{P0} global pause: is 'off/on/on'"]),
    "rings": (tool("ethtool", "-G", P1, "rx", "1000"), [f"{P1} rings: is '1024/8192'"]),
    "ecn": (ecn_off, [f"{P0} DCQCN notification point, priority 3: is '0', want '1'"]),
    "member-mtu": (tool("ip", "link", "set", "dev", P0, "mtu", "1500"), [f"{P0} mtu: is '1500'"]),
    "bond-mtu": (tool("ip", "link", "set", "dev", "bond0", "mtu", "1500"),
                 ["bond0 mtu: is '1500'", f"{P0} mtu: is '1500'", f"{P1} mtu: is '1500'"]),
    "member-down": (tool("ip", "link", "set", "dev", P1, "down"), [f"{P1} admin state: is 'down'"]),
    "member-released": (tool("ip", "link", "set", "dev", P1, "nomaster"), RELEASED),
    "bond-down": (tool("ip", "link", "set", "dev", "bond0", "down"),
                  ["bond0 admin state: is 'down'", f"route {PREFIX}: is ' '"]),
    "address-gone": (tool("ip", "addr", "flush", "dev", "bond0"),
                     ["bond0 ipv4 address: is ''", f"route {PREFIX}: is ' '",
                      "mlx5_bond_0 has no RoCE v2 GID for 10.101.0.4 on bond0"]),
    "bond-deleted": (tool("ip", "link", "del", "dev", "bond0"),
                     ["bond0 bond: is '<absent>'", "bond0 mtu: is '<missing>'",
                      f"{P0} bond master: is '<none>'", f"{P0} admin state: is 'down'", f"{P0} mtu: is '1500'",
                      f"{P1} bond master: is '<none>'", f"{P1} admin state: is 'down'", f"{P1} mtu: is '1500'",
                      "bond0 admin state: is 'down'", "bond0 ipv4 address: is ''", f"route {PREFIX}: is ' '",
                      "mlx5_bond_0 RDMA device: is 'absent'"]),
    "tos": (tool("cma_roce_tos", "-d", "mlx5_bond_0", "-t", "0"), ["mlx5_bond_0 rdma_cm default ToS: is '0'"]),
    "tclass": (tclass_reset, ["mlx5_bond_0 default traffic class: is '<unset>', want '106'"]),
    "nccl-conf": (nccl_edit, ["{root}/etc/nccl.conf NCCL_IB_TC: is '104', want '106'",
                              "{root}/etc/nccl.conf NCCL_DEBUG: is 'INFO' in rocefab's block, want it gone"]),
    "boot-unit": (lambda root: (root / "etc/systemd/system/rocefab-roce.service").unlink(),
                  ["{root}/etc/systemd/system/rocefab-roce.service: is '<missing>'"]),
}


@pytest.mark.parametrize("case", DRIFT_CASES)
def test_drift_is_reported_exactly_and_apply_repairs_it(case: str, applied: Path, lab_script: Path,
                                                        applied_once: Applied) -> None:
    tamper, expected = DRIFT_CASES[case]
    tamper(applied)
    before = snapshot(applied)
    check = run_script(lab_script, applied, "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert_drifts(check.stdout, [e.format(root=applied) for e in expected])
    assert check.stdout.rstrip().endswith(f"{len(expected)} setting(s) drifted")
    assert diff(before, snapshot(applied)) == []
    fix = run_script(lab_script, applied)
    assert fix.returncode == 0 and "FAILED" not in fix.stdout, fix.stdout + fix.stderr
    if case == "bond-deleted":  # a new bond: new ifindex, so compare what the script sees
        recheck = run_script(lab_script, applied, "--check")
        assert recheck.returncode == 0, recheck.stdout
    else:  # the host is back to exactly what the first apply made
        assert diff(applied_once.snapshot, snapshot(applied)) == []


def test_a_link_slower_than_planned_is_drift_that_apply_cannot_repair(tmp_path: Path, lab_script: Path) -> None:
    """A member that came up at 200G on a 400G plan (wrong optic, cable or seating) is reported on every run:
    no setting of the host can fix it, so apply ends with it as the one drift left."""
    root = make_host(tmp_path / "host", LAB_PORTS, LAB_LAG, speeds={P1: 200000})
    check = run_script(lab_script, root, "--check")
    assert f"DRIFT   {P1} link speed is '200000' Mb/s, want '400000'" in check.stdout
    assert f"ok      {P0} link speed = 400000 Mb/s" in check.stdout
    fix = run_script(lab_script, root)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    assert [line for line in fix.stdout.splitlines() if not line.startswith(("ok ", "changed ", "note "))] == [
        f"DRIFT   {P1} link speed is '200000' Mb/s, want '400000' (check the optic or cable and its seating)",
        "28 setting(s) changed"]


def test_a_down_link_is_noted_and_its_speed_not_judged(applied: Path, lab_script: Path) -> None:
    stub(applied, "ip", "link", "set", "dev", P1, "down")
    check = run_script(lab_script, applied, "--check")
    assert_drifts(check.stdout, [f"{P1} admin state: is 'down'"])  # the admin state, not the speed
    assert f"note    {P1} link is down: its speed is checked once it is up" in check.stdout
    assert f"ok      {P0} link speed = 400000 Mb/s" in check.stdout


# --- prerequisites, usage, failing and lying tools -----------------------------------------------------------------


def missing_netdev(root: Path, tmp: Path) -> dict:
    remove_netdev(root, P1)
    return {}


def missing_tool(root: Path, tmp: Path) -> dict:
    return {"stubs": stubs_without(tmp / "stubs", "mlnx_qos")}


def inbox_driver(root: Path, tmp: Path) -> dict:
    shutil.rmtree(root / "sys/class/net" / P0 / "ecn")
    return {}


PREREQUISITES = {
    "netdev": (missing_netdev, f"ERROR network interface '{P1}' does not exist on "),
    "tool": (missing_tool, "ERROR required tool 'mlnx_qos' is not installed"),
    "ecn-sysfs": (inbox_driver, f"ERROR ECN/DCQCN sysfs of {P0} (MLNX_OFED/DOCA mlx5 driver) not found at "),
}


@pytest.mark.parametrize("mode", [(), ("--check",)], ids=["apply", "check"])
@pytest.mark.parametrize("case", PREREQUISITES)
def test_missing_prerequisite_exits_3_and_changes_nothing(case: str, mode: tuple[str, ...], pristine: Path,
                                                          lab_script: Path, tmp_path: Path) -> None:
    prepare, message = PREREQUISITES[case]
    kwargs = prepare(pristine, tmp_path)
    before = snapshot(pristine)
    result = run_script(lab_script, pristine, *mode, **kwargs)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.startswith(message) and result.stdout == ""
    assert diff(before, snapshot(pristine)) == []


def test_usage(pristine: Path, lab_script: Path) -> None:
    before = snapshot(pristine)
    bogus = run_script(lab_script, pristine, "--bogus")
    assert (bogus.returncode, bogus.stdout) == (2, "") and bogus.stderr.startswith("usage:")
    helped = run_script(lab_script, pristine, "--help")
    assert helped.returncode == 0 and "--check" in helped.stdout
    assert diff(before, snapshot(pristine)) == []


def test_a_write_that_does_not_stick_is_reported_as_failed(pristine: Path, lab_script: Path) -> None:
    lying = {"STUB_IGNORE_TOS": "1"}
    result = run_script(lab_script, pristine, env=lying)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED  mlx5_bond_0 rdma_cm default ToS: still '0' after setting '106'" in result.stdout
    assert result.stdout.rstrip().endswith("27 setting(s) changed")  # everything else was applied
    assert [line for line in result.stdout.splitlines() if not line.startswith(("ok ", "changed ", "note "))] == [
        "FAILED  mlx5_bond_0 rdma_cm default ToS: still '0' after setting '106'", "27 setting(s) changed"]


def test_a_failing_tool_is_reported_and_the_run_goes_on(tmp_path: Path, lab_script: Path) -> None:
    root = make_host(tmp_path / "host", LAB_PORTS, LAB_LAG, ring_max=4096)  # a NIC with smaller rings
    result = run_script(lab_script, root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("FAILED")] == [
        f"FAILED  {port} rings: still '1024/1024' after setting '8192/8192'" for port in LAB_PORTS]
    assert "Cannot set device ring parameters: Invalid argument" in result.stderr
    assert result.stdout.rstrip().endswith("26 setting(s) changed")  # the rest of the run went on


def test_a_port_that_cannot_join_the_bond_is_not_left_down(tmp_path: Path, lab_script: Path) -> None:
    root = make_host(tmp_path / "host", LAB_PORTS, LAB_LAG, max_mtu=1500)  # enslaving fails: bond MTU 9000
    result = run_script(lab_script, root)
    assert result.returncode == 1, result.stdout + result.stderr  # drift, not ip's exit 2 (= usage)
    assert f"FAILED  {P0} bond master: still '<none>' after setting 'bond0'" in result.stdout
    assert "FAILED  mlx5_bond_0 RDMA device: still 'absent'" in result.stdout
    for port in LAB_PORTS:
        assert ",UP,LOWER_UP>" in stub(root, "ip", "-o", "link", "show", "dev", port).stdout
    assert (root / "etc/nccl.conf").is_file()  # the run went on to the end


def test_netlink_ethtool(pristine: Path, lab_script: Path) -> None:
    """ethtool >= 5.6 on a netlink kernel: other -g layout (three tabs, more lines), silent no-op sets."""
    result = run_script(lab_script, pristine, env={"STUB_ETHTOOL": "netlink"})
    assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
    # read before and read back after each set (a misread would show as FAILED)
    assert f"changed {P0} rings: '1024/1024' -> '8192/8192'" in result.stdout
    assert f"changed {P1} global pause: 'off/on/on' -> 'off/off/off'" in result.stdout


def test_two_bonds_and_two_roce_lags(tmp_path: Path) -> None:
    script = write_script(tmp_path, "pod32", "gpu001")
    ports = re.findall(r"^require_port (\S+)$", script.read_text(), re.MULTILINE)
    assert len(ports) == 4
    root = make_host(tmp_path / "host", ports, {"mlx5_bond_0": tuple(ports[:2]), "mlx5_bond_1": tuple(ports[2:])})
    result = run_script(script, root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout
    assert sorted(p.name for p in (root / "sys/class/infiniband").iterdir()) == ["mlx5_bond_0", "mlx5_bond_1"]
    for rdma in ("mlx5_bond_0", "mlx5_bond_1"):
        assert f"changed {rdma} rdma_cm default ToS: '0' -> '106'" in result.stdout


# --- the stubs themselves -------------------------------------------------------------------------------------------


def test_stubs_behave_like_the_real_tools(pristine: Path) -> None:
    def run(name: str, *args: str) -> tuple[int, str, str]:
        r = stub(pristine, name, *args, check=False)
        return r.returncode, r.stdout, r.stderr

    assert run("ethtool", "-A", P0, "autoneg", "off", "rx", "on", "tx", "on")[::2] == (
        78, "autoneg unmodified, ignoring\nrx unmodified, ignoring\ntx unmodified, ignoring\n"
            "no pause parameters changed, aborting\n")
    assert run("ethtool", "-A", P0, "autoneg", "on")[0] == 79  # mlx5 refuses pause autonegotiation
    assert run("ethtool", "-G", P0, "rx", "1024", "tx", "1024")[::2] == (
        80, "rx unmodified, ignoring\ntx unmodified, ignoring\nno ring parameters changed, aborting\n")
    assert run("ethtool", "-G", P0, "rx", "16384")[0] == 81
    assert run("ip", "link", "set", "dev", P0, "master", "bond9")[0] == 1
    assert run("ip", "link", "add", "bond9", "type", "bond", "mode", "802.3ad")[0] == 0
    assert run("ip", "link", "set", "dev", P0, "master", "bond9")[::2] == (
        2, "Error: Device can not be enslaved while up.\n")
    assert run("ip", "link", "add", "bond9", "type", "bond")[::2] == (2, "RTNETLINK answers: File exists\n")
    assert run("ip", "-o", "link", "show", "dev", "nope")[::2] == (1, 'Device "nope" does not exist.\n')
    code, out, _ = run("mlnx_qos", "-i", P0, "--pfc", "0,0,0,2,0,0,0,0")
    assert code == 1 and out.startswith("Bad value for PFC: 2 is not in the range 0..1\nUsage: mlnx_qos -i ")
    assert run("mlnx_qos", "-i", P0, "--pfc", "0,0,0,1")[:2] == (1, "pfc list must have 8 items\n")
    assert run("mlnx_qos", "-i", P0, "--trust", "dcsp")[:2] == (1, "Invalid trust state command. Refer to the help.\n")
    assert run("mlnx_qos", "-i", P0, "--bogus")[0] == 2  # optparse
    assert run("mlnx_qos", "-i", "nope")[:2] == (1, "Priority trust state is not supported on your system\n"
                                                "Buffers commands are not supported on your system\n"
                                                "Rate limit is not supported on your system!\n"
                                                "ETS features are not supported on your system\n")
    code, out, _ = run("mlnx_qos", "-i", P0, "--trust", "dscp")
    assert code == 0 and "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n" in out
    assert run("cma_roce_tos", "-d", "mlx5_0", "-t", "300")[:2] == (0, "0\n")  # bash's write error, exit 0
    assert run("cma_roce_tos", "-d", "mlx5_bond_0")[:2] == (1, "Failed to create configuration for mlx5_bond_0\n")
    unsafe = subprocess.run([str(STUBS / "ip"), "link"], env={"PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True, check=False)
    assert unsafe.returncode == 99  # never without a fake root


# --- syntax ---------------------------------------------------------------------------------------------------------


# Scripts of one kind and example come from one template and differ only in names and values; a few of each
# say everything shellcheck and `bash -n` can say, without linting a thousand copies of a large fabric.
SCRIPTS_PER_EXAMPLE = 4


def write_all_scripts(folder: Path) -> list[Path]:
    scripts = []
    taken: dict[tuple[str, str], int] = {}
    for intent, path in host_scripts():
        kind = next(suffix for suffix in SCRIPT_SUFFIXES if path.endswith(suffix))
        taken[intent, kind] = taken.get((intent, kind), 0) + 1
        if taken[intent, kind] > SCRIPTS_PER_EXAMPLE:
            continue
        # as hosts run them: the NIC/bond script with its library's text (shellcheck reads the whole program)
        script = folder / intent / Path(path).name
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(staged(host_files(intent)[path], host_files(intent)), encoding="utf-8")
        scripts.append(script)
        if taken[intent, kind] == 1 and kind == ".roce.sh":  # and one as rendered, loading it from lib/
            scripts.append(place_script(folder / intent / f"rendered-{Path(path).name}", host_files(intent)[path]))
    assert len(scripts) >= 2 * len(INTENTS) * len(SCRIPT_SUFFIXES)
    return scripts


def test_rendered_host_scripts_parse(tmp_path: Path) -> None:
    """`bash -n` on rendered host scripts of every example."""
    failures = []
    for script in write_all_scripts(tmp_path):
        result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            failures.append(f"{script.relative_to(tmp_path)}: {result.stderr}")
    assert failures == []


@needs_tool("shellcheck", "shellcheck")
def test_rendered_host_scripts_pass_shellcheck(tmp_path: Path) -> None:
    """Rendered host scripts of every example; one test, shellcheck runs in parallel (~0.2 s a script)."""
    scripts = write_all_scripts(tmp_path)

    def lint(script: Path) -> str:
        result = subprocess.run(["shellcheck", "-S", "warning", str(script)], capture_output=True, text=True,
                                check=False)
        return "" if result.returncode == 0 else result.stdout + result.stderr

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        findings = [out for out in pool.map(lint, scripts) if out]
    assert findings == [], "\n".join(findings)


def _nic_dscp_map(root: Path, netdev: str) -> dict[int, int]:
    """What the fake NIC's DCB app table says, read back through the stub's own show output."""
    shown = stub(root, "mlnx_qos", "-i", netdev).stdout
    found: dict[int, int] = {}
    for prio, dscps in re.findall(r"^\tprio:(\d) dscp:([\d,]+)$", shown, re.MULTILINE):
        found.update({int(d): int(prio) for d in dscps.split(",") if d})
    return found


@pytest.mark.parametrize(("roce", "cnp", "extra"), [((40, 3), (12, 4), {}), ((26, 5), (48, 6), {34: 1}),
                                                    ((26, 3), (48, 6), {})])
def test_the_nic_ends_with_the_fabric_dscp_map(tmp_path: Path, roce: tuple[int, int], cnp: tuple[int, int],
                                               extra: dict[int, int]) -> None:
    """Run for real: after the script, the NIC sends the RoCE DSCP on the PFC priority, CNPs on theirs, named
    DSCPs where they were named, and every other DSCP on priority 0; a second run changes nothing."""
    import yaml

    doc = yaml.safe_load((ROOT / "intents" / "lab.yaml").read_text(encoding="utf-8"))
    doc["qos"] = {"roce": {"dscp": roce[0], "priority": roce[1]}, "cnp": {"dscp": cnp[0], "priority": cnp[1]},
                  "dscp_map": extra}
    intent = tmp_path / "intent.yaml"
    intent.write_text(yaml.safe_dump(doc), encoding="utf-8")
    checked = check_file(intent, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    script = place_script(tmp_path / "gpu001.roce.sh",
                          next(f.content for f in render_fabric(checked.plan) if f.path == "hosts/gpu001.roce.sh"))
    root = make_host(tmp_path / "host", LAB_PORTS, LAB_LAG)
    assert run_script(script, root).returncode == 0
    named = {roce[0]: roce[1], cnp[0]: cnp[1], **extra}
    for netdev in LAB_PORTS:
        assert _nic_dscp_map(root, netdev) == {d: named.get(d, 0) for d in range(64)}, netdev
    again = run_script(script, root, "--check")
    assert again.returncode == 0 and not drifts(again.stdout)


def test_a_dscp_entry_someone_changed_is_drift_and_put_back(applied: Path, lab_script: Path) -> None:
    stub(applied, "mlnx_qos", "-i", P0, "--dscp2prio", "set,27,3")  # a stale entry, another tool's or an older run's
    checked = run_script(lab_script, applied, "--check")
    assert checked.returncode == 1 and any(d.startswith(f"{P0} dscp map") for d in drifts(checked.stdout))
    assert run_script(lab_script, applied).returncode == 0
    assert _nic_dscp_map(applied, P0)[27] == 0
