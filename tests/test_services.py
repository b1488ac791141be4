"""The intent's services section: strict values refused with the loader's error (file:line:col, field, exit 2),
rendered on every switch platform in the VRF of its management address, raw lines per platform and role, nothing
for hosts, no secret anywhere, and the lab emulators taking the lines as the devices do (and refusing misplaced
ones)."""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rocefab.cli import app
from rocefab.lab.configtree import ConfigError, ConfigTree
from rocefab.lab.cumulus.schema import SCHEMA, Invalid, normalise
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.nxos.config import InvalidCommandError, NxosConfig, rollback_patch
from rocefab.models.intent import Intent
from rocefab.models.loader import load_yaml12

ROOT = Path(__file__).resolve().parent.parent
SERVICES: dict[str, Any] = yaml.safe_load((ROOT / "tests" / "data" / "services.yaml").read_text(encoding="utf-8"))
BASES = {"lab": ROOT / "intents" / "lab.yaml", "mixed": ROOT / "tests" / "lab" / "intents" / "mixed.yaml"}


def _doc(base: str, services: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(BASES[base].read_text(encoding="utf-8"))
    if services is not None:
        doc["services"] = services
    return doc


def _render(tmp_path: Path, doc: dict[str, Any]) -> tuple[int, str, Path]:
    intent = tmp_path / "intent.yaml"
    intent.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(intent), "-o", str(out), "--with", "nvue-commands"])
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr, out


@cache
def _files(base: str, with_services: bool) -> dict[str, str]:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="rocefab-services-"))
    code, stderr, out = _render(folder, _doc(base, copy.deepcopy(SERVICES["services"]) if with_services else None))
    assert code == 0, stderr
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()}


# --- refused values ----------------------------------------------------------------------------------------------

BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("ntp.servers.0", {"ntp": {"servers": ["192.0.2.300"]}}, "services.ntp.servers[0]", "not a valid IPv4 address"),
    ("ntp IPv6", {"ntp": {"servers": ["2001:db8::1"]}}, "services.ntp.servers[0]", "is an IPv6 address"),
    ("hostname label", {"syslog": {"servers": ["log_1.example.net"]}}, "services.syslog.servers[0]", "RFC 1123"),
    ("dns server name", {"dns": {"servers": ["dns.example.net"]}}, "services.dns.servers[0]", "IPv4"),
    ("ntp twice", {"ntp": {"servers": ["192.0.2.1", "192.0.2.1"]}}, "services.ntp.servers", "listed twice"),
    ("banner EOF", {"banner": ["hello", "EOF"]}, "services.banner[1]", "ends the banner"),
    ("banner delimiter", {"banner": ["a ^ b"]}, "services.banner[0]", "'^' may not appear"),
    ("banner quote", {"banner": ['say "hi"']}, "services.banner[0]", "may not appear"),
    ("banner line break", {"banner": ["one\ntwo"]}, "services.banner[0]", "printable ASCII"),
    ("banner empty line", {"banner": ["one", ""]}, "services.banner[1]", "may not be empty"),
    ("banner too long", {"banner": ["x" * 81]}, "services.banner[0]", "at most 80"),
    ("banner too many", {"banner": ["x"] * 21}, "services.banner", "at most 20"),
    ("snmp unicode", {"snmp": {"location": "Zürich"}}, "services.snmp.location", "printable ASCII"),
    ("aaa secret", {"aaa": {"tacacs_servers": ["192.0.2.49"], "key": "s3cret"}}, "services.aaa.key", "unknown key"),
    ("raw control", {"raw": {"eos": {"leaf": ["clock timezone\tUTC"]}}}, "services.raw.eos.leaf[0]", "printable"),
    ("raw too long", {"raw": {"nxos": {"spine": ["x" * 241]}}}, "services.raw.nxos.spine[0]", "at most 240"),
    ("raw role", {"raw": {"eos": {"border": ["x"]}}}, "services.raw.eos.border", "unknown key"),
    ("raw platform", {"raw": {"junos": {"leaf": ["x"]}}}, "services.raw.junos", "unknown key"),
    ("nvue shell", {"raw": {"cumulus": {"spine": ["sudo reboot"]}}}, "services.raw.cumulus.spine[0]", "nv set"),
    ("nvue chain", {"raw": {"cumulus": {"spine": ["nv set system hostname x; reboot"]}}},
     "services.raw.cumulus.spine[0]", "';' may not appear"),
    ("nvue no value", {"raw": {"cumulus": {"leaf": ["nv set qos"]}}}, "services.raw.cumulus.leaf[0]", "a value"),
]


