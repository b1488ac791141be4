"""The intent's `services` section: the management-plane services every switch runs (NTP, syslog, DNS, SNMP
identity, AAA server addresses, a login banner) and per-platform, per-role raw lines rocefab does not model.

No secret is ever part of an intent or of a rendered file: no TACACS+/RADIUS key, no SNMP community or user,
no NTP authentication key. Where a platform needs one for a service, rocefab renders the non-secret part and a
replace keeps the device's own secret lines (each platform unit's `PRESERVED` prefixes and
`deploy/preserve.py`); where the non-secret part alone cannot be configured (Cumulus NVUE refuses a TACACS+
server without its secret in the same document), the platform renders nothing for it and says so where it
builds its config. Telemetry collectors are not a service here: every switch already serves gNMI dial-in
(the platform units' `gnmi_port`) and collectors dial in to it.

Every string is checked strictly where it is read, because it becomes a config keyword, a quoted NVUE value or
a line of the running config: addresses with `ipaddress` (IPv4, the family of the management network),
host names by the RFC 1123 label rules, free text as printable ASCII with the characters each platform's
syntax gives a meaning refused (see `BANNER_FORBIDDEN`).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import string
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from rocefab.models.base import IntentModel
from rocefab.models.types import Distinct, Ipv4Address

# --- value types ----------------------------------------------------------------------------------------------

# RFC 1123 section 2.1 with RFC 1035's limits: labels of letters, digits and inner hyphens, 1-63 characters,
# the whole name at most 253; a label may start with a digit, but the last one (the top-level domain) may not
# be all digits, or the name would read as an IPv4 address.
_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
HOSTNAME_MAX = 253


def check_hostname(value: str) -> str:
    """A DNS name by the RFC 1123 label rules, lower-cased (DNS compares names without case).

    >>> check_hostname("NTP1.Example.net")
    'ntp1.example.net'
    >>> check_hostname("ntp_1.example.net")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'ntp_1.example.net' is not a host name: label 'ntp_1' may hold only letters, digits and ...
    """
    if not value or len(value) > HOSTNAME_MAX:
        raise ValueError(f"{value!r} is not a host name: 1 to {HOSTNAME_MAX} characters expected")
    labels = value.split(".")
    for label in labels:
        if not _LABEL.match(label):
            raise ValueError(f"{value!r} is not a host name: label {label!r} may hold only letters, digits and "
                             "inner '-' (RFC 1123), up to 63 characters")
    if labels[-1].isdigit():
        raise ValueError(f"{value!r} is not a host name: its last label is all digits (an IPv4 address is written "
                         "as four decimal numbers 0-255)")
    return value.lower()


def check_server(value: str) -> str:
    """An IPv4 address (written as text, in its compressed form) or a host name.

    >>> check_server("192.0.2.10"), check_server("Pool.NTP.org")
    ('192.0.2.10', 'pool.ntp.org')
    >>> check_server("2001:db8::1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: '2001:db8::1' is an IPv6 address; the management network rocefab configures is IPv4, ...
    """
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        if ":" in value:
            raise ValueError(f"{value!r} is neither an IPv4 address nor a host name") from None
        if all(part.isdigit() for part in value.split(".")):
            raise ValueError(f"{value!r} is not a valid IPv4 address") from None
        return check_hostname(value)
    if address.version != 4:
        raise ValueError(f"{value!r} is an IPv6 address; the management network rocefab configures is IPv4, so a "
                         "server must be an IPv4 address or a host name")
    return str(address)


Hostname = Annotated[
    str,
    StringConstraints(max_length=HOSTNAME_MAX),
    AfterValidator(check_hostname),
    Field(description="a DNS name by the RFC 1123 label rules (letters, digits and inner '-' per label, labels "
                      "1-63 characters, at most 253 in all)"),
]
Server = Annotated[
    str,
    StringConstraints(max_length=HOSTNAME_MAX),
    AfterValidator(check_server),
    Field(description="a server reached over the management network: an IPv4 address or an RFC 1123 host name"),
]

# Free text (SNMP location/contact, banner lines) is printable ASCII. Refused besides: '"' and '\\' (NVUE takes
# the text as one double-quoted value; NX-OS's snmp-server location runs to the end of the line but a '"'
# would start a quoted word), '$' and '`' (the nv-set command file is run by a shell), and '^', the delimiter
# rocefab gives NX-OS's `banner motd`, which would end the banner early.
BANNER_FORBIDDEN = frozenset('"\\$`^')
_PRINTABLE = frozenset(string.printable) - frozenset("\t\n\r\x0b\x0c")


def check_free_text(value: str) -> str:
    """One line of printable ASCII without the characters some platform's syntax reads (`BANNER_FORBIDDEN`).

    >>> check_free_text("Row 3, Rack 12")
    'Row 3, Rack 12'
    >>> check_free_text('say "hi"')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: '"' may not appear in this text (a quote, backslash, '$', '`' or '^' means ...
    """
    for char in value:
        if char not in _PRINTABLE:
            raise ValueError(f"expected one line of printable ASCII text; {char!r} is not (got {value!r})")
        if char in BANNER_FORBIDDEN:
            raise ValueError(f"{char!r} may not appear in this text (a quote, backslash, '$', '`' or '^' means "
                             f"something to a platform's config syntax or shell); got {value!r}")
    return value


SnmpText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128),
    AfterValidator(check_free_text),
    Field(description="one line of printable ASCII, 1-128 characters, without '\"', '\\\\', '$', '`' or '^'"),
]

BANNER_LINE_MAX = 80  # a terminal's width
BANNER_LINES_MAX = 20
EOS_BANNER_END = "EOF"  # a line that is exactly this ends an EOS banner


def check_banner_line(value: str) -> str:
    """A banner line: free text that is not the line ending an EOS banner."""
    check_free_text(value)
    if not value:
        raise ValueError("a banner line may not be empty: an NX-OS banner of several lines holds no empty line "
                         "(as Cisco's cisco.nxos.nxos_banner module documents)")
    if value == EOS_BANNER_END:
        raise ValueError(f"a banner line may not be {EOS_BANNER_END!r}: on Arista EOS that line ends the banner")
    return value


BannerLine = Annotated[
    str,
    StringConstraints(max_length=BANNER_LINE_MAX),
    AfterValidator(check_banner_line),
    Field(description=f"one banner line: printable ASCII up to {BANNER_LINE_MAX} characters, without '\"', "
                      f"'\\\\', '$', '`' or '^', not empty and not the line {EOS_BANNER_END!r}"),
]

RAW_LINE_MAX = 240
RAW_LINES_MAX = 200
_PRINTABLE_RAW = re.compile(r"^[\x20-\x7e]*$")


def check_raw_line(value: str) -> str:
    """A raw config line: printable ASCII on one line, not empty."""
    if not value:
        raise ValueError("a raw line may not be empty")
    if not _PRINTABLE_RAW.match(value):
        bad = next(c for c in value if not ("\x20" <= c <= "\x7e"))
        raise ValueError(f"a raw line is one line of printable ASCII; {bad!r} is not (got {value!r})")
    return value


def check_nvue_line(value: str) -> str:
    """A raw Cumulus line: an `nv set` or `nv unset` command (rocefab deploys an NVUE document, so nothing else,
    such as `nv config apply` or a shell command, can take effect), whose words NVUE's own quoting keeps apart.

    >>> check_nvue_line('nv set system message post-login "Welcome"')
    'nv set system message post-login "Welcome"'
    >>> check_nvue_line("sudo reboot")
    Traceback (most recent call last):
    ...
    ValueError: a Cumulus raw line must be an 'nv set ...' or 'nv unset ...' command (got 'sudo reboot')
    """
    check_raw_line(value)
    for char in "$`\\;|&<>'":
        if char in value:
            raise ValueError(f"{char!r} may not appear in a Cumulus raw line: the nv-set file is read by a shell "
                             f"(got {value!r})")
    if value.count('"') % 2:
        raise ValueError(f"a Cumulus raw line has an unbalanced '\"' (got {value!r})")
    words = shlex.split(value)
    if len(words) < 3 or words[0] != "nv" or words[1] not in ("set", "unset"):
        raise ValueError(f"a Cumulus raw line must be an 'nv set ...' or 'nv unset ...' command (got {value!r})")
    if words[1] == "set" and len(words) < 4:
        raise ValueError(f"an 'nv set' raw line needs a path and a value, e.g. 'nv set system hostname x' (got "
                         f"{value!r})")
    return value


RawLine = Annotated[
    str,
    StringConstraints(max_length=RAW_LINE_MAX),
    AfterValidator(check_raw_line),
    Field(description=f"one config line as the device takes it: printable ASCII, 1-{RAW_LINE_MAX} characters"),
]
NvueLine = Annotated[
    str,
    StringConstraints(max_length=RAW_LINE_MAX),
    AfterValidator(check_nvue_line),
    Field(description="one `nv set ...` or `nv unset ...` command, printable ASCII up to "
                      f"{RAW_LINE_MAX} characters, words quoted with '\"' where they hold spaces"),
]

# --- sections -------------------------------------------------------------------------------------------------


class Ntp(IntentModel):
    """Time servers, queried over the management network."""

    servers: Annotated[tuple[Server, ...], Distinct] = Field(
        min_length=1, max_length=8, description="NTP servers, in order of preference (the first one is preferred)")


class Syslog(IntentModel):
    """Remote syslog collectors (UDP 514, the platforms' default)."""

    servers: Annotated[tuple[Server, ...], Distinct] = Field(
        min_length=1, max_length=8, description="syslog collectors every switch logs to")


class Dns(IntentModel):
    """Name resolution for the switches themselves (NTP and syslog servers given by name need it)."""

    servers: Annotated[tuple[Ipv4Address, ...], Distinct] = Field(
        min_length=1, max_length=3, description="DNS resolvers (IPv4), in order; three is what every platform takes")
    domain: Hostname | None = Field(None, description="the switches' own domain name")
    search: Annotated[tuple[Hostname, ...], Distinct] = Field(
        (), max_length=6, description="further domains tried for a short name, in order")


class Snmp(IntentModel):
    """The switch's SNMP identity. Communities and SNMPv3 users are secrets and stay on the device: a replace
    keeps the device's own `snmp-server` lines other than location and contact."""

    location: SnmpText | None = Field(None, description="sysLocation, e.g. the site and row")
    contact: SnmpText | None = Field(None, description="sysContact, e.g. the operations team's address")


class Aaa(IntentModel):
    """Addresses of the TACACS+ and RADIUS servers. Their shared keys are secrets: they stay on the device (a
    replace keeps its own key lines), and no `aaa authentication` method list is rendered, so a missing key
    never locks the operator out."""

    tacacs_servers: Annotated[tuple[Ipv4Address, ...], Distinct] = Field(
        (), max_length=8, description="TACACS+ servers (IPv4), in order of use")
    radius_servers: Annotated[tuple[Ipv4Address, ...], Distinct] = Field(
        (), max_length=8, description="RADIUS servers (IPv4), in order of use")


class RawByRole(IntentModel):
    """Lines for one platform, by the role of the switch in the plan."""

    leaf: tuple[RawLine, ...] = Field((), max_length=RAW_LINES_MAX, description="lines for every leaf")
    spine: tuple[RawLine, ...] = Field((), max_length=RAW_LINES_MAX, description="lines for every spine")
    superspine: tuple[RawLine, ...] = Field((), max_length=RAW_LINES_MAX, description="lines for every super-spine")


class NvueByRole(IntentModel):
    """`nv set` / `nv unset` lines for Cumulus switches, by the role of the switch in the plan."""

    leaf: tuple[NvueLine, ...] = Field((), max_length=RAW_LINES_MAX, description="lines for every leaf")
    spine: tuple[NvueLine, ...] = Field((), max_length=RAW_LINES_MAX, description="lines for every spine")
    superspine: tuple[NvueLine, ...] = Field((), max_length=RAW_LINES_MAX, description="lines for every super-spine")


class Raw(IntentModel):
    """Config lines rocefab does not model, printed as given at one place per platform: EOS and NX-OS at the end
    of the running config (EOS before its `end`), Cumulus applied to the NVUE document after everything
    rocefab sets. rocefab does not check what they mean; the device does when they are applied."""

    eos: RawByRole = Field(RawByRole(), description="Arista EOS running-config lines, indented as EOS prints them")
    nxos: RawByRole = Field(RawByRole(), description="Cisco NX-OS running-config lines, indented as NX-OS prints "
                                                     "them")
    cumulus: NvueByRole = Field(NvueByRole(), description="Cumulus Linux NVUE commands")


class Services(IntentModel):
    """Management-plane services of every switch, in the VRF its management address lives in (the default VRF
    when the intent has no management section). GPU hosts get none of this."""

    ntp: Ntp | None = Field(None, description="time servers")
    syslog: Syslog | None = Field(None, description="remote syslog collectors")
    dns: Dns | None = Field(None, description="name resolution")
    snmp: Snmp | None = Field(None, description="SNMP identity (location, contact); no communities")
    aaa: Aaa | None = Field(None, description="TACACS+ and RADIUS server addresses; no keys")
    banner: tuple[BannerLine, ...] = Field(
        (), max_length=BANNER_LINES_MAX,
        description=f"login banner, one entry per line, at most {BANNER_LINES_MAX} lines")
    raw: Raw = Field(Raw(), description="lines rocefab does not model, per platform and role")
