"""Arista EOS configuration modes as data: which lines each mode accepts, which setting a line replaces, and the
order EOS prints them in. Covers every line rocefab's EOS templates render plus a factory config's usual lines.

Strictness matters more than breadth: a global command (`qos map dscp ...`) must not be accepted inside an
interface, or a misplaced line would land in the wrong mode without any error.
"""

from __future__ import annotations

from rocefab.lab.configtree import ConfigError, Grammar, Mode, Rule, Sub

IP4 = r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}"
IP6 = r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}"
PFX4 = rf"{IP4}/(?:3[0-2]|[12]?\d)"
PFX6 = rf"{IP6}/\d{{1,3}}"
NAME = r"[A-Za-z][\w.:-]*"  # profiles, peer groups, VRFs: a letter first, so they never look like an address
TEXT = r"\S.*"
NUM = r"\d+"
ASN = r"\d+(?:\.\d+)?"
VLAN = r"(?:[1-9]\d{0,2}|[1-3]\d{3}|40[0-8]\d|409[0-4])"
VLANS = rf"{VLAN}(?:-{VLAN})?(?:,{VLAN}(?:-{VLAN})?)*"
DSCP = r"(?:6[0-3]|[1-5]?\d)"
TC = r"[0-7]"
MAC = r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}|[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}"
ETH = r"Ethernet\d+(?:/\d+){0,2}"
PO = r"Port-Channel\d+"
IFNAME = rf"(?:{ETH}|{PO}|Loopback\d+|Management\d+(?:/\d+)?|Vlan{VLAN})(?:\.\d+)?"
PEER = rf"(?:{IP4}|{IP6})"
PEER_OR_GROUP = rf"(?:{IP4}|{IP6}|{NAME})"
SPEED = r"(?:forced )?\d+g(?:full)?(?:-\d)?|auto(?: \d+g(?:full)?(?:-\d)?)?"
SECONDS = r"\d+(?:\.\d+)?"
THRESHOLD = r"\d+ (?:bytes|kbytes|mbytes|segments)"
KEY = r"(?: key (?:[07] )?\S+)?"  # a shared secret on a server line, as the device keeps it

# EOS prints interface types in this order; each type is its own slot so the types never interleave.
_INTERFACES = tuple(Sub(rf"interface {kind}(?:\.\d+)?", "interface", natural=True)
                    for kind in (PO, ETH, r"Loopback\d+", r"Management\d+(?:/\d+)?", rf"Vlan{VLAN}"))
_TX_QUEUE = Sub(r"(?:uc-)?tx-queue [0-7]", "tx-queue", natural=True)

