"""Cisco NX-OS: the intent's services section as NX-OS lines (templates/nxos/services.j2 at the end of the config;
the resolver lines inside `vrf context management`, templates/nxos/vrf-management.j2).

With a management section every service uses VRF `management`, where mgmt0 lives; without one, the default VRF.
Syntax (NX-OS 10.x):
- `ntp server <host> [prefer] [use-vrf <vrf>]` (Nexus 9000 System Management guide, "Configuring NTP"; cisco.nxos
  Ansible ntp_global module: prefer, use-vrf),
- `logging server <host> <severity> [use-vrf <vrf>]`: the severity is positional before use-vrf; 5
  (notifications) is written out (System Management guide, "Configuring System Message Logging").
  TODO(confirm on 10.5): that the running config prints a server added without a severity as `... 5 use-vrf ...`.
- resolvers: `ip domain-name`, `ip domain-list`, `ip name-server <a> [<b> ...]` inside `vrf context management`
  (Unicast Routing guide, "DNS clients" per VRF), or at top level without a management VRF,
- `snmp-server location|contact <text>`,
- TACACS+: `feature tacacs+`, `tacacs-server host <address>`, and a server group `aaa group server tacacs+
  ROCEFAB-TACACS` with `server <address>` and `use-vrf <vrf>` (Security guide, "Configuring TACACS+": a group is
  how NX-OS picks the VRF); RADIUS the same without a feature (`aaa group server radius ROCEFAB-RADIUS`). Keys
  (`tacacs-server key 7 ...`, `radius-server key 7 ...`) stay on the device: a replace carries them (PRESERVED).
  No `aaa authentication` method list is rendered, so nothing starts depending on a server that has no key.
- `banner motd ^<text>^`, the text running over several lines; `^` is refused in the intent's banner.
  TODO(confirm on 10.5): how `show running-config` prints a banner of several lines.
"""

from __future__ import annotations

from rocefab.renderers.record import record
from rocefab.renderers.services import SiteServices

TACACS_GROUP = "ROCEFAB-TACACS"
RADIUS_GROUP = "ROCEFAB-RADIUS"
SYSLOG_SEVERITY = 5  # notifications
BANNER_DELIMITER = "^"  # models/services.py refuses it in banner text


@record
class NtpServer:
    host: str
    prefer: bool


@record
class NxosServices:
    vrf: str | None  # `management`, or None for the default VRF
    ntp_servers: tuple[NtpServer, ...]
    syslog_servers: tuple[str, ...]
    syslog_severity: int
    name_servers: tuple[str, ...]
    domain_name: str | None
    domain_list: tuple[str, ...]
    snmp_location: str | None
    snmp_contact: str | None
    tacacs_servers: tuple[str, ...]
    tacacs_group: str
    radius_servers: tuple[str, ...]
    radius_group: str
    banner: tuple[str, ...]  # the banner's lines, the delimiter already around them
    resolvers_in_vrf: bool  # resolver lines go inside `vrf context <vrf>`


def _delimited(lines: tuple[str, ...]) -> tuple[str, ...]:
    """`banner motd ^first` ... `last^` as the lines the config holds.

    >>> _delimited(("one",)), _delimited(("one", "two"))
    (('banner motd ^one^',), ('banner motd ^one', 'two^'))
    """
    if not lines:
        return ()
    text = [*lines]
    text[0] = f"banner motd {BANNER_DELIMITER}{text[0]}"
    text[-1] = f"{text[-1]}{BANNER_DELIMITER}"
    return tuple(text)


def build_services(services: SiteServices | None, vrf: str | None) -> NxosServices | None:
    if services is None:
        return None
    return NxosServices(
        vrf=vrf,
        ntp_servers=tuple(NtpServer(h, i == 0) for i, h in enumerate(services.ntp_servers)),
        syslog_servers=services.syslog_servers, syslog_severity=SYSLOG_SEVERITY,
        name_servers=services.dns_servers, domain_name=services.dns_domain, domain_list=services.dns_search,
        snmp_location=services.snmp_location, snmp_contact=services.snmp_contact,
        tacacs_servers=services.tacacs_servers, tacacs_group=TACACS_GROUP,
        radius_servers=services.radius_servers, radius_group=RADIUS_GROUP,
        banner=_delimited(services.banner), resolvers_in_vrf=vrf is not None,
    )
