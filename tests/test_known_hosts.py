"""deploy/ssh.py KnownHosts: the host keys a name finds are those paramiko's own HostKeys finds in the same file,
for plain, bracketed, multi-name and hashed entries, and a device's cut of the file finds them too."""

from __future__ import annotations

import hashlib
from pathlib import Path

import paramiko
import pytest

from rocefab.deploy.ssh import KnownHosts, host_key_name

NAMES = ["10.0.0.1", "[127.0.0.1]:2201", "[127.0.0.1]:2202", "spine1", "leaf1", "hashed.example", "absent"]


@pytest.fixture(scope="module")
def keys() -> list[paramiko.PKey]:
    """Three ed25519 public keys (their wire form: the type name and 32 bytes, each a length-prefixed string)."""
    def wire(seed: int) -> bytes:
        message = paramiko.Message()
        message.add_string("ssh-ed25519")
        message.add_string(hashlib.sha256(bytes([seed])).digest())
        return message.asbytes()

    return [paramiko.Ed25519Key(data=wire(seed)) for seed in range(3)]


def _line(names: str, key: paramiko.PKey) -> str:
    return f"{names} {key.get_name()} {key.get_base64()}\n"


@pytest.fixture
def known(tmp_path: Path, keys: list[paramiko.PKey]) -> Path:
    path = tmp_path / "known_hosts"
    hashed = paramiko.HostKeys.hash_host("hashed.example")
    path.write_text(
        "# a comment, then a blank line\n\n"
        + _line("10.0.0.1", keys[0])
        + _line("[127.0.0.1]:2201", keys[1])
        + _line("spine1,leaf1", keys[2])
        + _line("[127.0.0.1]:2202", keys[0])
        + _line(hashed, keys[1])
        + "not a host key line\n"
        + _line("10.0.0.1", keys[2])  # a second key of the same type: the first one counts
    )
    return path


@pytest.mark.parametrize("name", NAMES)
def test_a_name_finds_the_keys_paramiko_finds(known: Path, name: str) -> None:
    expected = {t: k.asbytes() for t, k in (paramiko.HostKeys(str(known)).lookup(name) or {}).items()}
    assert {t: k.asbytes() for t, k in KnownHosts(known).keys(name).items()} == expected


@pytest.mark.parametrize("name", NAMES)
def test_a_device_s_cut_of_the_file_answers_as_the_whole_file(known: Path, tmp_path: Path, name: str) -> None:
    cut = tmp_path / "cut"
    cut.write_text(KnownHosts(known).file_for(name, "leaf1"))
    for asked in (name, "leaf1"):
        whole = paramiko.HostKeys(str(known)).lookup(asked) or {}
        part = paramiko.HostKeys(str(cut)).lookup(asked) or {}
        assert {t: k.asbytes() for t, k in part.items()} == {t: k.asbytes() for t, k in whole.items()}
    others = [n for n in NAMES if n not in (name, "leaf1", "spine1")]  # spine1 shares leaf1's line
    assert [n for n in others if paramiko.HostKeys(str(cut)).lookup(n)] == []


def test_host_key_name_brackets_every_port_but_22() -> None:
    assert host_key_name("10.0.0.1", 22) == "10.0.0.1"
    assert host_key_name("127.0.0.1", 2201) == "[127.0.0.1]:2201"