@pytest.mark.parametrize(("case", "services", "field", "message"), BAD, ids=[c[0] for c in BAD])
def test_bad_values_are_refused_with_position_and_field(case: str, services: dict[str, Any], field: str,
                                                        message: str, tmp_path: Path) -> None:
    code, stderr, out = _render(tmp_path, _doc("lab", services))
    assert code == 2, stderr
    assert "nothing was written" in stderr and not out.exists()
    assert re.search(rf"intent\.yaml:\d+:\d+:? {re.escape(field)}: .*{re.escape(message)}", stderr), stderr


def test_every_services_property_is_described() -> None:
    schema = Intent.model_json_schema()
    names = ("Services", "Ntp", "Syslog", "Dns", "Snmp", "Aaa", "Raw", "RawByRole", "NvueByRole")
    for name in names:
        for prop, body in schema["$defs"][name]["properties"].items():
            assert str(body.get("description", "")).strip(), f"{name}.{prop}"
    assert schema["properties"]["services"]["description"]


# --- rendering -----------------------------------------------------------------------------------------------------

def test_without_services_nothing_changes() -> None:
    assert _files("lab", False) == _files("lab", False)  # the cache holds one rendering per shape
    for path, text in _files("lab", False).items():
        if path.startswith("switches/"):
            assert "ntp server" not in text and "banner" not in text and "service ntp" not in text, path


def test_eos_in_the_default_vrf_without_management() -> None:
    leaf = _files("lab", True)["switches/leaf1-a.cfg"]
    body = leaf[leaf.index("router bgp"):]
    expected = [
        "ntp server 192.0.2.123 prefer iburst", "ntp server ntp1.example.net iburst", "logging host 192.0.2.14",
        "ip name-server 192.0.2.53", "ip name-server 192.0.2.54", "dns domain fabric.example.net",
        "ip domain-list example.net", "snmp-server location DC1 row 3", "snmp-server contact noc@example.net",
        "tacacs-server host 192.0.2.49", "radius-server host 192.0.2.18",
        "!\nbanner motd\nAuthorised use only.\nAll sessions are logged.\nEOF\n!", "!\nclock timezone UTC\n!\nend\n",
    ]
    for line in expected:
        assert line in body, line


def test_nxos_and_cumulus_in_the_management_vrf() -> None:
    files = _files("mixed", True)
    spine = files["switches/spine1.cfg"]
    for line in ("ntp server 192.0.2.123 prefer use-vrf management", "ntp server ntp1.example.net use-vrf management",
                 "logging server 192.0.2.14 5 use-vrf management", "feature tacacs+\ntacacs-server host 192.0.2.49",
                 "aaa group server tacacs+ ROCEFAB-TACACS\n  server 192.0.2.49\n  use-vrf management",
                 "aaa group server radius ROCEFAB-RADIUS\n  server 192.0.2.18\n  use-vrf management",
                 "banner motd ^Authorised use only.\nAll sessions are logged.^",
                 "vrf context management\n  ip route 0.0.0.0/0 192.168.100.1\n  ip domain-name fabric.example.net\n"
                 "  ip domain-list example.net\n  ip name-server 192.0.2.53 192.0.2.54\n"):
        assert line in spine, line
    assert spine.endswith("clock timezone UTC 0 0\n")  # the spine's raw line, last
    assert "clock timezone" not in files["switches/nx-a.cfg"]  # no raw lines for NX-OS leaves
    commands = files["switches/cl-a.nv-set.txt"]
    for line in ("nv set service ntp mgmt server 192.0.2.123 iburst on", "nv set service dns mgmt server 192.0.2.53",
                 "nv set service dns mgmt search example.net", "nv set system syslog server 192.0.2.14 vrf mgmt",
                 'nv set system message pre-login "Authorised use only. All sessions are logged."'):
        assert f"\n{line}\n" in commands, line
    assert "post-login" not in commands  # the Cumulus raw line is the spines'; cl-a is a leaf


