"""Inventories for Nornir and Ansible: an export loads in Nornir's own SimpleInventory and in
`ansible-inventory`, reads back into rocefab as the inventory it came from, and a hand-written Nornir
inventory (groups, defaults) resolves in rocefab as Nornir resolves it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INTENTS, example_plan
from nornir import InitNornir

from rocefab.deploy.inventory import Inventory, PasswordSource, load_inventory
from rocefab.deploy.inventory_export import ansible_inventory, nornir_files, planned_inventory
from rocefab.models.sourcemap import IntentLoadError
from rocefab.renderers.inventory_file import planned_devices

ANSIBLE_INVENTORY = Path(sys.executable).parent / "ansible-inventory"

# pod32 has every kind: NX-OS spines and leaves, EOS and Cumulus leaves, hosts. Overrides of every field
# rocefab reads, on a few devices, so the round trip covers more than the defaults.
SITE_INVENTORY = """\
defaults:
  username: netops
  password_env: FABRIC_PASSWORD
  verify_tls: false
  timeout_s: 45
  sudo: true
devices:
{devices}
  spine1: {{host: 10.9.0.1, transport: nxos-ssh, port: 2222, username: ops2}}
  spine2: {{host: 10.9.0.2, ssh_port: 8022, scheme: http, verify_tls: true}}
  gpu001: {{host: gpu001.mgmt.example.net, sudo: false, known_hosts: /etc/ssh/fleet_known_hosts}}
