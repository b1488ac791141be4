"""gNMI dial-in on every switch: each rendered config turns on the NOS's gNMI server in the VRF its management
interface sits in, on the port its PlatformSpec tells a collector, and the lab's emulator of that NOS takes the
config and shows the server back unchanged, so a re-render diffs empty.

The expectations are read from each config's own management lines and from the spec, not from the builders: the
test holds whatever the config binds management to against what the gNMI lines bind the server to.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from rocefab.lab.configtree import ConfigTree, Node
from rocefab.lab.cumulus.nvue import CumulusDevice
from rocefab.lab.eos.device import EosDevice
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.nxos.config import NxosConfig
from rocefab.lab.nxos.device import NxosDevice
from rocefab.models.loader import load_yaml12
from rocefab.platforms import UNITS
from rocefab.platforms.spec import PlatformSpec
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent
INTENTS = {"lab": ROOT / "intents" / "lab.yaml", "pod32": ROOT / "intents" / "pod32.yaml",
           "mixed": ROOT / "tests" / "lab" / "intents" / "mixed.yaml"}
# What each NOS does when its config names no port or VRF for the server (the sources are in the specs' comments).
EOS_DEFAULT_PORT, NXOS_DEFAULT_PORT = 6030, 50051
SECRETS = ("password", "secret", "key ", "passphrase", "BEGIN ")


@cache
def plan(intent: str) -> FabricPlan:
    checked = check_file(INTENTS[intent], "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan


@cache
def files(intent: str) -> dict[str, str]:
    return {f.path: f.content for f in render_fabric(plan(intent))}


def switches(platform: str) -> list[tuple[str, str]]:
    return [(intent, s.name) for intent in INTENTS for s in plan(intent).switches if s.platform == platform]


def switch(intent: str, name: str) -> Switch:
    return next(s for s in plan(intent).switches if s.name == name)


def spec(platform: str) -> PlatformSpec:
    found = UNITS[platform].spec
    assert found is not None
    return found


def ids(cases: list[tuple[str, str]]) -> list[str]:
    return [f"{intent}/{name}" for intent, name in cases]


def test_every_intent_has_switches_of_each_platform_between_them() -> None:
    assert all(switches(p) for p in ("eos", "nxos", "cumulus")), "the intents cover all three NOSes"


@pytest.mark.parametrize("platform", ["eos", "nxos", "cumulus"])
def test_every_switch_release_has_a_gnmi_port(platform: str) -> None:
    port = spec(platform).gnmi_port
    assert port is not None and 1 <= port <= 65535


# --- Arista EOS ----------------------------------------------------------------------------------------------------


def _eos_block(tree: ConfigTree, header: str) -> Node | None:
    return next((n for n in tree.root.children if n.line == header), None)


def _settings(node: Node) -> dict[str, str]:
    """A block's settings by their first word(s): `vrf MGMT` -> {"vrf": "MGMT"}."""
    return {c.key: c.line[len(c.key):].strip() for c in node.children if not c.is_block}


def _eos_gnmi(text: str) -> tuple[str, int]:
    """(VRF, port) of the one gRPC transport of `management api gnmi`, as EOS reads the config."""
    gnmi = _eos_block(ConfigTree.parse(EOS_GRAMMAR, text), "management api gnmi")
    assert gnmi is not None, "management api gnmi is rendered"
    transports = [c for c in gnmi.children if c.line.startswith("transport grpc ")]
    assert len(transports) == 1
    settings = _settings(transports[0])
    assert "ssl profile" not in settings and spec("eos").gnmi_tls is False, "no TLS rendered, and the spec says so"
    return settings.get("vrf", "default"), int(settings.get("port", EOS_DEFAULT_PORT))


def _eos_management_vrf(text: str) -> str:
    tree = ConfigTree.parse(EOS_GRAMMAR, text)
    mgmt = [n for n in tree.blocks("interface").values() if n.line.startswith("interface Management")]
    return _settings(mgmt[0]).get("vrf", "default") if mgmt else "default"


@pytest.mark.parametrize(("intent", "name"), switches("eos"), ids=ids(switches("eos")))
def test_eos_serves_gnmi_where_management_and_eapi_are(intent: str, name: str) -> None:
    text = files(intent)[f"switches/{name}.cfg"]
    vrf, port = _eos_gnmi(text)
    assert port == spec("eos").gnmi_port
    assert vrf == _eos_management_vrf(text)
    assert (vrf != "default") == (switch(intent, name).management is not None)
    api = _eos_block(ConfigTree.parse(EOS_GRAMMAR, text), "management api http-commands")
    assert api is not None
    assert {c.line for c in api.children if c.is_block} == ({f"vrf {vrf}"} if vrf != "default" else set())


