"""The value types every intent field is built from: what a string may hold, what counts as a number.

Every string of an intent ends up somewhere that gives characters meaning: a device name becomes a file
name and a config keyword, an interface name an argument of a root shell script, a variable an `export`
line. So no field takes free text: each string type here says what it may hold, in the terms of the place it
reaches, and the few that stay free (descriptions) are one line of printable text that the printers quote.
Numbers are as strict: YAML already gives real integers, so a float (`400.0`) or a boolean (`true`, which
Python counts as 1) is refused rather than coerced, and addresses are written as text, never as integers.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Hashable, Sequence
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BeforeValidator, Field, StrictInt, StringConstraints

T = TypeVar("T", bound=Hashable)

# --- names --------------------------------------------------------------------------------------------------

DEVICE_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
DeviceName = Annotated[
    str,
    StringConstraints(pattern=DEVICE_NAME_PATTERN),
    Field(description="a lower-case host name: letters, digits and inner '-', up to 63"),
]
# A Linux interface name is at most 15 bytes and may not hold '/', whitespace or ':'; rocefab asks for less
# still: the characters every NOS, shell and NCCL take without quoting.
NETDEV_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$"
NetdevName = Annotated[
    str,
    StringConstraints(pattern=NETDEV_PATTERN),
    Field(description="a Linux interface name: letters, digits, '_', '.' and '-', up to 15"),
]
PortName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9/.-]{0,31}$"),
    Field(description="a switch port as the plan names it, e.g. Ethernet1/1, Ethernet47/1 or swp1s0"),
]
RdmaDeviceName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_]{1,64}$"),
    Field(description="an RDMA device name as `rdma link show` lists it, e.g. mlx5_0 or mlx5_bond_0"),
]
VlanName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,32}$"),
    Field(description="a VLAN name: letters, digits, '_' and '-', up to 32"),
]


def _catalogue_enum(schema: dict[str, Any]) -> None:
    """The JSON schema of a model name lists the catalogue's models, so an editor offers them and flags an unknown
    one. Validation stays the catalogue lookup (case-insensitive, vendor prefix optional, with a did-you-mean
    message); the catalogue is imported here, at schema time, because it imports the platform units."""
    from rocefab.models.catalogue import MODELS

    schema["enum"] = sorted(MODELS)


ModelName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"),
    Field(description="a switch model as the catalogue lists it, e.g. SN5600", json_schema_extra=_catalogue_enum),
]
# NCCL_SOCKET_IFNAME: a comma-separated list of interface names, optionally '^' (exclude) then '=' (exact).
NCCL_IFNAME_PATTERN = rf"^\^?=?{NETDEV_PATTERN[1:-1]}(,{NETDEV_PATTERN[1:-1]})*$"
NcclIfname = Annotated[
    str,
    StringConstraints(pattern=NCCL_IFNAME_PATTERN),
    Field(description="a NCCL_SOCKET_IFNAME value: interface names separated by ',', with an optional leading '^' "
                      "(exclude) and '=' (exact match; otherwise each name is a prefix)"),
]
NcclVariable = Annotated[
    str, StringConstraints(pattern=r"^NCCL_[A-Z0-9_]{1,64}$"), Field(description="an NCCL_* variable name in capitals")
]
# Environment values are written into a shell `export` (quoted) and into /etc/nccl.conf, one per line.
NcclValue = Annotated[
    str,
    StringConstraints(pattern=r"^[\x20-\x7e]{0,256}$"),
    Field(description="printable ASCII text of at most 256 characters"),
]


def _one_printable_line(value: str) -> str:
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        raise ValueError(f"expected one line of printable text; {bad!r} is not (got {value!r})")
    return value


Text = Annotated[
    str,
    StringConstraints(max_length=200),
    AfterValidator(_one_printable_line),
    Field(description="one line of printable text, at most 200 characters"),
]

# A management address as an inventory gives it: an IPv4/IPv6 address or a DNS name (it is written into
# an ssh_config file and a URL, so nothing else may ride along).
HostAddress = Annotated[
    str,
    StringConstraints(pattern=r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                              r"[A-Za-z0-9])?)*|\[?[0-9A-Fa-f:.]{2,45}\]?)$", max_length=253),
    Field(description="a management address: an IPv4 or IPv6 address, or a DNS name"),
]
LoginName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$"),
    Field(description="a login name: letters, digits, '_', '.' and '-', up to 32"),
]
EnvName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"),
    Field(description="an environment variable name"),
]

# --- name formats -------------------------------------------------------------------------------------------

MAX_COUNTER_DIGITS = 5  # n never passes 65,536 (the most nodes a sized intent may ask for)
_SPEC = frozenset({"", "d"} | {f"{zero}{width}{kind}" for zero in ("", "0") for width in "123456789"
                                for kind in ("", "d")})
_NAME_LITERAL = frozenset(string.ascii_lowercase + string.digits + "-")


def check_name_format(fmt: str) -> str:
    """A `name_format` yields valid device names for every n: literal text of lower-case letters, digits and
    '-', and `{n}` fields with at most a zero-padded width.

    >>> check_name_format("gpu{n:03d}")
    'gpu{n:03d}'
    >>> check_name_format("gpu{n[0]}")
    Traceback (most recent call last):
    ...
    ValueError: 'gpu{n[0]}' may use only {n}, {n:d} or a width such as {n:03d}; '{n[0]}' is not one of those
    """
    try:
        parts = list(string.Formatter().parse(fmt))
    except ValueError as exc:
        raise ValueError(f"{fmt!r} is not a valid name format: {exc}") from None
    length, fields = 0, 0
    for literal, name, spec, conversion in parts:
        odd = sorted(set(literal) - _NAME_LITERAL)
        if odd:
            raise ValueError(f"{fmt!r} holds {''.join(odd)!r}; names are lower-case letters, digits and '-'")
        length += len(literal)
        if name is None:
            continue
        if name != "n" or conversion is not None or spec not in _SPEC:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ValueError(f"{fmt!r} may use only {{n}}, {{n:d}} or a width such as {{n:03d}}; "
                             f"{shown!r} is not one of those")
        fields += 1
        width = int(spec.rstrip("d") or 0)
        length += max(width, MAX_COUNTER_DIGITS)
    if fields == 0:
        raise ValueError(f"{fmt!r} has no {{n}}: every device would get the same name")
    sample = fmt.format(n=1)
    if sample.startswith("-") or sample.endswith("-"):
        raise ValueError(f"{fmt!r} gives {sample!r}; a name may not start or end with '-'")
    if length > 63:
        raise ValueError(f"{fmt!r} can give names of {length} characters; at most 63 are allowed")
    return fmt


NameFormat = Annotated[
    str,
    StringConstraints(max_length=63),
    AfterValidator(check_name_format),
    Field(description="Python format string with {n} (counts from 1), e.g. gpu{n:03d}; the names it gives "
                      "must be lower-case letters, digits and '-'"),
]

# --- numbers and addresses ----------------------------------------------------------------------------------


def _whole_number(allowed: Sequence[object] | None = None) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if allowed is not None and isinstance(value, str) and value in allowed:
            return value
        choice = f"one of {', '.join(map(str, allowed))}" if allowed else "a whole number"
        raise ValueError(f"expected {choice} (got {value!r})")
    return check


SpeedGbps = Annotated[
    Literal[10, 25, 40, 50, 100, 200, 400, 800],
    BeforeValidator(_whole_number((10, 25, 40, 50, 100, 200, 400, 800))),
]
Int = StrictInt


def whole_number_choice(*allowed: object) -> BeforeValidator:
    """For `Literal` fields that mix words and numbers (tiers: auto, 2, 3): refuse 2.0 and `true`."""
    return BeforeValidator(_whole_number(allowed))


def _address_text(kind: str, example: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"expected an IPv4 {kind} written as text, e.g. {example} (got {value!r})")
        return value
    return check


Ipv4Network = Annotated[IPv4Network, BeforeValidator(_address_text("network", "10.0.0.0/24"))]
Ipv4Address = Annotated[IPv4Address, BeforeValidator(_address_text("address", "10.0.0.1"))]

_MAC = re.compile(r"^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$")


def unicast_mac(value: Any) -> str:
    """A MAC address a switch can answer to: six colon-separated octets, unicast and not all zero; kept in
    lower case, the form the NOSes print.

    >>> unicast_mac("00:CC:CC:CC:CC:CC")
    '00:cc:cc:cc:cc:cc'
    >>> unicast_mac("01:00:5e:00:00:01")
    Traceback (most recent call last):
    ...
    ValueError: 01:00:5e:00:00:01 is a multicast address (the first octet is odd); give a unicast MAC
    """
    if not isinstance(value, str) or not _MAC.match(value):
        raise ValueError(f"expected a MAC address written as six colon-separated hex octets, e.g. "
                         f"00:cc:cc:cc:cc:cc (got {value!r})")
    if int(value[:2], 16) & 1:
        raise ValueError(f"{value} is a multicast address (the first octet is odd); give a unicast MAC")
    if value.replace(":", "").strip("0") == "":
        raise ValueError("00:00:00:00:00:00 is not an address a switch answers to")
    return value.lower()


# The pattern (either case, as typed) is what editors check against the schema; the validator runs first, with its
# own words, and keeps the lower case the NOSes print.
MacAddress = Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F][02468aceACE](?::[0-9a-fA-F]{2}){5}$"),
                       BeforeValidator(unicast_mac)]

# --- lists --------------------------------------------------------------------------------------------------


def distinct(items: tuple[T, ...]) -> tuple[T, ...]:
    """Lists whose entries name things (priorities, cages, names) must not repeat one.

    >>> distinct((3, 4))
    (3, 4)
    >>> distinct((3, 4, 3))
    Traceback (most recent call last):
    ...
    ValueError: 3 is listed twice; each entry may appear once
    """
    seen: set[T] = set()
    for item in items:
        if item in seen:
            raise ValueError(f"{item!r} is listed twice; each entry may appear once")
        seen.add(item)
    return items


Distinct = AfterValidator(distinct)

# --- labels -------------------------------------------------------------------------------------------------

_LABEL_SAFE = frozenset(string.ascii_letters + string.digits + "._+-@=,")


def file_label(name: str) -> str:
    """A file name as generated files print it (in comments of shell scripts, configs and YAML): only
    characters no printer gives a meaning, others replaced by '_', at most 100 of them.

    >>> file_label("pod32.yaml")
    'pod32.yaml'
    >>> file_label("x\\ntouch /tmp/p;.yaml")
    'x_touch__tmp_p_.yaml'
    """
    label = "".join(c if c in _LABEL_SAFE else "_" for c in name[:100])
    return label or "_"
