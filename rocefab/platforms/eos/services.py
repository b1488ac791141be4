"""Arista EOS: the intent's services section as EOS lines (templates/eos/services.j2 prints them, just before the
raw lines and `end`).

Every service runs in the VRF the management address lives in (`MGMT`, the default VRF without a management
section). Syntax, EOS 4.3x (Arista AVD's eos_cli_config_gen templates print the same lines; arista.eos Ansible
resource modules parse them back):
- `ntp server [vrf <vrf>] <host> [prefer] [iburst]` (AVD ntp.j2; EOS 4.34 System Configuration guide, "NTP"),
- `logging [vrf <vrf>] host <host>` (arista.eos logging_global parser),
- `ip name-server [vrf <vrf>] <address>`, `dns domain <name>`, `ip domain-list <name>` (AVD ip-name-servers.j2,
  dns-domain.j2, domain-list.j2),
- `snmp-server location|contact <text>`: the rest of the line is the text,
- `tacacs-server host <address> [vrf <vrf>]`, `radius-server host <address> [vrf <vrf>]` (AVD tacacs-servers.j2,
  radius-server.j2): the shared key is a secret and stays on the device as `tacacs-server key ...` /
  `radius-server key ...`, which a replace carries (PRESERVED). A key written on the host line itself
  (`... key 7 <hash>`) would be replaced by rocefab's line without it: keep keys global.
- `banner motd`, then the text, then a line `EOF` (AVD banners.j2; the intent refuses a line `EOF`).
No `aaa authentication` method list is rendered: the device's own `aaa` lines stay, so a server without its key
never locks anyone out.
"""

from __future__ import annotations

from rocefab.renderers.record import record
from rocefab.renderers.services import SiteServices


@record
class NtpServer:
    host: str
    prefer: bool


@record
class EosServices:
    vrf: str | None  # None: the default VRF (EOS omits `vrf default`)
    ntp_servers: tuple[NtpServer, ...]
    syslog_servers: tuple[str, ...]
    name_servers: tuple[str, ...]
    dns_domain: str | None
    domain_list: tuple[str, ...]
    snmp_location: str | None
    snmp_contact: str | None
    tacacs_servers: tuple[str, ...]
    radius_servers: tuple[str, ...]
    banner: tuple[str, ...]


def build_services(services: SiteServices | None, vrf: str | None) -> EosServices | None:
    if services is None:
        return None
    return EosServices(
        vrf=vrf,
        ntp_servers=tuple(NtpServer(h, i == 0) for i, h in enumerate(services.ntp_servers)),
        syslog_servers=services.syslog_servers,
        name_servers=services.dns_servers,
        dns_domain=services.dns_domain,
        domain_list=services.dns_search,
        snmp_location=services.snmp_location,
        snmp_contact=services.snmp_contact,
        tacacs_servers=services.tacacs_servers,
        radius_servers=services.radius_servers,
        banner=services.banner,
    )
