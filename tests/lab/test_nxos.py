"""The NX-OS emulator against the REAL napalm `nxos` (NX-API over HTTP, SSH + SCP for replace) and `nxos_ssh`
drivers and netmiko `cisco_nxos`, over real sockets on 127.0.0.1. Nothing inside the libraries is patched."""

import io
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import paramiko
import pytest
from napalm import get_network_driver
from napalm.base import NetworkDriver
from napalm.base.exceptions import ConnectionException, MergeConfigException, ReplaceConfigException
from napalm.nxapi_plumbing import Device as NxapiDevice
from napalm.nxapi_plumbing import NXAPICommandError, NXAPIConnectionError
from netmiko import ConnectHandler, NetmikoAuthenticationException

from rocefab.lab.nxos.config import InvalidCommandError, NxosConfig
from rocefab.lab.nxos.device import NxosDevice
from rocefab.lab.nxos.server import NxosServer, serve_nxos
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[2]
MERGE = "interface Ethernet1/1\n  description merged by napalm\n  mtu 9000\n"


def _rendered() -> dict[str, str]:
    plan = check_file(ROOT / "intents" / "pod32.yaml", "0.0.0-test").plan
    assert plan is not None
    nxos = {s.name for s in plan.switches if s.platform == "nxos"}
    return {f.device: f.content for f in render_fabric(plan) if f.device in nxos and f.path.endswith(".cfg")}


RENDERED = _rendered()


def line_paths(text: str) -> set[tuple[str, ...]]:
    """Every config line with its parent lines, read from the indentation (independent of the grammar)."""
    out: set[tuple[str, ...]] = set()
    stack: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("!", "version ")):
            continue
        depth = (len(raw) - len(raw.lstrip())) // 2
        stack = [*stack[:depth], line]
        out.add(tuple(stack))
    return out


@dataclass
class Lab:
    device: NxosDevice
    server: NxosServer
    ssh_config: Path

    def driver(self, name: str, password: str = "admin") -> NetworkDriver:
        if name == "nxos":  # the NX-API driver forces SSH port 22 for SCP; ssh_config maps it to ours
            args = {"transport": "http", "port": self.server.http_port, "ssh_config_file": str(self.ssh_config)}
        else:
            args = {"port": self.server.ssh_port}
        return get_network_driver(name)("127.0.0.1", "admin", password, timeout=10, optional_args=args)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    before = set(threading.enumerate())
    device = NxosDevice("spine1")
    server = serve_nxos(device)
    ssh_config = tmp_path / "ssh_config"
    ssh_config.write_text(f"Host 127.0.0.1\n  Port {server.ssh_port}\n")
    yield Lab(device, server, ssh_config)
    server.stop()
    for thread in set(threading.enumerate()) - before:  # client threads end once the server hangs up
        thread.join(5)
    assert not [t for t in set(threading.enumerate()) - before if t.is_alive()]


def running(device: NxosDevice) -> str:
    return device.running.render()


# -- grammar and config tree, no sockets
def test_flat_lines_find_their_modes_like_nxos() -> None:
    for name, text in RENDERED.items():
        flat = "\n".join(line.strip() for line in text.splitlines())
        assert line_paths(NxosConfig.parse(flat).render()) == line_paths(text), name


@pytest.mark.parametrize("lines", [
    ["interface Ethernet1/1", "qos map dscp 26 to traffic-class 3"],  # an EOS line is valid in no NX-OS mode
    ["feature bgp", "router bgp 65000", "maximum-paths 64"],  # only inside address-family
    ["interface Vlan101"],  # needs `feature interface-vlan`
    ["feature frobnicate"],
    ["no interface Ethernet1/1"],  # a physical port cannot be deleted
])
def test_grammar_rejects_what_nxos_rejects(lines: list[str]) -> None:
    cursor = NxosConfig.parse("hostname s1\n").cursor()
    with pytest.raises(InvalidCommandError):
        for line in lines:
            cursor.apply(line)


def test_same_key_replaces_and_no_removes() -> None:
    config = NxosConfig.parse("interface Ethernet1/1\n mtu 9216\n description a\n shutdown\n")
    cursor = config.cursor()
    for line in ["interface ethernet1/1", "mtu 1500", "no description", "no shutdown"]:
        cursor.apply(line)
    assert config.render() == "\ninterface Ethernet1/1\n  mtu 1500\n  no shutdown\n"


