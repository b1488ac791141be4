"""What a changed NX-OS line disturbs on a Nexus 9000 (10.5), by its section path (`policy-map type queuing X >
class-map type queuing Y > bandwidth percent 50`).

Cisco documents the queuing policy (QoS Configuration Guide 10.5(x), Configuring Queuing and Scheduling: changes
are disruptive, a brief loss of traffic on every port of the type) and that enabling PFC on a port does not flap
it, though on 9300-GX it allocates the no-drop buffers (Configuring Priority Flow Control). TCAM carving needs a
reload (Cisco's Nexus-as-Code data model, a secondary Cisco source); the DLB profile is listed as reload-pending
(secondary sources, as rocefab's reload gate says). Where no Cisco statement was found, the class errs on the
cautious side and says so.
"""

from __future__ import annotations

from rocefab.platforms.disruption import (
    INDENTED_FIRST,
    INDENTED_LAST,
    Disruption,
    DisruptionRule,
    DisruptionTable,
)

GUIDE = ("https://cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/"
         "cisco-nexus-9000-series-nx-os-quality-of-service-configuration-guide-105x")
QUEUING = (f"NX-OS QoS guide 10.5(x), Configuring Queuing and Scheduling "
           f"({GUIDE}/m-configuring-queuing-and-scheduling.html)")
PFC = f"NX-OS QoS guide 10.5(x), Configuring Priority Flow Control ({GUIDE}/m-configuring-priority-flow-control.html)"
NOT_FOUND = "no Cisco statement found; classed on the cautious side"

TABLE = DisruptionTable((
    *INDENTED_FIRST,
    DisruptionRule(r"^(hostname|ntp |logging |snmp-server |banner |clock |ip domain|ip name-server|username |role |"
                   r"aaa |tacacs|radius|line |feature (nxapi|ssh|grpc|openconfig|scp-server|tacacs\+)|grpc |"
                   r"nxapi )", Disruption.HITLESS, "the management plane: nothing in the forwarding ASIC changes"),
    DisruptionRule(r"^hardware profile dlb", Disruption.RELOAD,
                   "listed by show system config reload-pending (secondary sources; see the unit's reload gate)"),
    DisruptionRule(r"^hardware access-list tcam region", Disruption.RELOAD,
                   "Cisco Nexus-as-Code, NX-OS hardware data model: changing TCAM regions typically requires a "
                   "reload (https://netascode.cisco.com/docs/data_models/nxos/system/hardware/)"),
    DisruptionRule(r"^(policy-map type queuing|system qos > service-policy type queuing|class-map type queuing)",
                   Disruption.QOS_REPROGRAM, f"{QUEUING}: queuing changes are disruptive, a brief loss of traffic on "
                   "every port of the type (ECN and WRED live here)"),
    DisruptionRule(r"^(policy-map type network-qos|class-map type network-qos|system qos)", Disruption.QOS_REPROGRAM,
                   f"{NOT_FOUND}: the network-qos policy sets MTU, pause and no-drop for the whole switch"),
    DisruptionRule(r"^interface [^>]* > priority-flow-control mode", Disruption.QOS_REPROGRAM,
                   f"{PFC}: it does not flap the port, but on 9300-GX it allocates the no-drop buffers"),
    DisruptionRule(r"^interface [^>]* > (mtu|ip address|ipv6 address|(no )?switchport|channel-group|vpc|ip "
                   r"unnumbered|encapsulation)", Disruption.PORT_FLAP,
                   f"{NOT_FOUND}: the port's addressing, MTU or membership, and what rides on it (BGP, the port-"
                   "channel), starts again"),
    DisruptionRule(r"^router bgp [^>]*> neighbor \S+$|^router bgp [^>]*> neighbor [^>]*(> )?(remote-as|update-source|"
                   r"local-as)", Disruption.PORT_FLAP, "that BGP session starts (or stops, or starts again)"),
    DisruptionRule(r"^router bgp [^>]*> neighbor [^>]*> (bfd|description|address-family)", Disruption.HITLESS,
                   "the running session takes it"),
    DisruptionRule(r"^vpc domain", Disruption.PORT_FLAP,
                   f"{NOT_FOUND}: the vPC port-channels may go down while the peers agree again"),
    *INDENTED_LAST,
), unknown=Disruption.QOS_REPROGRAM)
