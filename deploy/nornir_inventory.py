"""A Nornir SimpleInventory (hosts.yaml, groups.yaml, defaults.yaml) as an inventory rocefab reads, and the
other way round.

Nornir resolves a host's attribute from the host, then its groups in order (each group's own groups after
it, depth first), then the defaults; `data` merges key by key the same way. rocefab reads the attributes it
needs — hostname, port, username, platform — and its own settings from `data` keys named `rocefab_…`
(transport, ssh_port, password_env, scheme, verify_tls, ca_file, verify_host_key, known_hosts, sudo), so an
export reads back to the same inventory. `connection_options` and other `data` keys belong to the site's
Nornir tasks and are left alone. A password anywhere is refused, as in rocefab's own format.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StringConstraints

from rocefab.deploy.inventory import DEFAULT_PORT, Defaults, DeviceAccess, Inventory, Transport
from rocefab.models.base import IntentModel
from rocefab.models.loader import parse_yaml, validate_data
from rocefab.models.sourcemap import IntentLoadError, LoadError, Position, SourceMap, read_source
from rocefab.models.types import DeviceName, EnvName, HostAddress, LoginName, Text

HOSTS, GROUPS, DEFAULTS = "hosts.yaml", "groups.yaml", "defaults.yaml"



def platform_transports() -> dict[str, Transport]:
    """Nornir's `platform` (a NAPALM driver or a netmiko device type) -> the transport rocefab uses for it, from
    every platform unit."""
    from rocefab.platforms import UNITS

    return {name: Transport(transport) for u in UNITS.values() for name, transport in u.nornir_platforms}


def transport_platforms() -> dict[Transport, str]:
    """What an export writes as `platform` for each transport: the first name its unit gives."""
    chosen: dict[Transport, str] = {}
    for name, transport in platform_transports().items():
        chosen.setdefault(transport, name)
    return chosen


GroupName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$"),
                      Field(description="a Nornir group name: letters, digits, '_', '.' and '-', up to 64")]


class RocefabData(IntentModel):
    """A Nornir `data` mapping: rocefab's keys checked, the site's own keys passed over."""

    model_config = ConfigDict(frozen=True, extra="allow", str_strip_whitespace=True, str_max_length=1024)

    rocefab_transport: Transport | None = Field(None, description="overrides the transport `platform` implies")
    rocefab_ssh_port: StrictInt | None = Field(None, ge=1, le=65535, description="NX-OS: SSH/SCP port")
    rocefab_password_env: EnvName | None = Field(None, description="environment variable holding the password")
    rocefab_scheme: Literal["https", "http"] | None = Field(None, description="eAPI / NX-API scheme")
    rocefab_verify_tls: StrictBool | None = Field(None, description="check the device's API certificate")
    rocefab_ca_file: Path | None = Field(None, description="CA bundle for the devices' API certificates")
    rocefab_verify_host_key: StrictBool | None = Field(None, description="check SSH host keys")
    rocefab_known_hosts: Path | None = Field(None, description="SSH host keys to trust")
    rocefab_sudo: StrictBool | None = Field(None, description="hosts: run the script with `sudo -n`")
    rocefab_keyring_service: Text | None = Field(None, description="defaults only: keyring service")
    rocefab_timeout_s: StrictInt | None = Field(None, ge=1, le=600, description="defaults only: timeout")


class _Element(IntentModel):
    hostname: HostAddress | None = Field(None, description="address or DNS name to connect to")
    port: StrictInt | None = Field(None, ge=1, le=65535, description="the transport's port")
    username: LoginName | None = Field(None, description="login name")
    platform: str | None = Field(None, max_length=64, description="NAPALM driver or netmiko device type")
    data: RocefabData = Field(RocefabData(), description="free data; rocefab reads its rocefab_* keys")
    connection_options: dict[str, Any] = Field({}, description="the site's connection plugin options; unread")


class NornirGroup(_Element):
    groups: tuple[GroupName, ...] = Field((), description="parent groups, in order")


class NornirHost(NornirGroup):
    pass


class NornirHosts(IntentModel):
    hosts: dict[DeviceName, NornirHost]


class NornirGroups(IntentModel):
    groups: dict[GroupName, NornirGroup]


def is_nornir(path: Path) -> bool:
    """A folder holding hosts.yaml, or a hosts.yaml / hosts.yml itself."""
    return (path.is_dir() and (path / HOSTS).is_file()) or path.name in (HOSTS, "hosts.yml")


def _load(path: Path, model: type[IntentModel], key: str) -> tuple[Any, SourceMap]:
    """Validate one of Nornir's files, whose top level is a mapping of names (or, for defaults, the
    element itself), under `key` of `model`; errors keep the file's own positions and paths."""
    _, text = read_source(path, str(path))
    data, source = parse_yaml(text, str(path))
    wrapped = SourceMap(source.file, {(key, *p): pos for p, pos in source.positions.items()} | {(): Position(1, 1)})
    try:
        validated = getattr(validate_data({key: {} if data is None else data}, wrapped, model), key)
    except IntentLoadError as exc:
        raise IntentLoadError([LoadError(e.file, e.position, e.path[1:], e.message) for e in exc.errors]) from None
    return validated, source


