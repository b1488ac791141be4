"""Inventory: how to reach each device of a plan. Addresses and transports only; never a secret.

Credentials come from the environment (a variable named in the inventory), a keyring, or a prompt, and are
held in `Secret`s that print as `***`.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field, StrictBool, StrictInt

from rocefab.models.base import IntentModel
from rocefab.models.loader import parse_yaml, validate_data
from rocefab.models.sourcemap import read_source
from rocefab.models.types import DeviceName, EnvName, HostAddress, LoginName, Text
from rocefab.platforms import unit


class Secret:
    """A credential that never shows itself in logs, reprs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


class Transport(StrEnum):
    EAPI = "eapi"  # Arista eAPI (JSON-RPC over HTTPS), NAPALM eos
    NXAPI = "nxapi"  # Cisco NX-API, NAPALM nxos (SSH+SCP for full replaces)
    NXOS_SSH = "nxos-ssh"  # Cisco CLI over SSH, NAPALM nxos_ssh
    NVUE_SSH = "nvue-ssh"  # Cumulus `nv` over SSH + SFTP
    SSH = "ssh"  # Linux host: SFTP upload and exec


DEFAULT_PORT = {Transport.EAPI: 443, Transport.NXAPI: 443, Transport.NXOS_SSH: 22, Transport.NVUE_SSH: 22,
                Transport.SSH: 22}


class Defaults(IntentModel):
    username: LoginName = "admin"
    password_env: EnvName = Field("ROCEFAB_PASSWORD", description="environment variable holding the password")
    password_file: Path | None = Field(
        None, description="a file (readable by you only) holding the password, e.g. the local lab's"
    )
    keyring_service: Text | None = Field(None, description="look the password up in this keyring service")
    scheme: Literal["https", "http"] = Field("https", description="http is an explicit, insecure opt-out")
    verify_tls: StrictBool = True
    ca_file: Path | None = Field(None, description="CA bundle that signs the devices' API certificates")
    verify_host_key: StrictBool = True
    known_hosts: Path = Field(Path("~/.ssh/known_hosts"), description="SSH host keys to trust")
    timeout_s: StrictInt = Field(30, ge=1, le=600)
    sudo: StrictBool = Field(False, description="hosts: run the script with `sudo -n` (passwordless sudo)")


class DeviceAccess(IntentModel):
    host: HostAddress
    transport: Transport | None = None
    port: StrictInt | None = Field(None, ge=1, le=65535)
    ssh_port: StrictInt | None = Field(None, ge=1, le=65535, description="NX-OS: SSH/SCP for full replaces")
    username: LoginName | None = None
    password_env: EnvName | None = None
    scheme: Literal["https", "http"] | None = None
    verify_tls: StrictBool | None = None
    ca_file: Path | None = None
    verify_host_key: StrictBool | None = None
    known_hosts: Path | None = None
    sudo: StrictBool | None = None


class InventoryFile(IntentModel):
    defaults: Defaults = Defaults()
    devices: dict[DeviceName, DeviceAccess]


@dataclass(frozen=True)
class Access:
    """Everything a session needs to reach one device, resolved from defaults and overrides."""

    name: str
    kind: str  # eos, nxos, cumulus or host
    host: str
    transport: Transport
    port: int
    ssh_port: int
    username: str
    password: Secret
    scheme: str
    verify_tls: bool
    ca_file: Path | None
    verify_host_key: bool
    known_hosts: Path
    timeout_s: int
    sudo: bool


@dataclass(frozen=True)
class Inventory:
    file: str
    defaults: Defaults
    devices: dict[DeviceName, DeviceAccess]

    def access(self, name: str, kind: str, passwords: PasswordSource) -> Access:
        d, device = self.defaults, self.devices[name]
        offered = unit(kind).transports
        transport = device.transport or Transport(offered[0])
        if transport.value not in offered:
            raise CredentialError(f"{name}: a {unit(kind).display_name} device is reached over "
                                  f"{' or '.join(offered)}, not {transport.value}")
        username = device.username or d.username
        return Access(
            name=name,
            kind=kind,
            host=device.host,
            transport=transport,
            port=device.port or DEFAULT_PORT[transport],
            ssh_port=device.ssh_port or 22,
            username=username,
            password=passwords.get(device.password_env or d.password_env, username, d.keyring_service,
                                   d.password_file),
            scheme=device.scheme or d.scheme,
            verify_tls=d.verify_tls if device.verify_tls is None else device.verify_tls,
            ca_file=device.ca_file or d.ca_file,
            verify_host_key=d.verify_host_key if device.verify_host_key is None else device.verify_host_key,
            known_hosts=(device.known_hosts or d.known_hosts).expanduser(),
            timeout_s=d.timeout_s,
            sudo=d.sudo if device.sudo is None else device.sudo,
        )


class CredentialError(Exception):
    pass


class PasswordSource:
    """Resolves passwords once per source: environment variable, then keyring, then an interactive prompt."""

    def __init__(self, interactive: bool | None = None) -> None:
        self._cache: dict[tuple[str, str], Secret] = {}
        self._interactive = sys.stdin.isatty() if interactive is None else interactive

    def get(self, env: str, username: str, keyring_service: str | None = None,
            password_file: Path | None = None) -> Secret:
        key = (env, username)
        if key not in self._cache:
            self._cache[key] = self._lookup(env, username, keyring_service, password_file)
        return self._cache[key]

    def _lookup(self, env: str, username: str, keyring_service: str | None, password_file: Path | None) -> Secret:
        value = os.environ.get(env)
        if value:
            return Secret(value)
        if password_file is not None:
            path = password_file.expanduser()
            try:
                if path.stat().st_mode & 0o077:
                    raise CredentialError(f"{path} is readable by others; chmod 600 it")
                return Secret(path.read_text(encoding="utf-8").strip())
            except OSError as exc:
                raise CredentialError(f"cannot read the password file {path}: {exc.strerror}") from None
        if keyring_service:
            try:
                import keyring  # type: ignore[import-not-found]
            except ImportError:
                pass
            else:
                stored = keyring.get_password(keyring_service, username)
                if stored:
                    return Secret(stored)
        if self._interactive:
            return Secret(getpass.getpass(f"password for {username} (or set {env}): "))
        raise CredentialError(f"no password for {username}: set the environment variable {env}")


def load_inventory(file: str | Path) -> Inventory:
    """rocefab's inventory format, or a Nornir SimpleInventory (a folder holding hosts.yaml, or the file)."""
    from rocefab.deploy.nornir_inventory import is_nornir, load_nornir

    if is_nornir(Path(file)):
        return load_nornir(Path(file))
    shown = str(file)
    _, text = read_source(file, shown)  # the same bounds as an intent's
    data, source = parse_yaml(text, shown)
    # A `password:` key is refused like any unknown key: credentials never live in files rocefab reads.
    model = validate_data(data, source, InventoryFile)
    return Inventory(shown, model.defaults, model.devices)
