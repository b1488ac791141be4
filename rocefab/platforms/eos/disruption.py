"""What a changed EOS line disturbs (4.34), by its section path (`interface Ethernet1/1 > speed 400g`).

No Arista manual or TOI text about the effect of changing these settings could be read here, so most lines take
the unit's cautious class; the rules below are the ones with a source, or where the effect follows from what the
line is (a label, the management plane, a link setting, a BGP session's identity).
"""

from __future__ import annotations

from rocefab.platforms.disruption import (
    INDENTED_FIRST,
    INDENTED_LAST,
    Disruption,
    DisruptionRule,
    DisruptionTable,
)

NOT_FOUND = "no Arista statement found; classed on the cautious side"

TABLE = DisruptionTable((
    *INDENTED_FIRST,
    DisruptionRule(r"^(hostname|ntp |logging |snmp-server |banner |clock |ip domain|ip name-server|dns |username |"
                   r"aaa |tacacs|radius|management (api|ssh|console)|vrf instance MGMT|ip route vrf MGMT|"
                   r"no ip routing vrf MGMT)", Disruption.HITLESS,
                   "the management plane: nothing in the forwarding ASIC changes"),
    # Leaving the ribd model (its line removed or replaced) is a change of model; the multi-agent line alone on a
    # switch that prints no model line may be its default already, so that line takes the cautious class
    DisruptionRule(r"^service routing protocols model ribd", Disruption.RELOAD,
                   "EOS answers \"! Change will take effect only after switch reboot\" to a change of routing model "
                   "(CLI output quoted in srl-labs/containerlab pull request 363)"),
    DisruptionRule(r"^ip hardware fib load-balance distribution dynamic", Disruption.AGENT_RESTART,
                   f"{NOT_FOUND}: dynamic load balancing re-programs the ECMP groups in hardware (EOS TOI 4.24.2F, "
                   "not readable here)"),
    DisruptionRule(r"^interface [^>]* > (mtu|ip address|ipv6 (address|enable)|(no )?switchport|channel-group|mlag |"
                   r"ip routing address required)", Disruption.PORT_FLAP,
                   f"{NOT_FOUND}: the port's addressing, MTU or membership, and what rides on it, starts again"),
    DisruptionRule(r"^router bgp [^>]*> neighbor \S+ (remote-as|peer group|update-source|local-as)",
                   Disruption.PORT_FLAP, "that BGP session starts again"),
    DisruptionRule(r"^router bgp [^>]*> neighbor \S+ (bfd|description)", Disruption.HITLESS,
                   "the running session takes it"),
    DisruptionRule(r"^mlag configuration", Disruption.PORT_FLAP,
                   f"{NOT_FOUND}: the MLAG port-channels may go down while the peers agree again"),
    *INDENTED_LAST,
), unknown=Disruption.QOS_REPROGRAM)