def _eapi(device: EosDevice, *cmds: str) -> list[Any]:
    reply = device.run_cmds(["enable", *cmds], "text", "admin")
    assert "error" not in reply, reply
    return [r["output"] for r in reply["result"]]


def _napalm_lines(text: str) -> list[str]:
    """The config as NAPALM's eos driver sends it: stripped, without `!` comments and `end`."""
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.strip().startswith("!") and line.strip() != "end"]


@pytest.mark.parametrize(("intent", "name"), switches("eos"), ids=ids(switches("eos")))
def test_eos_emulator_keeps_the_gnmi_server_and_rediffs_empty(intent: str, name: str) -> None:
    text = files(intent)[f"switches/{name}.cfg"]
    device = EosDevice(name)
    try:
        _eapi(device, "configure session gnmi1", "rollback clean-config", *_napalm_lines(text), "commit")
        running = device.running_text()
        assert _eos_gnmi(running) == _eos_gnmi(text)
        diff = _eapi(device, "configure session gnmi2", "rollback clean-config", *_napalm_lines(text),
                     "show session-config diffs", "abort")[-2]
        assert diff == "", diff
    finally:
        device.close()


# --- Cisco NX-OS ---------------------------------------------------------------------------------------------------


def _nxos_gnmi(text: str) -> tuple[set[str], int]:
    """(VRFs the gRPC agent answers in, port), as NX-OS reads the config."""
    config = NxosConfig.parse(text)
    assert {"grpc", "openconfig"} <= config.features(), "gNMI and its OpenConfig models are enabled"
    lines = {c.line for c in config.root.children}
    port = next((int(line.split()[2]) for line in lines if line.startswith("grpc port ")), NXOS_DEFAULT_PORT)
    vrfs = {"management"} | {line.split()[2] for line in lines if line.startswith("grpc use-vrf ")}
    return vrfs, port


@pytest.mark.parametrize(("intent", "name"), switches("nxos"), ids=ids(switches("nxos")))
def test_nxos_serves_gnmi_in_the_management_vrf(intent: str, name: str) -> None:
    text = files(intent)[f"switches/{name}.cfg"]
    vrfs, port = _nxos_gnmi(text)
    assert port == spec("nxos").gnmi_port and spec("nxos").gnmi_tls
    assert vrfs == {"management"}, "in-band (default VRF) gNMI is not opened"
    mgmt0 = NxosConfig.parse(text).section("interface mgmt0")
    if switch(intent, name).management is not None:
        assert mgmt0 is not None and "vrf member management" in {c.line for c in mgmt0.children}


@pytest.mark.parametrize(("intent", "name"), switches("nxos"), ids=ids(switches("nxos")))
def test_nxos_emulator_keeps_the_gnmi_server_and_rediffs_empty(intent: str, name: str) -> None:
    text = files(intent)[f"switches/{name}.cfg"]
    device = NxosDevice(name)
    cli = device.session(implicit_config=False)
    device.bootflash["candidate.cfg"] = text
    assert not cli.run("rollback running-config file bootflash:candidate.cfg").error
    running = device.running_config()
    assert _nxos_gnmi(running) == _nxos_gnmi(text)
    device.bootflash["running.cfg"] = running
    patch = cli.run("show diff rollback-patch file bootflash:running.cfg file bootflash:candidate.cfg").text
    assert patch.endswith("Rollback Patch is Empty\n"), patch


def test_nxos_grpc_settings_need_the_feature_and_go_with_it() -> None:
    config = NxosConfig.parse("hostname s1\nfeature grpc\ngrpc port 50052\ngrpc use-vrf default\n")
    assert {c.line for c in config.root.children} >= {"grpc port 50052", "grpc use-vrf default"}
    cursor = config.cursor()
    cursor.apply("no feature grpc")
    assert not any(c.line.startswith("grpc ") for c in config.root.children)
    bare = NxosConfig.parse("hostname s1\n").cursor()
    for line in ("grpc port 50052", "feature grpc", "grpc port 80", "grpc use-vrf blue"):
        if line == "feature grpc":
            bare.apply(line)
            continue
        with pytest.raises(Exception, match=line):
            bare.apply(line)


# --- NVIDIA Cumulus Linux (NVUE) -----------------------------------------------------------------------------------


