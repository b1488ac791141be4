"""Export an inventory for the tools a site already runs: Nornir's SimpleInventory, an Ansible YAML inventory and
an ANTA inventory for the switches ANTA tests. The plan says what each device is (platform and role); the inventory
says how to reach it. No output holds a secret: passwords stay where rocefab looks them up (environment, keyring,
prompt)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocefab.deploy.inventory import DEFAULT_PORT, Defaults, DeviceAccess, Inventory, Transport
from rocefab.deploy.nornir_inventory import DEFAULTS, GROUPS, HOSTS, transport_platforms
from rocefab.renderers.inventory_file import PlannedDevice, planned_devices
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.yamltext import dump_block

# Ansible: the connection plugin and network OS each transport means (ansible.netcommon, arista.eos, cisco.nxos
# collections); Cumulus switches and GPU hosts are plain Linux over SSH (rocefab runs `nv` there itself).
ANSIBLE_CONNECTION: dict[Transport, dict[str, object]] = {
    Transport.EAPI: {"ansible_connection": "ansible.netcommon.httpapi", "ansible_network_os": "arista.eos.eos"},
    Transport.NXAPI: {"ansible_connection": "ansible.netcommon.httpapi", "ansible_network_os": "cisco.nxos.nxos"},
    Transport.NXOS_SSH: {"ansible_connection": "ansible.netcommon.network_cli",
                         "ansible_network_os": "cisco.nxos.nxos"},
    Transport.NVUE_SSH: {"ansible_connection": "ansible.builtin.ssh"},
    Transport.SSH: {"ansible_connection": "ansible.builtin.ssh"},
}
HTTPAPI = (Transport.EAPI, Transport.NXAPI)


class ExportError(Exception):
    pass


def planned_inventory(plan: FabricPlan) -> Inventory:
    """The inventory render writes as inventory.yaml: planned management addresses, or names."""
    return Inventory("inventory.yaml (planned)", Defaults(),
                     {d.name: DeviceAccess(host=d.address) for d in planned_devices(plan)})


def _accesses(inventory: Inventory, devices: Sequence[PlannedDevice]) -> list[tuple[PlannedDevice, DeviceAccess]]:
    missing = [d.name for d in devices if d.name not in inventory.devices]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ExportError(f"{inventory.file}: no entry for {shown}")
    return [(d, inventory.devices[d.name]) for d in devices]


def _transport(device: PlannedDevice, access: DeviceAccess) -> Transport:
    from rocefab.platforms import unit  # here: the platform units import the renderers

    return access.transport or Transport(unit(device.kind).transports[0])


def _group(word: str) -> str:
    return word.replace("-", "_")


def nornir_files(inventory: Inventory, devices: Sequence[PlannedDevice]) -> dict[str, str]:
    """hosts.yaml, groups.yaml and defaults.yaml of a Nornir SimpleInventory."""
    hosts: dict[str, Any] = {}
    platforms = transport_platforms()
    for device, access in _accesses(inventory, devices):
        transport = _transport(device, access)
        entry: dict[str, Any] = {"hostname": access.host, "platform": platforms[transport],
                                 "groups": [f"platform_{device.kind}", f"role_{_group(device.role)}"]}
        if access.port is not None and access.port != DEFAULT_PORT[transport]:
            entry["port"] = access.port
        if access.username is not None:
            entry["username"] = access.username
        data = {f"rocefab_{key}": _plain(value) for key, value in (
            ("ssh_port", access.ssh_port), ("password_env", access.password_env), ("scheme", access.scheme),
            ("verify_tls", access.verify_tls), ("ca_file", access.ca_file),
            ("verify_host_key", access.verify_host_key), ("known_hosts", access.known_hosts),
            ("sudo", access.sudo)) if value is not None}
        if data:
            entry["data"] = data
        hosts[device.name] = entry
    groups = {f"platform_{kind}": {"data": {"rocefab_kind": kind}} for kind in sorted({d.kind for d in devices})}
    groups |= {f"role_{_group(role)}": {"data": {"rocefab_role": role}}
               for role in sorted({d.role for d in devices})}
    d = inventory.defaults
    defaults_data = {f"rocefab_{key}": _plain(value) for key, value in (
        ("password_env", d.password_env), ("keyring_service", d.keyring_service), ("scheme", d.scheme),
        ("verify_tls", d.verify_tls), ("ca_file", d.ca_file), ("verify_host_key", d.verify_host_key),
        ("known_hosts", d.known_hosts), ("timeout_s", d.timeout_s), ("sudo", d.sudo)) if value is not None}
    head = "# Nornir SimpleInventory exported by rocefab; no passwords (rocefab_password_env names the variable)\n"
    return {HOSTS: head + dump_block(hosts), GROUPS: head + dump_block(groups),
            DEFAULTS: head + dump_block({"username": d.username, "data": defaults_data})}


def _plain(value: object) -> object:
    return str(value) if isinstance(value, Path) else value


def ansible_inventory(inventory: Inventory, devices: Sequence[PlannedDevice]) -> str:
    """An Ansible YAML inventory: a group per transport (its connection settings) and per role."""
    d = inventory.defaults
    by_transport: dict[Transport, dict[str, Any]] = {}
    by_role: dict[str, dict[str, Any]] = {}
    for device, access in _accesses(inventory, devices):
        transport = _transport(device, access)
        host: dict[str, Any] = {"ansible_host": access.host}
        port = access.port or DEFAULT_PORT[transport]
        host["ansible_httpapi_port" if transport in HTTPAPI else "ansible_port"] = port
        if access.username is not None:
            host["ansible_user"] = access.username
        if transport in HTTPAPI:
            host["ansible_httpapi_use_ssl"] = (access.scheme or d.scheme) == "https"
            host["ansible_httpapi_validate_certs"] = d.verify_tls if access.verify_tls is None else access.verify_tls
        if transport is Transport.SSH and (d.sudo if access.sudo is None else access.sudo):
            host["ansible_become"] = True
        by_transport.setdefault(transport, {})[device.name] = host
        by_role.setdefault(_group(device.role), {})[device.name] = {}
    children: dict[str, Any] = {
        f"rocefab_{_group(t.value)}": {"vars": ANSIBLE_CONNECTION[t], "hosts": members}
        for t, members in by_transport.items()
    }
    children |= {f"role_{role}": {"hosts": members} for role, members in sorted(by_role.items())}
    head = ("# Ansible inventory exported by rocefab; no passwords: pass --ask-pass or use a vault (rocefab reads "
            f"${d.password_env})\n")
    return head + dump_block({"all": {"vars": {"ansible_user": d.username}, "children": children}})


def anta_inventory(inventory: Inventory, devices: Sequence[PlannedDevice]) -> str:
    """An ANTA inventory (`anta_inventory: hosts:`) of the switches ANTA can test, each tagged with its own name as
    the rendered anta/catalog.yml filters its tests. ANTA reaches eAPI over HTTPS only and takes the username and
    password from its own options (`-u`, `--prompt`, ANTA_USERNAME / ANTA_PASSWORD), so none is written; a device
    reached over plain HTTP or another transport cannot be exported."""
    from rocefab.platforms import unit  # here: the platform units import the renderers

    d = inventory.defaults
    hosts: list[dict[str, Any]] = []
    for device, access in _accesses(inventory, [x for x in devices if unit(x.kind).anta]):
        transport = _transport(device, access)
        if transport is not Transport.EAPI or (access.scheme or d.scheme) != "https":
            raise ExportError(f"{inventory.file}: {device.name}: ANTA reaches EOS over eAPI on HTTPS only, and this "
                              f"device is reached over {transport.value} ({access.scheme or d.scheme})")
        entry: dict[str, Any] = {"name": device.name, "host": access.host}
        if (port := access.port or DEFAULT_PORT[transport]) != 443:
            entry["port"] = port
        entry["tags"] = [device.name, f"role_{_group(device.role)}"]
        if d.verify_tls if access.verify_tls is None else access.verify_tls:
            entry["ssl_params"] = {"verify": True}  # the CA: SSL_CERT_FILE, which ANTA's client honours
        hosts.append(entry)
    head = ("# ANTA inventory exported by rocefab: anta nrfu -i THIS --catalog anta/catalog.yml -u USER --prompt\n"
            f"# no passwords (rocefab reads ${d.password_env}; ANTA reads ANTA_PASSWORD)\n")
    return head + dump_block({"anta_inventory": {"hosts": hosts}})