def test_raw_lines_go_where_documented() -> None:
    files = _files("lab", True)
    commands = files["switches/spine1.nv-set.txt"]
    assert commands.endswith('nv set system message post-login "Fabric spine"\n')
    document = load_yaml12(files["switches/spine1.nvue.yaml"])[0]["set"]
    assert document["system"]["message"] == {"pre-login": "Authorised use only. All sessions are logged.",
                                             "post-login": "Fabric spine"}
    assert "clock timezone" not in commands


def test_hosts_get_nothing_and_no_secret_is_written() -> None:
    plain, with_services = _files("lab", False), _files("lab", True)
    for path, text in plain.items():
        if path.startswith("hosts/"):
            assert with_services[path] == text, path
    for path, text in with_services.items():
        if path.startswith("switches/"):
            for word in (" key ", "community", "secret", "password"):
                assert word not in text, (path, word)


# --- the lab emulators ---------------------------------------------------------------------------------------------

def test_eos_emulator_takes_the_rendered_lines_and_prints_them_back() -> None:
    tree = ConfigTree.parse(EOS_GRAMMAR, _files("lab", True)["switches/leaf1-a.cfg"])
    assert ConfigTree.parse(EOS_GRAMMAR, tree.text()) == tree
    assert "banner motd\nAuthorised use only.\nAll sessions are logged.\nEOF" in tree.text()


@pytest.mark.parametrize("misplaced", ["interface Ethernet1/1\n   ntp server 192.0.2.1\n",
                                       "interface Ethernet1/1\n   snmp-server location x\n",
                                       "logging host\n", "tacacs-server host 192.0.2.1 vrf\n"])
def test_eos_emulator_refuses_misplaced_or_short_lines(misplaced: str) -> None:
    with pytest.raises(ConfigError):
        ConfigTree.parse(EOS_GRAMMAR, misplaced)


def test_nxos_emulator_round_trip_and_banner_change() -> None:
    text = _files("mixed", True)["switches/spine1.cfg"]
    config = NxosConfig.parse(text)
    assert rollback_patch(config, NxosConfig.parse(config.render())) == []
    changed = NxosConfig.parse(text.replace("All sessions are logged.^", "Sessions are logged.^"))
    assert rollback_patch(config, changed) == ["banner motd ^Authorised use only.\nSessions are logged.^"]
    without = NxosConfig.parse(text.replace("banner motd ^Authorised use only.\nAll sessions are logged.^\n", ""))
    assert rollback_patch(config, without) == ["no banner motd"]


@pytest.mark.parametrize("refused", [
    "tacacs-server host 192.0.2.1\n",  # without feature tacacs+
    "feature tacacs+\naaa group server tacacs+ G\n  ntp server 192.0.2.1 bogus\n",
    "banner motd ^one^ two\n",  # text after the closing delimiter
    "interface mgmt0\n  ip name-server 192.0.2.53 use-vrf\n",
])
def test_nxos_emulator_refuses(refused: str) -> None:
    with pytest.raises(InvalidCommandError):
        NxosConfig.parse(refused)


def test_nvue_emulator_takes_the_document_and_refuses_bad_values() -> None:
    for base, name in (("lab", "spine1"), ("mixed", "cl-a")):
        document = load_yaml12(_files(base, True)[f"switches/{name}.nvue.yaml"])[0]["set"]
        normalise(document, SCHEMA, [], False)
    bad: dict[str, Any]
    for bad in ({"service": {"ntp": {"mgmt": {"server": {"ntp_1": {"iburst": "on"}}}}}},
                {"service": {"ntp": {"mgmt": {"server": {"192.0.2.1": {"iburst": "yes"}}}}}},
                {"system": {"message": {"pre-login": {"x": {}}}}},
                {"service": {"snmp-server": {"readonly-community": {}}}}):
        with pytest.raises(Invalid):
            normalise(bad, SCHEMA, [], False)
