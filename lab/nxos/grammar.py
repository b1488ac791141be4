"""Cisco NX-OS configuration-mode grammar, as data, for the lab's NX-OS emulator.

NAPALM sends NX-OS config lines without their indentation, and NX-OS ignores indentation anyway: it works out
the mode of a line from the command grammar, retrying a line that is invalid in the current mode in each
parent mode. This table is that grammar for every line rocefab renders plus the factory defaults. A line that
no mode on the path accepts is rejected with NX-OS's exact text (`INVALID`).
"""

import re
from dataclasses import dataclass

__all__ = ["GLOBAL", "INVALID", "MODES", "Cmd", "Hit", "Mode", "canonical_line", "lookup"]

INVALID = "% Invalid command at '^' marker."
GLOBAL = "global"


@dataclass(frozen=True)
class Cmd:
    """One command of a mode. `pattern` must match the whole line (after `no ` for a negation).

    key: regex whose match at the start of the line names the setting; lines with the same key replace each
      other (`mtu 1500` replaces `mtu 9216`). None: the whole line is its identity (`feature bgp`, `network X`).
    mode: the line opens this sub-mode (its identity is the whole line).
    flag: `no <line>` is itself a stored setting (`no shutdown`, `no switchport`), not a removal.
    requires: the `feature` that must be enabled, else NX-OS does not know the command at all.
    removable: False for sections NX-OS cannot delete (physical ports, mgmt0, system qos): a patch clears them.
    rank / natural: where a global section sits in `show running-config` (NX-OS prints in its own order,
      not in the order lines were entered; interfaces and VLANs sorted by number).
    """

    pattern: str
    key: str | None = None
    mode: str | None = None
    flag: bool = False
    requires: str | None = None
    removable: bool = True
    rank: int = 50
    natural: bool = False


@dataclass(frozen=True)
class Mode:
    prompt: str  # what the SSH prompt shows: host(<prompt>)#
    cmds: tuple[Cmd, ...]


@dataclass(frozen=True)
class Hit:
    cmd: Cmd
    negated: bool  # the line was `no <something>`
    body: str  # the line without its `no `


def _k(pattern: str, key: str, requires: str | None = None, rank: int = 50) -> Cmd:
    """A keyed setting whose key is a literal prefix of the line."""
    return Cmd(pattern, key=re.escape(key), requires=requires, rank=rank)


_ETH_NAME = r"Ethernet\d+/\d+(/\d+)?"
_DESC = _k(r"description .+", "description")
_SHUT = Cmd(r"shutdown", key="shutdown", flag=True)
_MTU = _k(r"mtu \d+", "mtu")
_REDIRECTS = Cmd(r"ip redirects", key="ip redirects", flag=True)
_IP = (Cmd(r"ip address \S+ secondary"), _k(r"ip address \S+", "ip address"))
_L2 = (
    Cmd(r"switchport", key="switchport", flag=True),
    _k(r"switchport mode (access|trunk)", "switchport mode"),
    _k(r"switchport access vlan \d+", "switchport access vlan"),
    _k(r"switchport trunk allowed vlan [\d,-]+", "switchport trunk allowed vlan"),
    _k(r"switchport trunk native vlan \d+", "switchport trunk native vlan"),
    _k(r"spanning-tree port type (edge( trunk)?|network|normal)", "spanning-tree port type"),
    _k(r"spanning-tree bpduguard (enable|disable)", "spanning-tree bpduguard"),
)
_QOS_IF = (
    _k(r"service-policy type qos input \S+", "service-policy type qos input"),
    _k(r"service-policy type queuing output \S+", "service-policy type queuing output"),
    _k(r"priority-flow-control mode (on|off|auto)", "priority-flow-control mode"),
)
_PFC_WD = _k(r"priority-flow-control watch-dog-interval (on|off)", "priority-flow-control watch-dog-interval")
_VPC = (_k(r"vpc peer-link", "vpc", requires="vpc"), _k(r"vpc \d+", "vpc", requires="vpc"))
_AF = r"address-family (ipv4|ipv6) unicast"
# 1024-65535 (the grammar has no numeric bounds of its own)
_PORT_1024_UP = r"(102[4-9]|10[3-9]\d|1[1-9]\d\d|[2-9]\d{3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d\d|655[0-2]\d|6553[0-5])"
_FEATURES = ("nxapi|scp-server|sftp-server|bgp|ospf|interface-vlan|hsrp|vrrp|lacp|vpc|lldp|bfd|udld|ptp|netconf|grpc"
             r"|openconfig|tacacs\+")