# -- napalm, both drivers
@pytest.mark.parametrize("driver", ["nxos", "nxos_ssh"])
def test_open_and_get_facts(lab: Lab, driver: str) -> None:
    with lab.driver(driver) as napalm:
        facts = napalm.get_facts()
    assert facts["hostname"] == "spine1"
    assert facts["model"] == "Nexus9000 C9364D-GX2A Chassis"
    assert facts["os_version"] == "10.5(1)"
    assert facts["serial_number"] == lab.device.serial
    names = set(facts["interface_list"])
    assert {"Ethernet1/1", "Ethernet1/64"} <= names
    assert "mgmt0" in names or "Management0" in names  # nxos_ssh expands names with netutils


@pytest.mark.parametrize(("device", "driver"), [(d, "nxos") for d in sorted(RENDERED)] + [("rack4-a", "nxos_ssh")])
def test_replace_with_rendered_config(tmp_path: Path, device: str, driver: str) -> None:
    target = RENDERED[device]
    dev = NxosDevice(device)
    with serve_nxos(dev) as server:
        ssh_config = tmp_path / "ssh_config"
        ssh_config.write_text(f"Host 127.0.0.1\n  Port {server.ssh_port}\n")
        with Lab(dev, server, ssh_config).driver(driver) as napalm:
            napalm.load_replace_candidate(config=target)
            diff = napalm.compare_config()
            assert "\nrouter bgp " in diff and "  mtu 9216" in diff and "\nsystem qos\n" in diff
            assert dev.running.section("system qos") is None  # compare changes nothing
            napalm.commit_config()
            assert line_paths(napalm.get_config(retrieve="running")["running"]) == line_paths(target)
            assert line_paths(dev.startup) == line_paths(target)  # commit also saves
            napalm.load_replace_candidate(config=target)
            assert napalm.compare_config() == ""
            napalm.discard_config()
            assert "candidate_config.txt" not in dev.bootflash


@pytest.mark.parametrize("driver", ["nxos", "nxos_ssh"])
def test_merge_commit_and_rollback(lab: Lab, driver: str) -> None:
    before = running(lab.device)
    with lab.driver(driver) as napalm:
        napalm.load_merge_candidate(config=MERGE)
        assert napalm.compare_config() == MERGE.rstrip()
        napalm.commit_config()
        assert "  description merged by napalm\n  mtu 9000\n" in running(lab.device)
        assert "mtu 9000" in lab.device.startup
        napalm.rollback()
    assert running(lab.device) == before
    assert "mtu 9000" not in lab.device.startup


@pytest.mark.parametrize("driver", ["nxos", "nxos_ssh"])
def test_invalid_merge_line_is_rolled_back(lab: Lab, driver: str) -> None:
    before = running(lab.device)
    with lab.driver(driver) as napalm:
        napalm.load_merge_candidate(config=MERGE + "  frobnicate 7\n")
        with pytest.raises(MergeConfigException, match="automatic rollback attempted"):
            napalm.commit_config()
    assert running(lab.device) == before
    assert "frobnicate 7" in lab.device.commands  # it did reach the device


@pytest.mark.parametrize(("driver", "error"), [("nxos", NXAPICommandError), ("nxos_ssh", ReplaceConfigException)])
def test_rejected_replace_changes_nothing(lab: Lab, driver: str, error: type[Exception]) -> None:
    before = running(lab.device)
    lab.device.faults.reject_line = r"^priority-flow-control watch-dog-interval"
    with lab.driver(driver) as napalm:
        napalm.load_replace_candidate(config=RENDERED["spine1"])
        assert "Syntax error while parsing 'priority-flow-control watch-dog-interval on'" in napalm.compare_config()
        # napalm's NX-API path lets the NX-API error through; its SSH path matches "Rollback failed."
        with pytest.raises(error, match=r"Rollback failed\."):
            napalm.commit_config()
    assert running(lab.device) == before


@pytest.mark.parametrize("driver", ["nxos", "nxos_ssh"])
def test_commit_confirm_is_not_implemented(lab: Lab, driver: str) -> None:
    with lab.driver(driver) as napalm:
        napalm.load_merge_candidate(config=MERGE)
        with pytest.raises(NotImplementedError, match="Commit confirm has not been implemented"):
            napalm.commit_config(revert_in=60)
    assert "mtu 9000" not in running(lab.device)


def test_wrong_password_fails_fast(lab: Lab) -> None:
    lab.device.faults.password = "rotated"
    started = time.monotonic()
    with pytest.raises(ConnectionException):
        lab.driver("nxos").open()
    with pytest.raises(NetmikoAuthenticationException):  # napalm 5.2.0 lets netmiko's error through
        lab.driver("nxos_ssh").open()
    assert time.monotonic() - started < 5
    with lab.driver("nxos", password="rotated") as napalm:
        assert napalm.get_facts()["hostname"] == "spine1"