def _nvue(text: str) -> dict[str, Any]:
    docs = load_yaml12(text)
    assert isinstance(docs, list) and len(docs) == 1
    tree: dict[str, Any] = docs[0]["set"]
    return tree


@pytest.mark.parametrize(("intent", "name"), switches("cumulus"), ids=ids(switches("cumulus")))
def test_cumulus_listens_on_the_management_address(intent: str, name: str) -> None:
    doc = _nvue(files(intent)[f"switches/{name}.nvue.yaml"])
    server = doc["system"]["gnmi-server"]
    assert server["state"] == "enabled" and server["port"] == spec("cumulus").gnmi_port
    eth0 = doc["interface"].get("eth0")
    if eth0 is not None:
        assert eth0["ip"]["vrf"] == "mgmt"
        expected = {address.split("/")[0] for address in eth0["ip"]["address"]}
    else:  # no management addressing: in-band on the loopback, in the default VRF
        expected = {address.split("/")[0] for address in doc["interface"]["lo"]["ip"]["address"]}
    assert set(server["listening-address"]) == expected
    assert (eth0 is not None) == (switch(intent, name).management is not None)
    commands = files(intent)[f"switches/{name}.nv-set.txt"].splitlines()
    assert [c for c in commands if " gnmi-server " in c] == [
        f"nv set system gnmi-server listening-address {next(iter(expected))}",
        f"nv set system gnmi-server port {spec('cumulus').gnmi_port}",
        "nv set system gnmi-server state enabled",
    ]


def _nv(device: CumulusDevice, command: str) -> str:
    status, out, err = device.handle(command, "cumulus")
    assert status == 0, f"{command}: {out}{err}"
    return str(out)


@pytest.mark.parametrize(("intent", "name"), switches("cumulus"), ids=ids(switches("cumulus")))
def test_cumulus_emulator_takes_and_keeps_the_gnmi_server(intent: str, name: str, tmp_path: Path) -> None:
    text = files(intent)[f"switches/{name}.nvue.yaml"]
    device = CumulusDevice(tmp_path, name)
    try:
        # the whole document is accepted as it is staged (a full apply would trip the breakout-with-QoS caveat)
        (tmp_path / "candidate.yaml").write_text(text)
        _nv(device, "nv config replace candidate.yaml")
        pending = load_yaml12(_nv(device, "nv config show -r pending -o yaml"))
        server = _nvue(files(intent)[f"switches/{name}.nvue.yaml"])["system"]["gnmi-server"]
        assert next(d["set"] for d in pending if "set" in d)["system"]["gnmi-server"] == server
        _nv(device, "nv config detach")
        # applied and shown back: the system part with the account it must keep, then the same file again
        system = copy.deepcopy(_nvue(text)["system"])
        applied = load_yaml12(_nv(device, "nv config show -o yaml"))
        system["aaa"] = next(d["set"] for d in applied if "set" in d)["system"]["aaa"]
        (tmp_path / "system.yaml").write_text(yaml.safe_dump([{"set": {"system": system}}], sort_keys=False))
        _nv(device, "nv config replace system.yaml")
        _nv(device, "nv config apply -y")
        shown = load_yaml12(_nv(device, "nv config show -o yaml"))
        assert next(d["set"] for d in shown if "set" in d)["system"]["gnmi-server"] == server
        _nv(device, "nv config replace system.yaml")
        assert _nv(device, "nv config diff -o commands") == ""
    finally:
        device.close()


@pytest.mark.parametrize(("words", "reason"), [
    ("port 0", "0 is less than the minimum of 1"),
    ("state on", "'on' is not one of ['enabled', 'disabled']"),  # `enable on` is not this object's spelling
    ("listening-address eth0", "'eth0' is not a 'ip-address'"),
    ("vrf mgmt", "('vrf' was unexpected)"),  # 5.14 has no VRF setting for the server
])
def test_cumulus_emulator_refuses_what_nvue_refuses(words: str, reason: str, tmp_path: Path) -> None:
    device = CumulusDevice(tmp_path, "spine1")
    try:
        status, out, err = device.handle(f"nv set system gnmi-server {words}", "cumulus")
        assert status != 0 and reason in err, out + err
    finally:
        device.close()


# --- every platform -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("intent", sorted(INTENTS))
def test_gnmi_lines_hold_no_secrets(intent: str) -> None:
    for path, text in files(intent).items():
        if not path.startswith("switches/"):
            continue
        lines = [line for line in text.splitlines() if "gnmi" in line or "grpc" in line]
        assert lines, f"{path} turns gNMI on"
        assert not [line for line in lines if any(word in line for word in SECRETS)], path