_KEY7 = r"( key( [07])? \S+)?"  # a shared secret as the device keeps it (type 7 or clear), never rendered by rocefab
# DNS client lines, global or per VRF: up to six name servers on one line (Unicast Routing guide, DNS clients).
_RESOLVERS = (
    _k(r"ip domain-name \S+", "ip domain-name"),
    Cmd(r"ip domain-list \S+"),
    _k(r"ip name-server [0-9A-Fa-f.:]+( [0-9A-Fa-f.:]+){0,5}( use-vrf \S+)?", "ip name-server"),
)

MODES: dict[str, Mode] = {
    GLOBAL: Mode("config", (
        _k(r"hostname \S+", "hostname", rank=1),
        Cmd(rf"feature ({_FEATURES})", rank=2),
        Cmd(r"username \S+ .+", key=r"username \S+", rank=3),
        # The gRPC agent's settings: port 1024-65535 (Cisco Network as Code, NX-OS gRPC), the default VRF beside the
        # management one and a certificate trustpoint (10.6 Programmability Guide, gRPC Agent). Where NX-OS prints
        # them among the global lines is not confirmed.
        _k(rf"grpc port {_PORT_1024_UP}", "grpc port", requires="grpc", rank=3),
        _k(r"grpc use-vrf (default|management)", "grpc use-vrf", requires="grpc", rank=3),
        _k(r"grpc certificate \S+", "grpc certificate", requires="grpc", rank=3),
        Cmd(r"interface breakout module \d+ port [\d-]+ map \S+", key=r"interface breakout module \d+ port \S+",
            rank=4),
        # NX-OS Interfaces guide, "Configuring ECMP Load Balancing" (rotate 1-63, universal-id 1-4294967295)
        Cmd(r"ip load-sharing address (destination port destination|source-destination( port source-destination)?)"
            r"( rotate (6[0-3]|[1-5]?\d))?( universal-id \d+)?", key="ip load-sharing", rank=5),
        # Dynamic load balancing (10.5(1)F, Cloud Scale); the lines Cisco's pyATS DLB builder sends. Where NX-OS prints
        # the profile among the global sections is not confirmed: after load-sharing.
        Cmd(r"hardware profile dlb", mode="hw-dlb", rank=6),
        Cmd(r"class-map type qos match-(any|all) \S+", mode="cmap-qos", rank=10),
        Cmd(r"policy-map type qos \S+", mode="pmap-qos", rank=11),
        Cmd(r"policy-map type queuing \S+", mode="pmap-que", rank=12),
        Cmd(r"policy-map type network-qos \S+", mode="pmap-nqos", rank=13),
        Cmd(r"system qos", mode="sys-qos", removable=False, rank=14),
        Cmd(_PFC_WD.pattern, key=_PFC_WD.key, rank=15),
        Cmd(r"vlan \d+", mode="vlan", rank=20, natural=True),
        Cmd(r"vrf context management", mode="vrf", removable=False, rank=21),
        Cmd(r"vrf context \S+", mode="vrf", rank=21),
        Cmd(r"vpc domain \d+", mode="vpc-domain", requires="vpc", rank=22),
        Cmd(r"interface Vlan\d+", mode="if-vlan", requires="interface-vlan", rank=30, natural=True),
        Cmd(r"interface port-channel\d+", mode="if-po", rank=31, natural=True),
        Cmd(r"interface Ethernet\d+/\d+(/\d+)?", mode="if-eth", removable=False, rank=32, natural=True),
        Cmd(r"interface mgmt0", mode="if-mgmt", removable=False, rank=33),
        Cmd(r"interface loopback\d+", mode="if-lo", rank=34, natural=True),
        Cmd(r"ip route \S+ \S+( .+)?", rank=40),
        Cmd(r"router bgp \d+(\.\d+)?", mode="router-bgp", requires="bgp", rank=60),
        # Management-plane services (rocefab/platforms/nxos/services.py has the sources). Where NX-OS prints them
        # among the global sections is not modelled exactly: after the routing sections, in this order.
        *(Cmd(c.pattern, key=c.key, rank=61) for c in _RESOLVERS),
        Cmd(r"ntp server \S+( key \d+)?( prefer)?( use-vrf \S+)?", key=r"ntp server \S+", rank=62),
        Cmd(r"logging server \S+( [0-7])?( use-vrf \S+)?", key=r"logging server \S+", rank=63),
        _k(r"snmp-server location .+", "snmp-server location", rank=64),
        _k(r"snmp-server contact .+", "snmp-server contact", rank=64),
        Cmd(r"snmp-server community \S+( (ro|rw|group \S+))?", key=r"snmp-server community \S+", rank=64),
        Cmd(rf"tacacs-server host \S+{_KEY7}( port \d+)?( timeout \d+)?", key=r"tacacs-server host \S+",
            requires="tacacs+", rank=65),
        Cmd(r"tacacs-server key( [07])? \S+", key="tacacs-server key", requires="tacacs+", rank=65),
        Cmd(rf"radius-server host \S+{_KEY7}( authentication)?( accounting)?", key=r"radius-server host \S+",
            rank=66),
        Cmd(r"radius-server key( [07])? \S+", key="radius-server key", rank=66),
        Cmd(r"aaa group server tacacs\+ \S+", mode="aaa-group", requires="tacacs+", rank=67),
        Cmd(r"aaa group server radius \S+", mode="aaa-group", rank=67),
        # `banner motd <d><text><d>`: nxos_config.Cursor gathers a banner that spans lines into one line first.
        Cmd(r"banner motd (\S)(?s:.*)\1", key="banner motd", rank=68),
        Cmd(r"clock timezone \S+ -?\d{1,2} \d{1,2}", key="clock timezone", rank=69),
    )),
    # The sub-mode's prompt is not in the stored sources.
    "hw-dlb": Mode("config-dlb", (
        _k(r"mode (flowlet|per-packet|policy-driven (flowlet|per-packet))", "mode"),
        _k(rf"dlb-interface (all|{_ETH_NAME}( ?, ?{_ETH_NAME})*)", "dlb-interface"),
        _k(r"mac-address [0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}", "mac-address"),
        _k(r"flowlet-aging \d+", "flowlet-aging"),
        _k(r"dre-thresholds( +level-[1-7] \d+)+", "dre-thresholds"),
        Cmd(r"static-pinning", key="static-pinning"),
    )),
    "aaa-group": Mode("config-tacacs+", (Cmd(r"server \S+"), _k(r"use-vrf \S+", "use-vrf"))),
    "if-eth": Mode("config-if", (
        _DESC, *_L2, _MTU, *_QOS_IF, _PFC_WD,
        _k(r"channel-group \d+ mode (active|passive)", "channel-group", requires="lacp"),
        _k(r"channel-group \d+( mode on)?", "channel-group"),
        # BFD timers: NX-OS Interfaces guide, BFD (50-999 ms, multiplier 1-50)
        _k(r"bfd interval ([5-9]\d|[1-9]\d\d) min_rx ([5-9]\d|[1-9]\d\d) multiplier ([1-9]|[1-4]\d|50)",
           "bfd interval", requires="bfd"),
        *_IP, _REDIRECTS, _k(r"speed (\d+|auto)", "speed"), _SHUT,
    )),
    "if-po": Mode("config-if", (_DESC, *_L2, _MTU, *_QOS_IF, *_VPC, *_IP, _REDIRECTS, _SHUT)),
    "if-vlan": Mode("config-if", (
        _DESC, _SHUT, _MTU, _REDIRECTS, *_IP,
        _k(r"hsrp version (1|2)", "hsrp version", requires="hsrp"),
        Cmd(r"hsrp \d+", mode="hsrp", requires="hsrp"),
    )),
    "if-lo": Mode("config-if", (_DESC, *_IP, _SHUT)),
    "if-mgmt": Mode("config-if", (_DESC, _k(r"vrf member \S+", "vrf member"), *_IP, _SHUT)),
    "hsrp": Mode("config-if-hsrp", (
        Cmd(r"ip \S+ secondary"), _k(r"ip \S+", "ip"), _k(r"priority \d+( .+)?", "priority"),
        _k(r"preempt( .+)?", "preempt"), _k(r"authentication .+", "authentication"),
    )),
    "vlan": Mode("config-vlan", (_k(r"name \S+", "name"), _k(r"state (active|suspend)", "state"), _SHUT)),
    "vrf": Mode("config-vrf", (Cmd(r"ip route \S+ \S+( .+)?"), *_RESOLVERS)),
    "vpc-domain": Mode("config-vpc-domain", (
        _k(r"role priority \d+", "role priority"), _k(r"system-priority \d+", "system-priority"),
        _k(r"peer-keepalive destination \S+( source \S+)?( vrf \S+)?", "peer-keepalive"),
        Cmd(r"peer-gateway"), Cmd(r"peer-switch"), Cmd(r"ip arp synchronize"),
        _k(r"auto-recovery( reload-delay \d+)?", "auto-recovery"), _k(r"delay restore \d+", "delay restore"),
    )),
    "cmap-qos": Mode("config-cmap-qos", (Cmd(r"match (dscp|cos|precedence) [\d,-]+"),)),
    "pmap-qos": Mode("config-pmap-qos", (Cmd(r"class (type qos )?\S+", mode="pmap-c-qos"),)),
    "pmap-c-qos": Mode("config-pmap-c-qos", (
        _k(r"set qos-group \d+", "set qos-group"), _k(r"set dscp \d+", "set dscp"), _k(r"set cos \d+", "set cos"),
    )),
    "pmap-que": Mode("config-pmap-que", (Cmd(r"class type queuing \S+", mode="pmap-c-que"),)),
    "pmap-c-que": Mode("config-pmap-c-que", (
        _k(r"priority( level \d+)?", "priority"), _k(r"bandwidth( remaining)? percent \d+", "bandwidth"),
        _k(r"random-detect .+", "random-detect"), _k(r"shape .+", "shape"),
        # input queuing, no-drop class: QoS guide 10.5, Configuring Priority Flow Control (bytes)
        _k(r"pause buffer-size \d+ pause-threshold \d+ resume-threshold \d+", "pause"),
    )),
    "pmap-nqos": Mode("config-pmap-nqos", (Cmd(r"class type network-qos \S+", mode="pmap-c-nqos"),)),
    "pmap-c-nqos": Mode("config-pmap-nqos-c", (_MTU, _k(r"pause pfc-cos [\d,]+", "pause"))),
    "sys-qos": Mode("config-sys-qos", (
        _k(r"service-policy type network-qos \S+", "service-policy type network-qos"),
        Cmd(r"service-policy type queuing (input|output) \S+", key=r"service-policy type queuing \S+"),
        _k(r"service-policy type qos input \S+", "service-policy type qos input"),
    )),
    "router-bgp": Mode("config-router", (
        _k(r"router-id \S+", "router-id"), Cmd(r"bestpath .+"), Cmd(r"log-neighbor-changes"),
        _k(r"timers bgp \d+ \d+", "timers bgp"), Cmd(_AF, mode="router-af"), Cmd(r"neighbor \S+", mode="nbr"),
    )),
    "router-af": Mode("config-router-af", (
        Cmd(r"network \S+( route-map \S+)?", key=r"network \S+"),
        Cmd(r"aggregate-address \S+( as-set)?( summary-only)?", key=r"aggregate-address \S+"),
        Cmd(r"maximum-paths( ibgp)? \d+", key=r"maximum-paths( ibgp)?"), Cmd(r"redistribute .+"),
    )),
    "nbr": Mode("config-router-neighbor", (
        _k(r"remote-as \S+", "remote-as"), _DESC, _k(r"update-source \S+", "update-source"), Cmd(r"bfd"),
        _k(r"password .+", "password"), _k(r"timers \d+ \d+", "timers"), Cmd(_AF, mode="nbr-af"),
    )),
    "nbr-af": Mode("config-router-neighbor-af", (
        Cmd(r"send-community( extended| both)?"), Cmd(r"route-map \S+ (in|out)"), Cmd(r"next-hop-self"),
        _k(r"allowas-in( \d+)?", "allowas-in"), _k(r"soft-reconfiguration inbound( always)?", "soft-reconfiguration"),
    )),
}

