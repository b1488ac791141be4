"""The EOS eAPI emulator driven by NAPALM's real `eos` driver (pyeapi over real HTTP/HTTPS sockets on 127.0.0.1),
plus the EOS mode grammar on its own. Every rendered EOS config of the example intents must load."""

from __future__ import annotations

import base64
import functools
import http.client
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyeapi.eapilib
import pytest
import yaml
from napalm import get_network_driver
from napalm.base.exceptions import (
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
    SessionLockedException,
)
from napalm.eos.eos import EOSDriver

from rocefab.lab.configtree import ConfigError, ConfigTree
from rocefab.lab.eos.device import EosDevice
from rocefab.lab.eos.eapi import EosServer, serve_eos
from rocefab.lab.eos.grammar import EOS_GRAMMAR, error_text
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

INTENTS = Path(__file__).resolve().parents[2] / "intents"
EOS_SPINE_MODEL = "DCS-7060DX5-64S"


def _render(path: Path, label: str) -> dict[str, str]:
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return {f"{label}/{f.device}": f.content for f in render_fabric(checked.plan) if f.kind == "eos-config"}


@functools.cache
def eos_configs() -> dict[str, str]:
    """Every EOS config of both example intents, and of both again with EOS spines (the EOS spine case)."""
    configs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("lab", "pod32"):
            configs |= _render(INTENTS / f"{name}.yaml", name)
            intent = yaml.safe_load((INTENTS / f"{name}.yaml").read_text())
            intent["topology"]["spines"]["model"] = EOS_SPINE_MODEL
            variant = Path(tmp, f"{name}-eos-spines.yaml")
            variant.write_text(yaml.safe_dump(intent))
            configs |= _render(variant, f"{name}-eos-spines")
    assert any("spine" in key for key in configs), "the EOS spine case rendered no EOS spine"
    return configs