def test_dropped_connection_mid_replace_leaves_old_config(lab: Lab) -> None:
    before = running(lab.device)
    lab.device.faults.drop_on = r"^rollback running-config file candidate_config.txt"
    with lab.driver("nxos") as napalm:
        napalm.load_replace_candidate(config=RENDERED["spine1"])
        with pytest.raises(NXAPIConnectionError):
            napalm.commit_config()
        assert running(lab.device) == before  # fully old
        lab.device.faults.drop_on = None
        napalm.commit_config()  # the same candidate, retried
    assert line_paths(running(lab.device)) == line_paths(RENDERED["spine1"])  # fully new


def test_dropped_connection_mid_merge_is_rolled_back(lab: Lab) -> None:
    before = running(lab.device)
    lab.device.faults.drop_on = r"^mtu 9000$"  # the batch dies after `interface`/`description` were applied
    with lab.driver("nxos") as napalm:
        napalm.load_merge_candidate(config=MERGE)
        with pytest.raises(MergeConfigException, match="automatic rollback attempted"):
            napalm.commit_config()
    assert running(lab.device) == before


def test_nxapi_error_envelope_stops_the_batch(lab: Lab) -> None:
    api = NxapiDevice("127.0.0.1", "admin", "admin", transport="http", port=lab.server.http_port, verify=False)
    with pytest.raises(NXAPICommandError, match=r"% Invalid command at '\^' marker\."):
        api.config_list(["interface Ethernet1/2", "mtu 9000", "frobnicate 7", "description never"])
    assert "  mtu 9000\n" in running(lab.device) and "never" not in running(lab.device)
    assert api.show("show hostname") == {"hostname": "spine1"}
    assert "Usage for bootflash://sup-local" in api.show("dir bootflash:", raw_text=True)


def test_sftp_lands_in_bootflash(lab: Lab) -> None:
    transport = paramiko.Transport(("127.0.0.1", lab.server.ssh_port))
    try:
        transport.connect(username="admin", password="admin")
        sftp = paramiko.SFTPClient.from_transport(transport)
        assert sftp is not None
        sftp.putfo(io.BytesIO(b"hostname spine1\n"), "bootflash:/upload.cfg")
        assert sftp.listdir("bootflash:") == ["upload.cfg"]
    finally:
        transport.close()
    assert lab.device.bootflash == {"upload.cfg": "hostname spine1\n"}


def test_netmiko_round_trip(lab: Lab) -> None:
    conn = ConnectHandler(device_type="cisco_nxos", host="127.0.0.1", port=lab.server.ssh_port,
                          username="admin", password="admin")
    try:
        assert conn.find_prompt() == "spine1#"
        assert conn.send_command("show hostname") == "spine1"
        out = conn.send_config_set(["interface Ethernet1/2", "mtu 9000", "hsrp 5"])
        assert "spine1(config-if)#" in out and "% Invalid command at '^' marker." in out
        assert "interface Ethernet1/2\n  mtu 9000\n" in conn.send_command("show running-config")
        assert "Copy complete" in conn.save_config()
        # an empty line is a new prompt, never an error: netmiko sends them to find the prompt before a file
        # transfer, and an error there was read as the answer to its `dir bootflash:`
        blank = conn.send_command_timing("", strip_prompt=False)
        assert "spine1#" in blank and "Invalid" not in blank
        assert " bytes free" in conn.send_command("dir bootflash:")
    finally:
        conn.disconnect()
    assert "mtu 9000" in lab.device.startup


def test_typed_ahead_lines_are_echoed_when_the_cli_reads_them(lab: Lab) -> None:
    """Two Enters and a command sent at once (netmiko's find_prompt sends a second Enter when the first prompt is
    slow): each line's echo comes when the CLI reads it, so the command's echo is followed by its own answer, not
    by the prompt of an Enter before it (that order broke netmiko's MD5 check of an upload under load)."""
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  # the lab server's key is new every run
    client.connect("127.0.0.1", lab.server.ssh_port, "admin", "admin", look_for_keys=False, allow_agent=False)
    try:
        shell = client.invoke_shell()
        shell.settimeout(10)
        shell.sendall(b"\n\nshow hostname\n")
        seen = b""
        while seen.count(b"spine1#") < 4:
            seen += shell.recv(4096)
    finally:
        client.close()
    text = seen.decode().replace("\r\n", "\n")
    assert text == "spine1# \nspine1# \nspine1# show hostname\nspine1\nspine1# ", repr(text)