# NX-OS accepts any case and the usual abbreviations for interface names, and shows the canonical name.
_IF_NAMES = (("ethernet", "Ethernet"), ("eth", "Ethernet"), ("port-channel", "port-channel"), ("po", "port-channel"),
             ("vlan", "Vlan"), ("loopback", "loopback"), ("lo", "loopback"), ("mgmt", "mgmt"))
_IF_LINE = re.compile(r"(no )?interface ([A-Za-z-]+)\s*(\d[\d/]*)", re.IGNORECASE)


def canonical_line(line: str) -> str:
    """The line as NX-OS stores it: single spaces, canonical interface names.

    >>> canonical_line("  interface  eth1/1 ")
    'interface Ethernet1/1'
    """
    line = " ".join(line.split())
    m = _IF_LINE.fullmatch(line)
    if m:
        for short, full in _IF_NAMES:
            if m.group(2).lower() == short:
                return f"{m.group(1) or ''}interface {full}{m.group(3)}"
    return line


def lookup(mode: str, line: str) -> Hit | None:
    """The command of `mode` that accepts `line`, or None (then NX-OS retries the parent mode).

    `no X` is accepted when X is a whole command, or when X names the key of a keyed setting (`no mtu`).
    """
    negated = line.startswith("no ")
    body = line[3:] if negated else line
    cmds = MODES[mode].cmds
    for cmd in cmds:
        if re.fullmatch(cmd.pattern, body):
            return Hit(cmd, negated, body)
    if negated:  # `no description`, `no mtu 1500`: longest key wins, so `no switchport mode` is not `no switchport`
        keyed = sorted((c for c in cmds if c.key and not c.flag), key=lambda c: -len(c.key or ""))
        for cmd in keyed:
            if re.fullmatch(f"(?:{cmd.key})( .*)?", body):
                return Hit(cmd, True, body)
    return None
