"""The Linux GPU host emulator (lab/host/linux_host.py): the rendered host script uploaded by SFTP and run with
real bash over SSH exec against the fake host, with real clients (paramiko, asyncssh) pinning the host key."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import asyncssh
import paramiko
import pytest
from hostlib import staged
from netmiko import ConnectHandler

from rocefab.lab.host.fakehost import diff, snapshot, state, stub_dir
from rocefab.lab.host.linux_host import LinuxHost
from rocefab.lab.sshd import LabSSHServer
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[2]
PORTS = ("ens1f0np0", "ens1f1np1")  # gpu001 of intents/lab.yaml: one dual-port card, RoCE LAG over bond0
PASSWORD = "gpu-lab"


@cache
def script() -> str:
    checked = check_file(ROOT / "intents" / "lab.yaml", "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    files = {f.path: f.content for f in render_fabric(checked.plan)}
    return staged(files["hosts/gpu001.roce.sh"], files)  # as apply uploads it: self-contained


@dataclass
class Lab:
    server: LabSSHServer
    host: LinuxHost
    known_hosts: Path

    def connect(self, password: str = PASSWORD) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.load_host_keys(str(self.known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        client.connect(self.server.host, self.server.port, username="root", password=password, timeout=5,
                       auth_timeout=5, look_for_keys=False, allow_agent=False)
        return client

    def run(self, *commands: str) -> list[asyncssh.SSHCompletedProcess]:
        """Each command on its own exec channel, all at once, over one asyncssh connection."""
        async def go() -> list[asyncssh.SSHCompletedProcess]:
            async with asyncssh.connect(self.server.host, self.server.port, username="root", password=PASSWORD,
                                        known_hosts=str(self.known_hosts)) as conn:
                return list(await asyncio.gather(*(conn.run(c) for c in commands)))
        return asyncio.run(go())


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    host = LinuxHost(tmp_path / "gpu001", "gpu001", PORTS, {"mlx5_bond_0": PORTS}, password=PASSWORD)
    with LabSSHServer(host, name="gpu001") as server:
        known_hosts = tmp_path / "known_hosts"
        known_hosts.write_text(server.known_hosts_line() + "\n")
        lab = Lab(server, host, known_hosts)
        with lab.connect() as client, client.open_sftp() as sftp, sftp.open("gpu001.roce.sh", "w") as f:
            f.write(script())
        yield lab


def test_check_apply_check_over_ssh(lab: Lab) -> None:
    assert (lab.host.sandbox / "gpu001.roce.sh").read_text() == script()  # SFTP lands in the sandbox
    before = snapshot(lab.host.sandbox)
    [check] = lab.run("bash gpu001.roce.sh --check")
    assert check.exit_status == 1, str(check.stdout) + str(check.stderr)
    assert str(check.stdout).rstrip().endswith("29 setting(s) drifted") and "DRIFT   bond0 bond:" in str(check.stdout)
    assert diff(before, snapshot(lab.host.sandbox)) == []  # --check changes nothing
    with lab.connect() as client:
        _, out, err = client.exec_command("bash gpu001.roce.sh")
        text = out.read().decode()
        assert out.channel.recv_exit_status() == 0, text + err.read().decode()
    assert text.rstrip().endswith("28 setting(s) changed")
    assert (lab.host.sandbox / "sys" / "class" / "net" / "bond0" / "mtu").read_text() == "9000\n"
    assert (lab.host.sandbox / "etc" / "nccl.conf").is_file()
    [again] = lab.run("bash gpu001.roce.sh --check")
    assert again.exit_status == 0 and str(again.stdout).rstrip().endswith("in sync"), again.stdout


def test_commands_run_in_the_sandbox_with_the_stubs_first(lab: Lab) -> None:
    where, tool, env, missing = lab.run("pwd", "command -v mlnx_qos", "echo $ROCEFAB_SYSFS_ROOT $ROCEFAB_ETC_ROOT",
                                        "mlnx_qos -i eth9")
    assert where.stdout == f"{lab.host.sandbox}\n"
    assert tool.stdout == f"{stub_dir() / 'mlnx_qos'}\n"  # the stub server's client (lab/host/stubserver.py)
    assert env.stdout == f"{lab.host.sandbox}/sys {lab.host.sandbox}/etc\n"
    assert missing.exit_status == 1  # the stub's answer for a netdev the host does not have


def test_parallel_exec_channels(lab: Lab) -> None:
    """10 concurrent --check runs agree; concurrent stub writes on two ports lose no update (flock + os.replace)."""
    before = snapshot(lab.host.sandbox)
    checks = lab.run(*["bash gpu001.roce.sh --check"] * 10)
    assert {c.exit_status for c in checks} == {1} and len({c.stdout for c in checks}) == 1
    assert diff(before, snapshot(lab.host.sandbox)) == []
    # each write reads, changes and saves the whole state file: without the lock a write to one port could put the
    # other port's ring size back to 1024
    sizes = (256, 512, 2048, 4096, 8192)  # mlx5 ring sizes are powers of two; the boot value 1024 is not among them
    writes = lab.run(*[f"ethtool -G {port} rx {size}" for size in sizes for port in PORTS])
    assert [w.exit_status for w in writes] == [0] * 10, [w.stderr for w in writes]
    netdevs = state(lab.host.sandbox)["netdevs"]
    assert {netdevs[port]["rings"]["rx"] for port in PORTS} <= set(sizes)


def test_wrong_password_fails(lab: Lab) -> None:
    with pytest.raises(paramiko.AuthenticationException):
        lab.connect(password="nope")

    async def attempt() -> None:
        await asyncssh.connect(lab.server.host, lab.server.port, username="root", password="nope",
                               known_hosts=str(lab.known_hosts))
    with pytest.raises(asyncssh.PermissionDenied):
        asyncio.run(attempt())
    lab.host.refuse_logins = True
    with pytest.raises(paramiko.AuthenticationException):
        lab.connect()


def test_netmiko_linux_shell(lab: Lab) -> None:
    conn = ConnectHandler(device_type="linux", host=lab.server.host, port=lab.server.port, username="root",
                          password=PASSWORD, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(lab.known_hosts), use_keys=False, allow_agent=False)
    try:
        assert conn.find_prompt() == "root@gpu001:~#"
        out = str(conn.send_command("mlnx_qos -i ens1f0np0"))
        assert "Priority trust state: pcp" in out
        assert str(conn.send_command("bash gpu001.roce.sh --check >/dev/null 2>&1; echo rc=$?")) == "rc=1"
    finally:
        conn.disconnect()


def test_rdma_cm_tos_needs_root_and_sudo_reads_it(tmp_path: Path) -> None:
    """Logged in as a user without root, verify's read of rdma_cm's ToS meets the tool's refusal ("You must be root
    to run this", as mlnx-tools prints it) and reports it as a warning with the fix; through `sudo -n` (an
    inventory's `sudo: true`) it reads the value; a user sudo refuses gets sudo's own error."""
    from rocefab.deploy.verify.checks import Verdict, host_rows
    from rocefab.platforms.host import observe

    checked = check_file(ROOT / "intents" / "lab.yaml", "0.0.0-test")
    assert checked.plan is not None
    plan_host = next(h for h in checked.plan.hosts if h.name == "gpu001")
    command = f"bash -c {shlex.quote(observe.script(['bond0', *PORTS], ['mlx5_bond_0']))}"
    host = LinuxHost(tmp_path / "ops", "gpu001", PORTS, {"mlx5_bond_0": PORTS}, username="ops", sudo=False)
    setup = host.root / "roce.sh"
    setup.write_text(script(), encoding="utf-8")
    assert host.handle(f"bash {setup}", "root")[0] == 0  # the host set up as apply would, as root
    status, out, _ = host.handle(command, "ops")
    assert status == 0
    seen = observe.parse(out, "gpu001").rdma["mlx5_bond_0"]
    assert seen.cma_tos is None and seen.why["cma_tos"] == observe.NEEDS_ROOT
    row = next(r for r in host_rows(checked.plan, plan_host, observe.parse(out, "gpu001")) if r.check == "rdma-cm-tos")
    assert row.verdict is Verdict.WARN and "sudo: true" in row.observed, row
    assert host.handle(f"sudo -n {command}", "ops")[:3:2] == (1, "sudo: a password is required\n")
    host.sudo = True
    status, out, _ = host.handle(f"sudo -n {command}", "ops")
    assert status == 0 and observe.parse(out, "gpu001").rdma["mlx5_bond_0"].cma_tos == checked.plan.qos.roce_tos


def test_a_host_on_the_inbox_driver_is_read_without_ofed_folders(tmp_path: Path) -> None:
    """The inbox mlx5 driver has no `ecn/` or `tc/` sysfs folders: trust, PFC and the DSCP map are still read
    (mlnx_qos), and the DCQCN enables and the default traffic class are warnings that say where they live."""
    from rocefab.deploy.verify.checks import Verdict, host_rows
    from rocefab.lab.host import fakehost
    from rocefab.platforms.host import observe

    checked = check_file(ROOT / "intents" / "lab.yaml", "0.0.0-test")
    assert checked.plan is not None
    plan_host = next(h for h in checked.plan.hosts if h.name == "gpu001")
    root = fakehost.make_host(tmp_path / "inbox", PORTS, {"mlx5_bond_0": PORTS}, ofed=False)
    read = tmp_path / "read.sh"
    read.write_text(observe.script(["bond0", *PORTS], ["mlx5_0", "mlx5_1"]), encoding="utf-8")
    ran = fakehost.run_script(read, root)
    seen = observe.parse(ran.stdout, "gpu001")
    assert seen.netdevs[PORTS[0]].trust == "pcp" and seen.netdevs[PORTS[0]].pfc == (0,) * 8  # read, and wrong
    assert seen.netdevs[PORTS[0]].ecn_np is None
    rows = {(r.port, r.check): r for r in host_rows(checked.plan, plan_host, seen)}
    assert rows[(PORTS[0], "nic-trust")].verdict is Verdict.FAIL  # judged, not "not reported"
    dcqcn = [r for (port, check), r in rows.items() if port == PORTS[0] and check == "dcqcn"]
    assert dcqcn and all(r.verdict is Verdict.WARN and "ROCE_CC_PRIO_MASK" in r.observed for r in dcqcn)
    tclass = observe.parse(ran.stdout, "gpu001").rdma["mlx5_0"]
    assert tclass.traffic_class is None and "MLNX_OFED only" in tclass.why["traffic_class"]