class NornirDefaults(IntentModel):
    defaults: _Element


def _chain(name: str, own: tuple[str, ...], groups: Mapping[str, NornirGroup], source: SourceMap,
           seen: tuple[str, ...] = ()) -> Iterator[NornirGroup]:
    for group in own:
        where = (name, "groups")
        if group in seen:
            raise IntentLoadError([LoadError(source.file, source.locate(where), where,
                                             f"group {group!r} includes itself")])
        if group not in groups:
            raise IntentLoadError([LoadError(source.file, source.locate(where), where,
                                             f"no group {group!r} in {GROUPS}")])
        yield groups[group]
        yield from _chain(name, groups[group].groups, groups, source, (*seen, group))


def load_nornir(path: Path) -> Inventory:
    folder = path if path.is_dir() else path.parent
    hosts_file = path if not path.is_dir() else path / HOSTS
    hosts, source = _load(hosts_file, NornirHosts, "hosts")
    groups = _load(folder / GROUPS, NornirGroups, "groups")[0] if (folder / GROUPS).is_file() else {}
    defaults = _load(folder / DEFAULTS, NornirDefaults, "defaults")[0] if (folder / DEFAULTS).is_file() \
        else _Element()
    return _as_inventory(source, hosts, groups, defaults)


def _as_inventory(source: SourceMap, hosts: dict[str, NornirHost], groups: dict[str, NornirGroup],
                  defaults: _Element) -> Inventory:
    d = defaults.data
    base = Defaults(
        username=defaults.username or "admin",
        password_env=d.rocefab_password_env or "ROCEFAB_PASSWORD",
        keyring_service=d.rocefab_keyring_service,
        scheme=d.rocefab_scheme or "https",
        verify_tls=True if d.rocefab_verify_tls is None else d.rocefab_verify_tls,
        ca_file=d.rocefab_ca_file,
        verify_host_key=True if d.rocefab_verify_host_key is None else d.rocefab_verify_host_key,
        known_hosts=d.rocefab_known_hosts or Path("~/.ssh/known_hosts"),
        timeout_s=d.rocefab_timeout_s or 30,
        sudo=bool(d.rocefab_sudo),
    )
    devices: dict[str, DeviceAccess] = {}
    errors: list[LoadError] = []
    for name, host in hosts.items():
        # host, its groups depth first, then the defaults; the defaults' rocefab_* keys are already in `base`
        chain: list[_Element] = [host, *_chain(name, host.groups, groups, source)]

        def first(attr: str, chain: list[_Element] = chain) -> Any:
            return next((v for e in chain if (v := getattr(e, attr)) is not None), None)

        def datum(key: str, chain: list[_Element] = chain) -> Any:
            return next((v for e in chain if (v := getattr(e.data, key)) is not None), None)

        hostname = first("hostname") or defaults.hostname or name
        platform = first("platform") or defaults.platform
        transport = datum("rocefab_transport")
        if transport is None:
            known = platform_transports()
            if platform not in known:
                shown = "no platform" if platform is None else f"platform {platform!r}"
                where = (name, "platform")
                errors.append(LoadError(source.file, source.locate(where), where,
                                        f"{shown} and no data.rocefab_transport; rocefab knows the platforms "
                                        f"{', '.join(sorted(known))}"))
                continue
            transport = known[platform]
        port = first("port") or defaults.port
        devices[name] = DeviceAccess(
            host=hostname, transport=transport,
            port=None if port == DEFAULT_PORT[transport] else port,
            ssh_port=datum("rocefab_ssh_port"), username=first("username"),
            password_env=datum("rocefab_password_env"), scheme=datum("rocefab_scheme"),
            verify_tls=datum("rocefab_verify_tls"), ca_file=datum("rocefab_ca_file"),
            verify_host_key=datum("rocefab_verify_host_key"), known_hosts=datum("rocefab_known_hosts"),
            sudo=datum("rocefab_sudo"),
        )
    if errors:
        raise IntentLoadError(errors)
    return Inventory(source.file, base, devices)