"""


def _site_inventory(tmp_path: Path) -> Path:
    plan = example_plan("pod32")
    special = {"spine1", "spine2", "gpu001"}
    lines = [f"  {d.name}: {{host: 10.8.{i // 250}.{i % 250 + 1}}}"
             for i, d in enumerate(planned_devices(plan)) if d.name not in special]
    path = tmp_path / "site.yaml"
    path.write_text(SITE_INVENTORY.format(devices="\n".join(lines)))
    return path


def _nornir(folder: Path):  # type: ignore[no-untyped-def]
    return InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(folder / "hosts.yaml"), "group_file": str(folder / "groups.yaml"),
        "defaults_file": str(folder / "defaults.yaml")}}, logging={"enabled": False})


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _resolved(inventory: Inventory, kinds: dict[str, str]) -> dict[str, tuple[object, ...]]:
    passwords = PasswordSource(interactive=False)
    out = {}
    for name, kind in kinds.items():
        a = inventory.access(name, kind, passwords)
        out[name] = (a.host, a.transport, a.port, a.ssh_port, a.username, a.scheme, a.verify_tls, a.ca_file,
                     a.verify_host_key, a.known_hosts, a.timeout_s, a.sudo)
    return out


def test_a_nornir_export_loads_in_nornir_and_reads_back_as_the_same_inventory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_PASSWORD", "not used: nothing connects")
    plan = example_plan("pod32")
    devices = planned_devices(plan)
    site = load_inventory(_site_inventory(tmp_path))
    folder = _write(tmp_path / "nornir", nornir_files(site, devices))
    nr = _nornir(folder)
    assert sorted(nr.inventory.hosts) == sorted(d.name for d in devices)
    spine1 = nr.inventory.hosts["spine1"]
    assert (spine1.hostname, spine1.port, spine1.platform, spine1.username) == ("10.9.0.1", 2222, "nxos_ssh", "ops2")
    rack1 = nr.inventory.hosts["rack1-a"]
    assert rack1.platform == "eos" and rack1.username == "netops" and rack1.port is None
    assert [g.name for g in rack1.groups] == ["platform_eos", "role_leaf"]
    leaves = nr.filter(filter_func=lambda h: "role_leaf" in h.groups).inventory.hosts
    assert len(leaves) == sum(d.role == "leaf" for d in devices)
    assert all(h.password is None for h in nr.inventory.hosts.values()), "no password is ever exported"
    back = load_inventory(folder)
    kinds = {d.name: d.kind for d in devices}
    assert _resolved(back, kinds) == _resolved(site, kinds)


def test_a_hand_written_nornir_inventory_resolves_as_nornir_resolves_it(tmp_path: Path) -> None:
    folder = _write(tmp_path / "inv", {
        "hosts.yaml": "leaf1-a:\n  hostname: 127.0.0.1\n  port: 8443\n  groups: [arista]\n"
                      "spine1:\n  hostname: 127.0.0.2\n  groups: [nvidia, lab]\n"
                      "gpu001:\n  groups: [lab]\n  platform: linux\n  data: {rack: r1, rocefab_sudo: true}\n",
        "groups.yaml": "arista:\n  platform: eos\n  username: eosadmin\n  groups: [lab]\n"
                       "nvidia:\n  platform: cumulus_linux\n"
                       "lab:\n  username: cumulus\n  data: {rocefab_verify_host_key: false, site_owner: netops}\n",
        "defaults.yaml": "username: root\ndata: {rocefab_password_env: LAB_PASSWORD}\n",
    })
    nr = _nornir(folder)
    mine = load_inventory(folder)
    for name, host in nr.inventory.hosts.items():
        ours = mine.devices[name]
        assert (ours.host, ours.username or mine.defaults.username) == (host.hostname or name, host.username)
    assert mine.devices["leaf1-a"].transport is not None and mine.devices["leaf1-a"].transport.value == "eapi"
    assert mine.devices["spine1"].transport is not None and mine.devices["spine1"].transport.value == "nvue-ssh"
    assert mine.devices["spine1"].verify_host_key is False, "data from a group's group"
    assert mine.devices["gpu001"].sudo is True
    assert mine.defaults.password_env == "LAB_PASSWORD"


@pytest.mark.parametrize(("files", "where", "says"), [
    ({"hosts.yaml": "leaf1-a:\n  hostname: 10.0.0.1\n  platform: eos\n  password: hunter2\n"},
     "hosts.yaml:4:3", "leaf1-a.password"),
    ({"hosts.yaml": "leaf1-a:\n  hostname: 10.0.0.1\n  platform: eos\n",
      "defaults.yaml": "username: admin\npassword: hunter2\n"}, "defaults.yaml:2:1", "password"),
    ({"hosts.yaml": "leaf1-a:\n  hostname: 10.0.0.1\n  platform: junos\n"}, "hosts.yaml:3:3",
     "leaf1-a.platform: platform 'junos' and no data.rocefab_transport"),
    ({"hosts.yaml": "leaf1-a:\n  hostname: 10.0.0.1\n  platform: eos\n  groups: [nope]\n"}, "hosts.yaml:4:3",
     "no group 'nope'"),
    ({"hosts.yaml": "leaf1-a:\n  hostname: 'evil; rm -rf /'\n  platform: eos\n"}, "hosts.yaml:2:3",
     "leaf1-a.hostname"),
])
def test_a_bad_nornir_inventory_is_refused_with_its_position(tmp_path: Path, files: dict[str, str], where: str,
                                                              says: str) -> None:
    folder = _write(tmp_path / "inv", files)
    with pytest.raises(IntentLoadError) as exc:
        load_inventory(folder)
    shown = str(exc.value)
    assert f"{folder}/{where}" in shown and says in shown, shown
    assert "hunter2" not in shown


def test_the_command_line_exports_and_refuses_bad_input(tmp_path: Path) -> None:
    def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rocefab", *map(str, args)], capture_output=True, text=True,
                              check=False, timeout=60)

    done = rocefab("inventory", "export", INTENTS / "lab.yaml", "--format", "nornir", "-o", tmp_path / "nr")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "nr").iterdir()) == ["defaults.yaml", "groups.yaml", "hosts.yaml"]
    (tmp_path / "nr" / "hosts.yaml").write_text("spine1:\n  platform: cumulus_linux\n  password: x\n")
    bad = rocefab("inventory", "export", INTENTS / "lab.yaml", "--format", "ansible", "-i", tmp_path / "nr")
    assert bad.returncode == 2 and "hosts.yaml:3:3" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def test_an_ansible_export_is_what_ansible_inventory_reads(tmp_path: Path) -> None:
    plan = example_plan("pod32")
    devices = planned_devices(plan)
    path = tmp_path / "fabric.yml"
    path.write_text(ansible_inventory(planned_inventory(plan), devices))
    listed = subprocess.run([str(ANSIBLE_INVENTORY), "-i", str(path), "--list"], capture_output=True, text=True,
                            check=True, timeout=120)
    inventory = json.loads(listed.stdout)
    hostvars = inventory["_meta"]["hostvars"]
    assert sorted(hostvars) == sorted(d.name for d in devices)
    by_name = {d.name: d for d in devices}
    network_os = {"eos": "arista.eos.eos", "nxos": "cisco.nxos.nxos"}
    for name, v in hostvars.items():
        d = by_name[name]
        assert v["ansible_host"] == d.address and v["ansible_user"] == "admin"
        assert v.get("ansible_network_os") == network_os.get(d.kind)
        assert "ansible_password" not in v and "ansible_ssh_pass" not in v
    assert sorted(inventory["role_leaf"]["hosts"]) == sorted(d.name for d in devices if d.role == "leaf")