def sections(text: str) -> dict[str, set[str]]:
    """Line sets per top-level section ("" holds the top-level lines), ignoring `!` lines, comments and `end`."""
    out: dict[str, set[str]] = {"": set()}
    current = ""
    for line in text.splitlines():
        body = line.strip()
        if not body or body.startswith("!") or line == "end":
            continue
        if line == body:
            current = line
            out[""].add(line)
            out.setdefault(line, set())
        else:
            out[current].add(line)
    return out


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2
    while (extra := [t for t in set(threading.enumerate()) - before if t.is_alive()]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not extra, extra


@pytest.fixture
def device() -> EosDevice:
    return EosDevice("factory", model="DCS-7060X6-64PE", version="4.34.1F", password="lab-pass")


@pytest.fixture
def server(device: EosDevice) -> Iterator[EosServer]:
    with serve_eos(device) as srv:
        yield srv


def make_driver(server: EosServer, password: str = "lab-pass", transport: str = "http") -> EOSDriver:
    driver: EOSDriver = get_network_driver("eos")("127.0.0.1", "admin", password, timeout=5,
                                     optional_args={"transport": transport, "port": server.port})
    return driver


@pytest.fixture
def eos(server: EosServer) -> Iterator[EOSDriver]:
    driver = make_driver(server)
    driver.open()
    yield driver
    driver.close()


def rpc(server: EosServer, cmds: list[object], fmt: str = "json", password: str = "lab-pass") -> tuple[int, Any]:
    """One raw eAPI request, to check the wire format itself."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    body = json.dumps({"jsonrpc": "2.0", "method": "runCmds", "id": "7",
                       "params": {"version": 1, "cmds": cmds, "format": fmt}})
    auth = base64.b64encode(f"admin:{password}".encode()).decode()
    headers = {"Content-Type": "application/json-rpc", "Authorization": f"Basic {auth}"}
    conn.request("POST", "/command-api", body, headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data) if response.status == 200 else data.decode()


def running(device: EosDevice) -> str:
    return device.running.text()


LEAF = "lab/leaf1-a"


# --- NAPALM flows -------------------------------------------------------------------------------------------
def test_open_facts_and_interfaces(eos: EOSDriver, device: EosDevice) -> None:
    facts = eos.get_facts()
    assert facts["hostname"] == "factory"
    assert facts["model"] == "DCS-7060X6-64PE"
    assert facts["os_version"].startswith("4.34.1F")
    assert facts["serial_number"] == device.serial
    assert facts["interface_list"] == ["Management1"]
    assert eos.get_interfaces()["Management1"]["mtu"] == 1500
    assert eos.get_lldp_neighbors() == {}


def test_replace_with_rendered_config_round_trip(eos: EOSDriver, device: EosDevice) -> None:
    config = eos_configs()[LEAF]
    eos.load_replace_candidate(config=config)
    diff = eos.compare_config()
    assert "+hostname leaf1-a" in diff.splitlines()
    assert "-hostname factory" in diff.splitlines()
    assert "+interface Ethernet61/1" in diff.splitlines() and "+   mtu 9214" in diff.splitlines()
    assert any(line.startswith("-username admin") for line in diff.splitlines())  # clean-config drops it
    assert device.running.blocks("interface").keys() == {"interface Management1"}, "compare must not change running"
    eos.commit_config()
    assert device.startup == device.running_text(), "commit_config also writes memory"
    assert sections(eos.get_config(retrieve="running")["running"]) == sections(config)
    interfaces = eos.get_interfaces()
    assert interfaces["Ethernet61/1"]["mtu"] == 9214
    assert interfaces["Ethernet61/1"]["description"] == "spine1 swp1"
    assert interfaces["Ethernet1/1"]["speed"] == 400_000.0
    assert eos.get_facts()["hostname"] == "leaf1-a"
    eos.load_replace_candidate(config=config)
    assert eos.compare_config() == ""
    eos.discard_config()
    assert [s.state for s in device.sessions.values()] == ["completed"]


@pytest.mark.parametrize("name", sorted(eos_configs()))
def test_every_rendered_eos_config_loads(name: str, eos: EOSDriver, device: EosDevice) -> None:
    config = eos_configs()[name]
    eos.load_replace_candidate(config=config)
    assert eos.compare_config().startswith("@@")
    eos.commit_config()
    assert sections(device.running_text()) == sections(config)
    eos.load_merge_candidate(config=config)
    assert eos.compare_config() == "", "merging the same config again changes nothing"
    eos.discard_config()


def test_misplaced_interface_line_is_rejected(eos: EOSDriver, device: EosDevice) -> None:
    before = running(device)
    with pytest.raises(MergeConfigException) as caught:
        eos.load_merge_candidate(config="interface Ethernet1/1\n   mtu 9214\n"
                                        "router bgp 65101\n   channel-group 1 mode active\n")
    assert "CLI command 6 of 7 'channel-group 1 mode active' failed: invalid command" in str(caught.value)
    assert "Invalid input (at token 0: 'channel-group')" in str(caught.value)
    assert running(device) == before
    assert device.sessions == {}, "napalm aborted the failed session"
    assert device.log[-1] == ("text", ["enable", device.log[-2][1][1] + " abort"])
    with pytest.raises(ReplaceConfigException):
        eos.load_replace_candidate(config="hostname x\nmtu 9214\n")  # an interface line at global level
    assert running(device) == before


def test_global_line_after_interface_goes_to_global(eos: EOSDriver, device: EosDevice) -> None:
    eos.load_merge_candidate(config="interface Ethernet1/1\nmtu 9214\nqos map dscp 26 to traffic-class 3\n")
    eos.commit_config()
    cmds = device.running.to_json()["cmds"]
    assert cmds["qos map dscp 26 to traffic-class 3"] is None
    assert cmds["interface Ethernet1/1"]["cmds"] == {"mtu 9214": None}


def test_merge_adds_and_replaces_in_place(eos: EOSDriver, device: EosDevice) -> None:
    eos.load_merge_candidate(config="interface Management1\n   description oob\n   ip address 192.0.2.10/24\n")
    diff = eos.compare_config().splitlines()
    assert [line for line in diff if line[:1] in "+-"] == ["+   description oob", "+   ip address 192.0.2.10/24"]
    eos.commit_config()
    eos.load_merge_candidate(config="interface Management1\n   description out-of-band\n")
    changed = [line for line in eos.compare_config().splitlines() if line[:1] in "+-"]
    assert changed == ["-   description oob", "+   description out-of-band"]
    eos.commit_config()
    eos.load_merge_candidate(config="interface Management1\n   description out-of-band\n")
    assert eos.compare_config() == ""
    eos.discard_config()
    assert "username admin" in running(device), "a merge keeps what it does not mention"


def test_replace_shows_removals(eos: EOSDriver, device: EosDevice) -> None:
    config = eos_configs()[LEAF]
    eos.load_replace_candidate(config=config)
    eos.commit_config()
    smaller = config.replace("qos map dscp 48 to traffic-class 6\n", "").replace(
        "interface Ethernet2/5\n   description gpu004 ens1f0np0\n", "interface Ethernet2/5\n")
    eos.load_replace_candidate(config=smaller)
    removed = [line for line in eos.compare_config().splitlines() if line.startswith("-")]
    assert removed == ["-   description gpu004 ens1f0np0", "-qos map dscp 48 to traffic-class 6"]
    eos.discard_config()


@pytest.mark.parametrize("version", ["4.34.1F", "4.31.2F"])  # both `show configuration sessions` shapes
def test_commit_confirm(version: str, server: EosServer, device: EosDevice) -> None:
    device.version = version
    eos = make_driver(server)
    eos.open()
    eos.load_merge_candidate(config="hostname confirmed\n")
    eos.commit_config(revert_in=2)
    assert eos.has_pending_commit()
    assert device.hostname == "confirmed"
    eos.confirm_commit()
    assert not eos.has_pending_commit()
    device.expire_commit_timer_now()
    assert device.hostname == "confirmed"
    assert "hostname confirmed" in device.startup
    eos.close()


def test_commit_timer_expires_without_requests(eos: EOSDriver, device: EosDevice) -> None:
    before, startup = running(device), device.startup
    eos.load_merge_candidate(config="interface Management1\n   shutdown\n")
    eos.commit_config(revert_in=2)
    assert "   shutdown" in running(device)
    requests = len(device.log)
    deadline = time.monotonic() + 4
    while running(device) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(device) == before
    assert len(device.log) == requests, "the timer fired on its own"
    assert not eos.has_pending_commit()
    assert device.startup == startup, "the timer commit never wrote memory"


def test_rollback_during_commit_timer_and_after_commits(eos: EOSDriver, device: EosDevice) -> None:
    factory = running(device)
    eos.load_merge_candidate(config="hostname first\n")
    eos.commit_config(revert_in=60)
    eos.rollback()  # aborts the timer commit
    assert running(device) == factory and not eos.has_pending_commit()
    eos.load_merge_candidate(config="hostname first\n")
    eos.commit_config()
    first = running(device)
    eos.load_replace_candidate(config=eos_configs()[LEAF])
    eos.commit_config()
    assert device.hostname == "leaf1-a"
    eos.rollback()  # configure replace flash:rollback-0
    assert running(device) == first
    assert device.startup == device.running_text()


def test_expired_timer_session_tolerates_the_late_abort(eos: EOSDriver, device: EosDevice) -> None:
    eos.load_merge_candidate(config="hostname short-lived\n")
    eos.commit_config(revert_in=30)
    device.expire_commit_timer_now()
    assert device.hostname == "factory"
    assert [s.state for s in device.sessions.values()] == ["aborted"]
    # eos fixture teardown: close() still sends `configure session X abort` (deploy-toolchain.md pitfall 3)


def test_wrong_password_fails_fast(server: EosServer) -> None:
    start = time.monotonic()
    with pytest.raises((pyeapi.eapilib.ConnectionError, ConnectionException), match="Unauthorized"):
        make_driver(server, password="wrong").open()
    assert time.monotonic() - start < 2
    assert rpc(server, ["show version"], password="wrong")[0] == 401


@pytest.mark.skipif(os.environ.get("ROCEFAB_SKIP_SLOW") == "1", reason="slow: napalm waits 10 s for the lock")
def test_stale_session_locks_the_config(eos: EOSDriver, device: EosDevice) -> None:
    """The only slow test (~11 s): napalm retries the lock for 10 s before it gives up."""
    device.faults.stale_session = True
    with pytest.raises(SessionLockedException):
        eos.load_merge_candidate(config="hostname blocked\n")
    assert device.sessions["napalm_stale"].state == "pending"
    assert device.hostname == "factory"
    eos.config_session = None  # napalm names the session before the lock check; it was never created
    device.faults.stale_session = False
    eos.load_merge_candidate(config="hostname free\n")
    eos.commit_config()
    assert device.hostname == "free"


@pytest.mark.parametrize("after", [False, True], ids=["before-commit", "after-commit"])
def test_dropped_connection_at_commit_is_all_or_nothing(after: bool, eos: EOSDriver, device: EosDevice) -> None:
    old = running(device)
    eos.load_replace_candidate(config=eos_configs()[LEAF])
    new = device.sessions[eos.config_session].config.text()
    device.faults.drop_on, device.faults.drop_after = r"^configure session \S+ commit$", after
    with pytest.raises(pyeapi.eapilib.ConnectionError):
        eos.commit_config()
    assert running(device) == (new if after else old)
    device.faults.drop_on = None
    if after:
        eos.config_session = None  # committed: there is nothing left to abort


def test_https_with_self_signed_certificate(device: EosDevice) -> None:
    with serve_eos(device, tls=True) as srv:
        eos = make_driver(srv, transport="https")
        eos.open()
        assert eos.get_facts()["hostname"] == "factory"
        eos.load_merge_candidate(config="interface Management1\n   mtu 9000\n")
        assert "+   mtu 9000" in eos.compare_config().splitlines()
        eos.discard_config()
        eos.close()
        assert device.sessions == {}


# --- the wire format ----------------------------------------------------------------------------------------
def test_error_envelope(server: EosServer) -> None:
    status, reply = rpc(server, ["enable", "configure session s1", "interface Ethernet1", "frobnicate 7", "end"])
    assert status == 200
    assert reply == {"jsonrpc": "2.0", "id": "7", "error": {
        "code": 1002, "message": "CLI command 4 of 5 'frobnicate 7' failed: invalid command",
        "data": [{}, {}, {}, {"errors": ["Invalid input (at token 0: 'frobnicate')"]}]}}
    status, reply = rpc(server, ["show configuration sessions"])
    assert reply["result"][0]["sessions"]["s1"]["state"] == "pending", "a failing line aborts nothing by itself"


def test_show_commands_and_direct_configuration(server: EosServer, device: EosDevice) -> None:
    status, reply = rpc(server, ["enable", "configure terminal", "interface Ethernet3/1", "mtu 9000",
                                 {"cmd": "comment", "input": "uplink to nowhere"}, "exit",
                                 {"cmd": "banner login", "input": "lab switch\nauthorised use only"}, "end",
                                 "show running-config | json", "show running-config sanitized"], fmt="text")
    assert status == 200
    result = reply["result"]
    as_json = json.loads(result[8]["output"])
    assert as_json["cmds"]["interface Ethernet3/1"] == {"cmds": {"mtu 9000": None}, "comments": ["uplink to nowhere"]}
    text = result[9]["output"]
    assert text.startswith("! Command: show running-config\n! device: factory (DCS-7060X6-64PE, EOS-4.34.1F)\n")
    assert "interface Ethernet3/1\n   !! uplink to nowhere\n   mtu 9000\n!" in text
    assert "banner login\nlab switch\nauthorised use only\nEOF\n" in text
    assert "secret sha512 <removed>" in text and "placeholder" not in text
    assert ConfigTree.parse(EOS_GRAMMAR, device.running_text()) == device.running, "the printed config reads back"
    status, reply = rpc(server, ["show session-config named nope diffs"], fmt="text")
    assert reply["error"]["code"] == 1000
    status, reply = rpc(server, ["show running-config"])
    assert "interface Ethernet3/1" in reply["result"][0]["cmds"]


def test_faults_delay_and_reject_line(eos: EOSDriver, device: EosDevice) -> None:
    device.faults.delay_seconds = 0.3
    start = time.monotonic()
    eos.get_facts()
    assert time.monotonic() - start >= 0.3
    device.faults.delay_seconds = 0
    device.faults.reject_line = r"^mtu "
    with pytest.raises(MergeConfigException, match="'mtu 9000' failed: invalid command"):
        eos.load_merge_candidate(config="interface Management1\n   mtu 9000\n")
    device.faults.reject_line = None
    eos.load_merge_candidate(config="interface Management1\n   mtu 9000\n")
    eos.discard_config()


# --- the grammar on its own ---------------------------------------------------------------------------------
def apply(lines: list[str], tree: ConfigTree | None = None) -> ConfigTree:
    tree = tree or ConfigTree(EOS_GRAMMAR)
    cursor = tree.cursor()
    for line in lines:
        cursor.apply(line)
    return tree


@pytest.mark.parametrize("name", sorted(eos_configs()))
def test_flat_lines_land_where_the_indentation_says(name: str) -> None:
    text = eos_configs()[name]
    flat = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("!")]
    indented = ConfigTree.parse(EOS_GRAMMAR, text)
    assert apply([line for line in flat if line != "end"]) == indented
    assert ConfigTree.parse(EOS_GRAMMAR, indented.text()) == indented


@pytest.mark.parametrize(("lines", "bad"), [
    (["mtu 9214"], "Invalid input (at token 0: 'mtu')"),
    (["router bgp 65101", "channel-group 1 mode active"], "Invalid input (at token 0: 'channel-group')"),
    (["interface Ethernet1/1", "router-id 10.0.0.1"], "Invalid input (at token 0: 'router-id')"),
    (["interface Ethernet1/1", "mtu 9216"], "Invalid input (at token 1: '9216')"),  # EOS stops at 9214
    (["qos profile P", "uc-tx-queue 3", "bandwidth percent 101"], "Invalid input (at token 2: '101')"),
    (["interface Ethernet1/1", "switchport access vlan 4095"], "Invalid input (at token 3: '4095')"),
    (["interface Foo1"], "Invalid input (at token 1: 'Foo1')"),
    (["interface"], "Incomplete command"),
    (["no frobnicate"], "Invalid input (at token 1: 'frobnicate')"),
])
def test_grammar_rejects(lines: list[str], bad: str) -> None:
    with pytest.raises(ConfigError) as caught:
        apply(lines)
    assert error_text(caught.value) == bad


def test_global_lines_are_not_interface_lines() -> None:
    assert EOS_GRAMMAR.match("interface", "qos map dscp 26 to traffic-class 3") is None
    assert EOS_GRAMMAR.match("global", "mtu 9214") is None
    tree = apply(["interface Ethernet1/1", "qos map dscp 26 to traffic-class 3"])
    assert tree.to_json()["cmds"] == {"interface Ethernet1/1": {"cmds": {}, "comments": []},
                                      "qos map dscp 26 to traffic-class 3": None}
    with pytest.raises(ConfigError):  # the global line left interface mode behind
        apply(["interface Ethernet1/1", "qos map dscp 26 to traffic-class 3", "mtu 9214"])


@pytest.mark.parametrize(("mode", "first", "second"), [
    ([], "hostname a", "hostname b"),
    (["interface Ethernet1/1"], "mtu 1500", "mtu 9214"),
    (["interface Ethernet1/1"], "description a", "description b c"),
    (["interface Ethernet1/1"], "ip address 10.0.0.1/31", "ip address 10.0.0.3/31"),
    (["interface Ethernet1/1"], "speed 400g-4", "speed 200g-2"),
    (["interface Ethernet1/1"], "switchport access vlan 101", "switchport access vlan 102"),
    (["interface Ethernet1/1"], "channel-group 1 mode active", "channel-group 2 mode active"),
    (["interface Ethernet1/1"], "service-profile A", "service-profile B"),
    (["router bgp 65101"], "router-id 10.0.0.1", "router-id 10.0.0.2"),
    (["router bgp 65101"], "maximum-paths 4 ecmp 4", "maximum-paths 64 ecmp 64"),
    (["router bgp 65101"], "neighbor 10.0.0.1 remote-as 65000", "neighbor 10.0.0.1 remote-as 65001"),
    (["qos profile P", "tx-queue 3"], "priority strict", "no priority"),
    ([], "qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 4"),
])
def test_same_keyword_replaces(mode: list[str], first: str, second: str) -> None:
    text = apply([*mode, first, second]).text()
    assert second in text and first not in text.replace(second, "")


@pytest.mark.parametrize(("setup", "removal", "gone"), [
    (["interface Ethernet1/1", "mtu 9214"], "no mtu", "mtu 9214"),
    (["interface Ethernet1/1", "description x"], "default description", "description x"),
    (["interface Ethernet1/1", "no switchport"], "switchport", "no switchport"),
    (["interface Ethernet1/1", "no switchport"], "default switchport", "no switchport"),
    (["interface Ethernet1/1", "shutdown"], "no shutdown", "shutdown"),
    (["interface Ethernet1/1", "mtu 9214"], "no interface Ethernet1/1", "interface Ethernet1/1"),
    (["router bgp 1", "neighbor 10.0.0.1 remote-as 2"], "no neighbor 10.0.0.1 remote-as", "remote-as"),
    (["router bgp 1", "address-family ipv4", "network 10.0.0.0/24"], "no router bgp 1", "router bgp"),
    (["ip routing", "no ip routing vrf MGMT"], "ip routing vrf MGMT", "vrf MGMT"),
    (["management api http-commands", "no shutdown"], "shutdown", "shutdown"),
])
def test_no_and_default_forms(setup: list[str], removal: str, gone: str) -> None:
    assert gone in apply(setup).text()
    assert gone not in apply([*setup, removal]).text()
