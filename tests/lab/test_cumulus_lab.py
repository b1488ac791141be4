"""The Cumulus NVUE emulator (lab/cumulus/nvue.py) driven by real clients over real SSH on 127.0.0.1:
paramiko exec + SFTP, asyncssh exec + SCP, netmiko `cumulus_linux` on the interactive shell. Every client pins the
emulator's per-run host key through a known_hosts file, as the deploy layer does."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import asyncssh
import paramiko
import pytest
import yaml
from netmiko import ConnectHandler

from rocefab.lab.cumulus.nvue import CumulusDevice
from rocefab.lab.sshd import LabSSHServer
from rocefab.models.loader import load_yaml12
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "CumulusLab!1"
APPLIED = re.compile(r"applied \[rev_id: \d+\]\n")


@cache
def rendered(intent: str) -> dict[str, str]:
    checked = check_file(ROOT / "intents" / f"{intent}.yaml", "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return {f.path: f.content for f in render_fabric(checked.plan)}


def nv_lines(text: str) -> set[str]:
    return {line for line in text.splitlines() if line.startswith("nv ")}


@dataclass
class Lab:
    server: LabSSHServer
    device: CumulusDevice
    known_hosts: Path

    def connect(self, username: str = "cumulus", password: str = PASSWORD) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.load_host_keys(str(self.known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        client.connect(self.server.host, self.server.port, username=username, password=password, timeout=5,
                       auth_timeout=5, look_for_keys=False, allow_agent=False)
        return client


@pytest.fixture
def make_lab(tmp_path: Path) -> Iterator[Callable[[str], Lab]]:
    with ExitStack() as stack:
        def make(hostname: str) -> Lab:
            device = CumulusDevice(tmp_path / hostname, hostname, password=PASSWORD)
            server = stack.enter_context(LabSSHServer(device, name=hostname))
            known_hosts = tmp_path / f"{hostname}.known_hosts"
            known_hosts.write_text(server.known_hosts_line() + "\n")
            return Lab(server, device, known_hosts)
        yield make


@pytest.fixture
def lab(make_lab: Callable[[str], Lab]) -> Lab:
    return make_lab("spine1")


def run(client: paramiko.SSHClient, command: str, stdin: str = "") -> tuple[int, str, str]:
    chan_in, out, err = client.exec_command(command, timeout=10)
    if stdin:
        chan_in.write(stdin)
    chan_in.channel.shutdown_write()
    text, errors = out.read().decode(), err.read().decode()
    return out.channel.recv_exit_status(), text, errors


def ok(client: paramiko.SSHClient, command: str) -> str:
    status, out, err = run(client, command)
    assert status == 0, f"{command}: exit {status}\n{out}{err}"
    return out


def upload(client: paramiko.SSHClient, text: str, name: str) -> None:
    with client.open_sftp() as sftp, sftp.open(name, "w") as f:
        f.write(text)


def account(client: paramiko.SSHClient) -> dict[str, object]:
    """The applied `system aaa` block, which a replace must carry or the login account goes."""
    docs = load_yaml12(ok(client, "nv config show -o yaml"))
    return next(d["set"] for d in docs if "set" in d)["system"]["aaa"]  # type: ignore[no-any-return]


def with_account(client: paramiko.SSHClient, nvue_yaml: str) -> str:
    return nvue_yaml + yaml.safe_dump([{"set": {"system": {"aaa": account(client)}}}], sort_keys=False)


def shown(client: paramiko.SSHClient) -> set[str]:
    return set(ok(client, "nv config show -o commands").splitlines())


def deploy(client: paramiko.SSHClient, nvue_yaml: str) -> None:
    upload(client, with_account(client, nvue_yaml), "candidate.yaml")
    ok(client, "nv config replace candidate.yaml")
    assert APPLIED.fullmatch(ok(client, "nv config apply -y"))


# --- replace / diff / apply ----------------------------------------------------------------------------------------


def test_replace_diff_apply_show_and_idempotent_rerun(lab: Lab) -> None:
    files = rendered("lab")
    expected = nv_lines(files["switches/spine1.nv-set.txt"])
    with lab.connect() as c:
        factory = shown(c)
        assert factory == {"nv set system hostname spine1", "nv set system aaa user cumulus role system-admin",
                           *[line for line in factory if "hashed-password" in line]}
        upload(c, with_account(c, files["switches/spine1.nvue.yaml"]), "spine1.yaml")
        assert run(c, "nv config replace spine1.yaml") == (0, "", "")
        diff = ok(c, "nv config diff -o commands").splitlines()
        assert set(diff) == expected - {"nv set system hostname spine1"} and len(diff) == len(set(diff))
        assert "nv set qos roce enable on" in diff  # a YAML 1.2 read: 'on' stays a string
        assert shown(c) == factory  # nothing is live before apply
        assert APPLIED.fullmatch(ok(c, "nv config apply -y"))
        assert shown(c) == expected | factory
        assert ok(c, "nv config diff -o commands") == ""
        ok(c, "nv config replace spine1.yaml")  # the same file again: nothing to do
        assert ok(c, "nv config diff -o commands") == "" and ok(c, "nv config diff") == ""


_GENERIC = [(re.compile(r"\b\d+\.\d+\.\d+\.\d+(/\d+)?\b"), "ADDR"), (re.compile(r"\bswp\d+(s\d+)?\b"), "swpN"),
            (re.compile(r"\b([a-z][a-z-]*?)\d+(-[ab])?\b"), r"\1N"), (re.compile(r"\b\d{5,}\b"), "ASN")]


def _shape(line: str) -> str:
    for pattern, generic in _GENERIC:
        line = pattern.sub(generic, line)
    return line


def _covering(files: dict[str, str], configs: list[str]) -> list[str]:
    """Configs that between them hold every shape of line any config has (a line with its port names, addresses,
    AS numbers and numbered names made generic; speeds, MTUs, thresholds and every word kept): a large fabric's 192
    switches print a few dozen shapes, and patching switches that cover them exercises every path and value
    kind the schema must take, in a fraction of the time."""
    shapes = {c: {_shape(line) for line in nv_lines(files[f"{c}.nv-set.txt"])} for c in configs}
    missing = set().union(*shapes.values())
    chosen = []
    while missing:
        best = max(configs, key=lambda c: len(shapes[c] & missing))
        chosen.append(best)
        missing -= shapes[best]
    return sorted(chosen)


@pytest.mark.parametrize("intent", sorted(p.stem for p in (ROOT / "intents").glob("*.yaml")))
def test_every_rendered_cumulus_config_is_accepted(lab: Lab, intent: str) -> None:
    """The schema covers every path rocefab renders: the NVUE YAML and nv-set text of switches that between them
    print every shape of line patch in cleanly, and the diff shows exactly their lines."""
    every = sorted(path.removesuffix(".nvue.yaml") for path in rendered(intent)
                   if path.startswith("switches/") and path.endswith(".nvue.yaml"))
    configs = _covering(rendered(intent), every) if every else []
    if not configs:
        pytest.skip(f"no Cumulus switch in {intent}")
    with lab.connect() as c:
        for config in configs:
            expected = nv_lines(rendered(intent)[f"{config}.nv-set.txt"]) - {"nv set system hostname spine1"}
            for suffix in (".nvue.yaml", ".nv-set.txt"):
                upload(c, rendered(intent)[config + suffix], "candidate" + suffix)
                ok(c, f"nv config patch candidate{suffix}")
                assert set(ok(c, "nv config diff -o commands").splitlines()) == expected, config + suffix
                ok(c, "nv config detach")


def test_text_file_over_scp_and_a_smaller_replace_shows_removals(lab: Lab, tmp_path: Path) -> None:
    files = rendered("lab")
    with lab.connect() as c:
        carried = "".join(f"{line}\n" for line in shown(c) if line.startswith("nv set system aaa"))
        full = files["switches/spine1.nv-set.txt"] + carried
        smaller = "".join(line + "\n" for line in full.splitlines() if " swp4" not in line)
        (tmp_path / "full.txt").write_text(full)
        (tmp_path / "smaller.txt").write_text(smaller)

        async def scp() -> None:
            async with asyncssh.connect(lab.server.host, lab.server.port, username="cumulus", password=PASSWORD,
                                        known_hosts=str(lab.known_hosts)) as conn:
                await asyncssh.scp([str(tmp_path / "full.txt"), str(tmp_path / "smaller.txt")], (conn, "/tmp/"))
        asyncio.run(scp())
        ok(c, "nv config replace /tmp/full.txt")
        ok(c, "nv config apply -y")
        assert shown(c) == nv_lines(full)
        ok(c, "nv config replace /tmp/smaller.txt")
        assert ok(c, "nv config diff -o commands").splitlines() == [
            "nv unset interface swp4", "nv unset vrf default router bgp neighbor swp4"]
        diff_yaml = load_yaml12(ok(c, "nv config diff"))
        assert diff_yaml == [{"unset": {"interface": {"swp4": None},
                                        "vrf": {"default": {"router": {"bgp": {"neighbor": {"swp4": None}}}}}}}]
        ok(c, "nv config apply -y")
        assert shown(c) == nv_lines(smaller)


def test_detach_discards_the_pending_revision(lab: Lab) -> None:
    with lab.connect() as c:
        before = shown(c)
        ok(c, "nv set interface swp9 link mtu 9000")
        ok(c, "nv set interface swp9 description 'to be dropped'")
        assert ok(c, "nv config diff -o commands") == (
            'nv set interface swp9 link mtu 9000\nnv set interface swp9 description "to be dropped"\n')
        assert ok(c, "nv config detach") == ""
        assert ok(c, "nv config diff -o commands") == "" and shown(c) == before
        assert re.search(r"^2\s+detached\s", ok(c, "nv config revision"), re.M)
        assert run(c, "nv config apply -y")[0] == 1  # nothing pending any more
        assert shown(c) == before


# --- commit confirm ------------------------------------------------------------------------------------------------


def test_confirm_without_confirm_yes_rolls_back_when_the_window_closes(lab: Lab) -> None:
    with lab.connect() as c:
        before = shown(c)
        ok(c, "nv set interface swp1 link mtu 9000")
        out = ok(c, "nv config apply -y --confirm 2s")
        assert out.startswith("applied [rev_id: 2]\n")
        assert "nv set interface swp1 link mtu 9000" in shown(c)
        assert "rev_id 2" in ok(c, "nv config apply --confirm-status")
        deadline = time.monotonic() + 5
        while shown(c) != before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert shown(c) == before
        assert ok(c, "nv config apply --confirm-status") == "No pending confirm\n"
        assert run(c, "nv config apply --confirm-yes")[0] == 1  # too late
        assert re.search(r"^3\s+2\s.*rollback\s+confirm timeout", ok(c, "nv config history"), re.M)


def test_confirm_yes_keeps_confirm_no_reverts_and_injected_expiry_reverts(lab: Lab) -> None:
    with lab.connect() as c:
        before = shown(c)
        ok(c, "nv set interface swp1 link mtu 9000")
        ok(c, "nv config apply -y --confirm 10m")
        assert run(c, "nv set interface swp2 link mtu 9000")[0] == 0
        assert run(c, "nv config apply -y")[0] == 1  # no second apply while a confirm is open
        assert ok(c, "nv config apply --confirm-yes") == "confirmed [rev_id: 2]\n"
        lab.device.expire_confirm_now()  # nothing is pending any more: no effect
        kept = shown(c)
        assert kept == before | {"nv set interface swp1 link mtu 9000"}
        ok(c, "nv config apply -y --confirm=10m")  # the swp2 change
        assert ok(c, "nv config apply --confirm-no") == "rolled back [rev_id: 3]\n"
        assert shown(c) == kept
        ok(c, "nv set interface swp3 link mtu 9000")
        ok(c, "nv config apply -y --confirm 10m")
        lab.device.expire_confirm_now()
        assert shown(c) == kept


# --- validation ------------------------------------------------------------------------------------------------------


def test_invalid_paths_and_values_are_refused_and_change_nothing(lab: Lab) -> None:
    with lab.connect() as c:
        ok(c, "nv set interface swp1 link mtu 9216")
        ok(c, "nv config apply -y")
        before, revisions = shown(c), ok(c, "nv config revision")
        for command, message in [
            ("nv set interface swp1 lnk mtu 9000", "('lnk' was unexpected)"),
            ("nv set interface swp1 link mtu 99999", "99999 is greater than the maximum of 9216"),
            ("nv set qos roce enable true", "'true' is not one of ['on', 'off']"),
            ("nv set interface swp1-4 link mtu 9000", "'swp1-4' is not a 'interface-name'"),
            ("nv set frobnicate 7", "('frobnicate' was unexpected)"),
        ]:
            status, out, err = run(c, command)
            assert status == 1 and out == "" and err.startswith("Error: Invalid Command: " + command), err
            assert message in err, err
        bad = {"interface": {"swp1": {"link": {"mtu": 9000, "mtx": 1}}}}
        upload(c, yaml.safe_dump([{"set": bad}]), "bad.yaml")
        status, _, err = run(c, "nv config patch bad.yaml")
        assert status == 1 and "Config invalid at interface.swp1.link: Additional properties are not allowed" in err
        upload(c, "- set:\n    qos:\n      roce:\n        enable: true\n", "bool.yaml")  # a YAML 1.2 boolean
        status, _, err = run(c, "nv config patch bool.yaml")
        assert status == 1 and "Config invalid at qos.roce.enable: True is not of type 'string'" in err
        upload(c, "# ok so far\nnv set interface swp2 link mtu 9000\nnv set interface swp2 link mtu 1\n", "bad.txt")
        status, _, err = run(c, "nv config replace bad.txt")
        assert status == 1 and "line 3: nv set interface swp2 link mtu 1" in err
        assert run(c, "nv config patch ../../etc/passwd")[0] == 1  # outside the switch's folder: not found
        lab.device.faults.reject_path = r"^qos roce"
        upload(c, rendered("lab")["switches/spine1.nvue.yaml"], "spine1.yaml")
        status, _, err = run(c, "nv config patch spine1.yaml")
        assert status == 1 and "Config invalid at qos.roce.enable" in err
        assert ok(c, "nv config diff") == "" and ok(c, "nv config revision") == revisions and shown(c) == before


def test_breakout_and_qos_in_one_apply_fail_and_a_staged_apply_works(make_lab: Callable[[str], Lab]) -> None:
    """The 5.14 caveat: breakout first, QoS in a second apply (rack3-a of pod32 breaks swp1-8 and swp55-62 out)."""
    lab = make_lab("rack3-a")
    files = rendered("pod32")
    target = files["switches/rack3-a.nvue.yaml"]
    with lab.connect() as c:
        factory = shown(c)
        upload(c, with_account(c, target), "rack3-a.yaml")
        ok(c, "nv config replace rack3-a.yaml")
        status, out, err = run(c, "nv config apply -y")
        assert status == 1 and out == "" and err.startswith("Invalid config [rev_id: 2]\n  Config invalid at "
                                                             "interface.swp1.link.breakout: breakout of swp1, swp2")
        assert shown(c) == factory
        # stage 1: everything but QoS (kept as applied: none yet), stage 2: the whole config
        stage1 = copy.deepcopy(load_yaml12(target))
        del stage1[0]["set"]["qos"]
        for interface in stage1[0]["set"]["interface"].values():
            interface.pop("qos", None)
        ok(c, "nv config detach")
        deploy(c, yaml.safe_dump(stage1, sort_keys=False))
        assert not any(" qos " in line for line in shown(c))
        deploy(c, target)
        assert shown(c) == nv_lines(files["switches/rack3-a.nv-set.txt"]) | {
            line for line in factory if "aaa" in line}


def test_apply_reverts_to_an_earlier_revision(lab: Lab) -> None:
    with lab.connect() as c:
        factory = shown(c)
        deploy(c, rendered("lab")["switches/spine1.nvue.yaml"])
        assert shown(c) != factory
        status, out, _ = run(c, "nv config apply 1 -y")
        assert status == 0 and out == "applied [rev_id: 1]\n" and shown(c) == factory
        history = ok(c, "nv config history").splitlines()
        assert history[0].split()[:2] == ["Apply", "ID"] and [line.split()[:2] for line in history[2:]] == [
            ["3", "1"], ["2", "2"], ["1", "1"]]


def test_show_system_over_asyncssh_exec(lab: Lab) -> None:
    async def show() -> tuple[asyncssh.SSHCompletedProcess, asyncssh.SSHCompletedProcess]:
        async with asyncssh.connect(lab.server.host, lab.server.port, username="cumulus", password=PASSWORD,
                                    known_hosts=str(lab.known_hosts)) as conn:
            return await conn.run("nv show system"), await conn.run("nv show system -o json")
    table, as_json = asyncio.run(show())
    assert table.exit_status == 0 and re.search(r"^hostname\s+spine1\s+spine1$", str(table.stdout), re.M)
    assert re.search(r"^build\s+Cumulus Linux 5\.14\.0$", str(table.stdout), re.M)
    facts = json.loads(str(as_json.stdout))
    assert facts["hostname"] == "spine1" and facts["product-release"] == "5.14.0"


# --- the login account ----------------------------------------------------------------------------------------------


def test_replace_without_the_account_deletes_it(lab: Lab) -> None:
    with lab.connect() as c:
        upload(c, rendered("lab")["switches/spine1.nvue.yaml"], "spine1.yaml")
        ok(c, "nv config replace spine1.yaml")
        assert "nv unset system aaa" in ok(c, "nv config diff -o commands").splitlines()
        ok(c, "nv config apply -y")
        assert "spine1" in ok(c, "nv show system")  # the open session stays usable
    with pytest.raises(paramiko.AuthenticationException):
        lab.connect()


def test_wrong_password_fails_fast(lab: Lab) -> None:
    started = time.monotonic()
    with pytest.raises(paramiko.AuthenticationException):
        lab.connect(password="wrong")

    async def attempt() -> None:
        await asyncssh.connect(lab.server.host, lab.server.port, username="cumulus", password="wrong",
                               known_hosts=str(lab.known_hosts))
    with pytest.raises(asyncssh.PermissionDenied):
        asyncio.run(attempt())
    lab.device.faults.wrong_password = True  # the right password, refused
    with pytest.raises(paramiko.AuthenticationException):
        lab.connect()
    assert time.monotonic() - started < 3
    lab.device.faults.wrong_password = False
    lab.connect().close()


def test_a_pinned_host_key_of_another_server_is_refused(make_lab: Callable[[str], Lab]) -> None:
    one, other = make_lab("spine1"), make_lab("spine2")
    assert one.server.host_public_key != other.server.host_public_key
    other.known_hosts.write_text(one.known_hosts.read_text().replace(str(one.server.port), str(other.server.port)))
    with pytest.raises(paramiko.BadHostKeyException):
        other.connect()


# --- faults ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("after", [False, True])
def test_connection_dropped_at_apply_leaves_the_old_or_the_new_config_whole(lab: Lab, after: bool) -> None:
    with lab.connect() as c:
        old = shown(c)
        upload(c, with_account(c, rendered("lab")["switches/spine1.nvue.yaml"]), "spine1.yaml")
        ok(c, "nv config replace spine1.yaml")
    lab.device.faults.drop_on, lab.device.faults.drop_after = r"^nv config apply", after
    with lab.connect() as c:
        try:
            status, out, _ = run(c, "nv config apply -y")
        except (paramiko.SSHException, EOFError, OSError):
            status, out = -1, ""
        assert (status, out) == (-1, "")  # no exit status, no output: the connection went away
    lab.device.faults.drop_on = None
    with lab.connect() as c:
        new = old | nv_lines(rendered("lab")["switches/spine1.nv-set.txt"])
        assert shown(c) == (new if after else old)
        assert (ok(c, "nv config diff -o commands") == "") is after
        if not after:  # the pending revision survived: applying it now gives the new config whole
            ok(c, "nv config apply -y")
            assert shown(c) == new


def test_injected_delay(lab: Lab) -> None:
    lab.device.faults.delay_s = 0.3
    with lab.connect() as c:
        started = time.monotonic()
        ok(c, "nv show system")
        assert time.monotonic() - started >= 0.3


# --- exec and shell prompts -----------------------------------------------------------------------------------------


def test_apply_without_y_asks_and_reads_the_answer_on_exec(lab: Lab) -> None:
    with lab.connect() as c:
        before = shown(c)
        ok(c, "nv set interface swp1 link mtu 9000")
        assert run(c, "nv config apply", stdin="n\n") == (1, "Are you sure? [y/N] ", "Declined apply after warnings\n")
        assert run(c, "nv config apply") [0] == 1  # end of input is no
        assert shown(c) == before
        status, out, _ = run(c, "nv config apply", stdin="y\n")
        assert status == 0 and out == "Are you sure? [y/N] applied [rev_id: 2]\n"
        assert "nv set interface swp1 link mtu 9000" in shown(c)


def test_netmiko_cumulus_linux_shell(lab: Lab) -> None:
    conn = ConnectHandler(device_type="cumulus_linux", host=lab.server.host, port=lab.server.port,
                          username="cumulus", password=PASSWORD, ssh_strict=True, system_host_keys=False,
                          alt_host_keys=True, alt_key_file=str(lab.known_hosts), use_keys=False, allow_agent=False)
    try:
        assert conn.find_prompt() == "cumulus@spine1:mgmt:~$"
        assert conn.send_command("nv set interface swp1 link mtu 9000") == ""
        assert conn.send_command("nv config diff -o commands") == "nv set interface swp1 link mtu 9000"
        assert str(conn.send_command("nv set interface swp1 lnk mtu 9000")).startswith("Error: Invalid Command:")
        # netmiko's save_config() sends `nv config apply` without -y; like the real switch the emulator then waits
        # The answer needs an expect_string: without one netmiko first sends a bare newline to find the prompt, and
        # that empty line would be the answer (no), on the real switch as here.
        prompt = re.escape(conn.base_prompt)
        assert "Are you sure? [y/N]" in conn.send_command("nv config apply", expect_string=r"\[y/N\]")
        assert conn.send_command("n", expect_string=prompt) == "Declined apply after warnings"
        conn.send_command("nv config apply", expect_string=r"\[y/N\]")
        assert re.fullmatch(r"applied \[rev_id: 2\]", str(conn.send_command("y", expect_string=prompt)))
        assert "nv set interface swp1 link mtu 9000" in str(conn.send_command("nv config show -o commands")).split("\n")
    finally:
        conn.disconnect()