MODES = (
    Mode("global", (
        Rule("aaa root", negated=True),
        Rule(r"username \S+", r"(?:privilege (?:1[0-5]|\d) )?(?:role \S+ )?"
                               r"(?:secret (?:sha512 |5 |0 )?\S+|nopassword)"),
        Sub("management api http-commands", "mgmt-api"),
        Sub("management api gnmi", "mgmt-api-gnmi"),
        Rule("transceiver qsfp default-mode", "4x10G"),
        Rule("service routing protocols model", "multi-agent|ribd"),
        Rule("hostname", r"[A-Za-z0-9][A-Za-z0-9.-]*"),
        (Rule(rf"ip name-server (?:vrf {NAME} )?{PEER}"), Rule("dns domain", r"\S+"), Rule(r"ip domain-list \S+")),
        (Rule(rf"ntp server (?:vrf {NAME} )?\S+(?: prefer| iburst)*"), Rule("clock timezone", r"\S+")),
        # Services rocefab renders (rocefab/platforms/eos/services.py has the sources) and the secrets that stay on
        # the device beside them: a key on a server line (type 7 or clear text) or as its own line.
        (Rule(rf"logging (?:vrf {NAME} )?host \S+(?: \d+)?(?: protocol (?:tcp|udp))?"),
         Rule("snmp-server location", TEXT), Rule("snmp-server contact", TEXT),
         Rule(r"snmp-server community \S+(?: ro| rw)?"),
         Rule(rf"tacacs-server host \S+(?: single-connection)?(?: vrf {NAME})?(?: timeout \d+)?{KEY}"),
         Rule("tacacs-server key", r"(?:[07] )?\S+"),
         Rule(rf"radius-server host \S+(?: vrf {NAME})?(?: timeout \d+)?(?: retransmit \d+)?{KEY}"),
         Rule("radius-server key", r"(?:[07] )?\S+")),
        Sub(rf"qos profile {NAME}", "qos-profile", natural=True),
        (Rule("spanning-tree mode", "mstp|rstp|rapid-pvst|none"),
         Rule(rf"spanning-tree vlan-id {VLANS}", negated=True)),
        # User-defined hash fields on Strata (aristanetworks/avd #5386: offset <0-64>, mask 0x01-0xFF; printed
        # with eth-type IPv4 / IPv6 as pyavd renders it), each line its own field.
        Rule(r"port-channel load-balance trident udf eth-type (?:IPv4|IPv6) header (?:inner|outer) (?:l2|l3|l4) "
             r"offset (?:6[0-4]|[1-5]?\d) mask 0x(?:0[1-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]?)"),
        Sub(rf"vlan {VLAN}", "vlan", natural=True),
        Sub(rf"vrf instance {NAME}", "vrf", natural=True),
        *_INTERFACES,
        Rule("ip virtual-router mac-address", MAC),
        (Rule("ip routing", "ipv6 interfaces", optional=True), Rule(rf"ip routing vrf {NAME}", negated=True)),
        Rule("ipv6 unicast-routing"),
        # Dynamic load balancing of ECMP groups (EOS TOI 4.24.2F, CLI help in aristanetworks/avd #4920)
        (Rule("ip hardware fib load-balance distribution dynamic flow-set-size", "[1-7]"),
         Rule("ip hardware fib load-balance distribution", "dynamic|hash")),
        Sub("mlag configuration", "mlag"),
        Rule(rf"ip route (?:vrf {NAME} )?{PFX4} (?:{IP4}|{IFNAME})(?: \d+)?(?: name \S+)?"),
        (Rule(rf"qos map dscp {DSCP}(?: {DSCP})* to traffic-class", TC),
         Rule("priority-flow-control pause watchdog default (?:timeout|recovery-time|polling-interval)", SECONDS),
         Rule("priority-flow-control pause watchdog action", "drop|errdisable|notify-only")),
        Sub(rf"router bgp {ASN}", "router-bgp"),
        # Maintenance mode (EOS User Manual, Maintenance Mode): the System unit quiesced drains the switch
        Sub("maintenance", "maintenance"),
        Rule("banner (?:login|motd)", heredoc=True),
    )),
    Mode("maintenance", (Sub(rf"unit {NAME}", "maintenance-unit", natural=True),)),
    Mode("maintenance-unit", (Rule("quiesce"),)),
    Mode("mgmt-api", (
        Rule("shutdown", negated=True),
        Rule(r"protocol (?:https|http)(?: port \d+)?"),
        Sub(rf"vrf {NAME}", "mgmt-api-vrf", natural=True),
    )),
    Mode("mgmt-api-vrf", (Rule("shutdown", negated=True), Rule("ip access-group", NAME))),
    # Transports first, then the provider (Arista openmgmt "OpenConfig" page; AVD's management-api-gnmi.j2 prints
    # a transport's settings in this order).
    Mode("mgmt-api-gnmi", (
        Sub(rf"transport grpc {NAME}", "gnmi-transport", natural=True),
        Rule("provider", "eos-native"),
    )),
    Mode("gnmi-transport", (
        Rule("ssl profile", NAME),
        Rule("port", NUM, span=(1, 65535)),
        Rule("vrf", NAME),
        Rule("ip access-group", NAME),
        Rule("notification timestamp", "send-time|last-change-time"),
        Rule("authorization requests"),
    )),
    Mode("qos-profile", (
        Rule("qos trust", "dscp|cos"),
        Rule("priority-flow-control", "on"),
        Rule(rf"priority-flow-control priority {TC}", "no-drop|drop"),
        Rule("priority-flow-control pause watchdog"),
        _TX_QUEUE,
    )),
    Mode("tx-queue", (
        (Rule("priority", "strict"), Rule("priority", negated=True)),
        Rule("bandwidth percent", NUM, span=(1, 100)),
        Rule("random-detect ecn minimum-threshold",
             rf"{THRESHOLD} maximum-threshold {THRESHOLD}(?: max-mark-probability (?:100|[1-9]\d?))?(?: weight \d+)?"),
    )),
    Mode("vlan", (Rule("name", r"\S+"), Rule(rf"trunk group {NAME}"), Rule("state", "active|suspend"))),
    Mode("vrf", (Rule("description", TEXT),)),
    Mode("interface", (
        Rule("description", TEXT),
        Rule("shutdown"),
        Rule("load-interval", NUM),
        Rule("mtu", NUM, span=(68, 9214)),
        Rule("speed", SPEED),
        Rule("channel-group", r"\d+ mode (?:active|passive|on)"),
        Rule("switchport access vlan", VLAN),
        Rule("switchport mode", "access|trunk|dot1q-tunnel"),
        Rule("switchport trunk allowed vlan", VLANS),
        Rule(rf"switchport trunk group {NAME}"),
        Rule("switchport", negated=True),
        Rule("autostate", negated=True),
        Rule("vrf", NAME),
        Rule("ip address", PFX4),
        Rule(rf"ip virtual-router address {IP4}(?:/\d+)?"),
        Rule("ipv6 enable"),
        Rule("ipv6 address", PFX6),
        Rule("mlag", NUM),
        Rule("spanning-tree portfast"),
        Rule("spanning-tree bpduguard", "enable|disable"),
        Rule("qos trust", "dscp|cos"),
        Rule("priority-flow-control", "on"),
        Rule(rf"priority-flow-control priority {TC}", "no-drop|drop"),
        Rule("service-profile", NAME),
        _TX_QUEUE,
    )),
    Mode("mlag", (
        Rule("domain-id", r"\S+"),
        Rule("local-interface", IFNAME),
        Rule("peer-address", IP4),
        Rule("peer-address heartbeat", rf"{IP4}(?: vrf {NAME})?"),
        Rule("peer-link", IFNAME),
        Rule("reload-delay mlag", NUM),
        Rule("reload-delay non-mlag", NUM),
        Rule("shutdown"),
    )),
    Mode("router-bgp", (
        Rule("router-id", IP4),
        Rule("bgp default ipv4-unicast", negated=True),
        Rule("maximum-paths", rf"{NUM}(?: ecmp {NUM})?"),
        Rule(rf"neighbor {NAME} peer group"),
        (Rule(rf"neighbor {PEER} peer group", NAME),
         Rule(rf"neighbor {PEER_OR_GROUP} remote-as", ASN),
         Rule(rf"neighbor {PEER_OR_GROUP} description", TEXT),
         Rule(rf"neighbor {PEER_OR_GROUP} update-source", IFNAME),
         Rule(rf"neighbor {PEER_OR_GROUP} bfd"),
         Rule(rf"neighbor {PEER_OR_GROUP} send-community"),
         Rule(rf"neighbor {PEER_OR_GROUP} maximum-routes", rf"{NUM}(?: warning-limit {NUM} percent)?"),
         Rule(rf"neighbor {PEER_OR_GROUP} shutdown")),
        Rule(rf"neighbor interface {IFNAME}", rf"peer-group {NAME} remote-as {ASN}"),
        # after the neighbours, before the address families, as AVD's router-bgp template prints it
        Rule(rf"aggregate-address {PFX4}", "summary-only", optional=True),
        Sub("address-family (?:ipv4|ipv6)", "bgp-af"),
    )),
    Mode("bgp-af", (
        Rule(rf"neighbor {PEER_OR_GROUP} activate"),
        Rule(rf"neighbor {PEER_OR_GROUP} next-hop address-family ipv6", "originate", optional=True),
        Rule(rf"network (?:{PFX4}|{PFX6})(?: route-map {NAME})?"),
    )),
)

