"""The intent's `services` section as the plan carries it (`FabricPlan.services`): plain records the platform
config builders read, with nothing left to decide but each platform's spelling.

The management VRF a service runs in is the platform's, not the intent's: each builder puts the services in the
VRF its management address lives in (the default VRF when the intent has no management section).
"""

from __future__ import annotations

from rocefab.models.services import Services
from rocefab.renderers.record import record


@record
class RawLines:
    """Lines rocefab does not model, per role of the switch in the plan (models/resolve.Role values)."""

    leaf: tuple[str, ...] = ()
    spine: tuple[str, ...] = ()
    superspine: tuple[str, ...] = ()

    def for_role(self, role: str) -> tuple[str, ...]:
        lines: tuple[str, ...] = getattr(self, role)
        return lines


@record
class SiteServices:
    ntp_servers: tuple[str, ...]  # the first is preferred
    syslog_servers: tuple[str, ...]
    dns_servers: tuple[str, ...]
    dns_domain: str | None
    dns_search: tuple[str, ...]
    snmp_location: str | None
    snmp_contact: str | None
    tacacs_servers: tuple[str, ...]
    radius_servers: tuple[str, ...]
    banner: tuple[str, ...]
    raw_eos: RawLines
    raw_nxos: RawLines
    raw_cumulus: RawLines

    def raw(self, platform: str, role: str) -> tuple[str, ...]:
        """The raw lines of one platform (eos, nxos, cumulus) for one role; none for any other platform."""
        lines: RawLines | None = getattr(self, f"raw_{platform}", None)
        return lines.for_role(role) if lines is not None else ()


def site_services(services: Services | None) -> SiteServices | None:
    if services is None:
        return None
    dns, snmp, aaa, raw = services.dns, services.snmp, services.aaa, services.raw
    return SiteServices(
        ntp_servers=services.ntp.servers if services.ntp else (),
        syslog_servers=services.syslog.servers if services.syslog else (),
        dns_servers=tuple(str(a) for a in dns.servers) if dns else (),
        dns_domain=dns.domain if dns else None,
        dns_search=dns.search if dns else (),
        snmp_location=snmp.location if snmp else None,
        snmp_contact=snmp.contact if snmp else None,
        tacacs_servers=tuple(str(a) for a in aaa.tacacs_servers) if aaa else (),
        radius_servers=tuple(str(a) for a in aaa.radius_servers) if aaa else (),
        banner=services.banner,
        raw_eos=RawLines(raw.eos.leaf, raw.eos.spine, raw.eos.superspine),
        raw_nxos=RawLines(raw.nxos.leaf, raw.nxos.spine, raw.nxos.superspine),
        raw_cumulus=RawLines(raw.cumulus.leaf, raw.cumulus.spine, raw.cumulus.superspine),
    )
