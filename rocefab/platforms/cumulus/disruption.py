"""What an NVUE change disturbs on a Spectrum switch (Cumulus Linux 5.14), line by `nv set` line.

NVIDIA documents one rule for QoS (user guide 5.14 and 5.6, Quality of Service, "switchd and QoS"): NVUE applies QoS
by reloading switchd, which leaves forwarding alone except when `qos_infra.conf` changes (buffers, traffic pools,
egress queue mapping) or the change is to PFC or link pause: those re-program the ASIC's buffers and "might result
in momentary packet loss". The settings in `qos_features.conf` (trust and DSCP mapping, ECN, the egress scheduler,
the PFC watchdog) take the harmless reload; rocefab reads the page's list of which file holds which setting for
that, which NVIDIA does not state per command. Other lines are classed by their own pages, below.
"""

from __future__ import annotations

from rocefab.platforms.disruption import Disruption, DisruptionRule, DisruptionTable

GUIDE = "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514"
QOS = f"Cumulus Linux 5.14, Quality of Service, switchd and QoS ({GUIDE}/Layer-1-and-Switch-Ports/Quality-of-Service/)"
ECMP = (f"Cumulus Linux 5.14, Equal Cost Multipath Load Sharing "
        f"({GUIDE}/Layer-3/Routing/Equal-Cost-Multipath-Load-Sharing/)")
PORTS = (f"Cumulus Linux 5.14, Switch Port Attributes ({GUIDE}/Layer-1-and-Switch-Ports/Interface-Configuration-and-"
         "Management/Switch-Port-Attributes/)")
FRR = "FRR bgpd source (bgpd.c peer_as_change: a remote-as change sends a Cease; bgp_vty.c: the local AS cannot change"
NOT_FOUND = "no NVIDIA statement found; classed on the cautious side"

TABLE = DisruptionTable((
    DisruptionRule(r"^nv set (interface \S+ |vrf \S+ router bgp neighbor \S+ )description ", Disruption.HITLESS,
                   "a label: nothing is programmed"),
    DisruptionRule(r"^nv set (system (hostname|message|timezone|global|gnmi-server|api)|service (ntp|dns|syslog|"
                   r"snmp-server)|interface eth\d+) ",
                   Disruption.HITLESS, "the management plane: nothing in the forwarding ASIC changes"),
    DisruptionRule(r"^nv set system forwarding hash-seed", Disruption.AGENT_RESTART,
                   f"{ECMP}: configuring the hash seed restarts switchd, which resets every port"),
    DisruptionRule(r"^nv set system forwarding (ecmp-hash|lag-hash) ", Disruption.HITLESS,
                   f"{ECMP}: the hash is reloaded without interrupting traffic (flows may move to other paths)"),
    DisruptionRule(r"^nv set vrf \S+ router bgp wait-for-install", Disruption.AGENT_RESTART,
                   f"Cumulus Linux 5.14, Optional BGP Configuration: suppressing route advertisement makes NVUE "
                   f"restart switchd ({GUIDE}/Layer-3/Border-Gateway-Protocol-BGP/Optional-BGP-Configuration/)"),
    # 5.12 and earlier restart switchd (every port resets); 5.13 and later reload it, with no impact documented
    DisruptionRule(r"^nv set (router adaptive-routing|interface \S+ router adaptive-routing)", Disruption.QOS_REPROGRAM,
                   "NVUE reference, Adaptive Routing: 5.13 and later reload switchd for it (5.12 and earlier restart "
                   "it); no impact of the reload is documented, so classed as re-programming the switch"),
    DisruptionRule(r"^nv set (qos pfc-watchdog|interface \S+ qos pfc-watchdog)", Disruption.HITLESS,
                   f"{QOS}: the PFC watchdog is in qos_features.conf, applied by a reload that leaves forwarding "
                   "alone"),
    DisruptionRule(r"^nv set (qos (pfc|link-pause|traffic-pool|advance-buffer-config|egress-queue-mapping|roce) |"
                   r"interface \S+ qos (pfc|link-pause|buffer|egress-queue-mapping) )",
                   Disruption.QOS_REPROGRAM, f"{QOS}: PFC, pause and qos_infra.conf changes re-program the ASIC's "
                   "buffers and may lose packets for a moment (RoCE mode sets PFC and the pools)"),
    DisruptionRule(r"^nv set qos (congestion-control|mapping|egress-scheduler|remark) ", Disruption.HITLESS,
                   f"{QOS}: ECN, trust and mapping and the scheduler are in qos_features.conf, applied by a reload "
                   "that leaves forwarding alone"),
    DisruptionRule(r"^nv set interface \S+ link (breakout|speed|state|fec|auto-negotiate|lanes) ", Disruption.PORT_FLAP,
                   f"{PORTS}: the port comes up again in its new form (a breakout can also disable the next "
                   "even-numbered port on some models)"),
    DisruptionRule(r"^nv set interface \S+ link mtu ", Disruption.PORT_FLAP,
                   f"{NOT_FOUND}: the MTU also sizes the port's lossy headroom ({QOS}, Lossy Headroom)"),
    DisruptionRule(r"^nv set interface \S+ (ip (address|gateway|vrr)|bond|bridge|type|base-interface|vlan) ",
                   Disruption.PORT_FLAP, "the port's addressing or membership: what rides on it (BGP sessions, the "
                   "bond) starts again"),
    DisruptionRule(r"^nv set vrf \S+ router bgp (autonomous-system|router-id) |^nv set router bgp "
                   r"(autonomous-system|router-id) ", Disruption.PORT_FLAP,
                   f"{FRR}): every BGP session of the switch starts again"),
    DisruptionRule(r"^nv set vrf \S+ router bgp neighbor \S+ (remote-as|type|peer-group) ", Disruption.PORT_FLAP,
                   f"{FRR}): that BGP session starts again"),
    DisruptionRule(r"^nv set vrf \S+ router bgp (address-family \S+ (multipaths|network|aggregate-route|"
                   r"redistribute)|path-selection multipath) ", Disruption.HITLESS,
                   "FRR bgpd source: a multipath setting or an originated prefix is taken without resetting sessions"),
    DisruptionRule(r"^nv set vrf \S+ router bgp neighbor \S+ bfd ", Disruption.HITLESS,
                   "BFD timers are renegotiated on the running session"),
    DisruptionRule(r"^nv set mlag ", Disruption.PORT_FLAP,
                   f"{NOT_FOUND}: clagd may take the MLAG bonds down while the pair agrees again"),
), unknown=Disruption.QOS_REPROGRAM)