# EOS accepts any letter case and the short forms of interface names and prints the canonical spelling.
_IF_PREFIX = r"^((?:no |default )?(?:interface|local-interface|peer-link|neighbor interface) )"
ALIASES = tuple(
    (rf"{_IF_PREFIX}(?i:{forms})(?=\d)", rf"\1{canonical}")
    for forms, canonical in (
        ("ethernet|eth|et", "Ethernet"), ("port-channel|po", "Port-Channel"), ("loopback|lo", "Loopback"),
        ("management|ma", "Management"), ("vlan|vl", "Vlan"),
    )
)

# The UDF's eth-type is typed in any case and kept as EOS's show output spells it (pyavd's rendering).
ALIASES += ((r"^((?:no |default )?port-channel load-balance trident udf eth-type )(?i:ipv4)(?= )", r"\1IPv4"),
            (r"^((?:no |default )?port-channel load-balance trident udf eth-type )(?i:ipv6)(?= )", r"\1IPv6"))

EOS_GRAMMAR = Grammar(MODES, root="global", aliases=ALIASES)


def error_text(error: ConfigError) -> str:
    """EOS's wording for a rejected line, as eAPI puts it in `errors`."""
    if error.token is None:
        return "Incomplete command"
    return f"Invalid input (at token {error.token}: '{error.line.split()[error.token]}')"
