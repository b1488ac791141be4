"""NX-OS structured config: one frozen dataclass per section of the running-config, named after the section's
template in templates/nxos/ (`port_channel_interfaces` is printed by `port-channel-interfaces.j2`).

`config.build` decides every value (qos-group numbering, the queue order NX-OS prints, vPC roles); the
templates print these objects as they are; `dataclasses.asdict` dumps them for the golden tests.
"""

from __future__ import annotations

from rocefab.renderers.record import record


@record
class Features:
    vpc_pair: bool  # interface-vlan, hsrp, lacp and vpc, for a vPC leaf pair
    bfd: bool = False
    # the gRPC agent's gNMI server (in the management VRF, on its default port: no `grpc` lines needed) and the
    # OpenConfig models it serves
    grpc: bool = False


@record
class Breakout:
    cage: int
    map: str


@record
class QosClass:
    name: str
    dscps: str  # comma-separated, as `match dscp` takes them
    qos_group: int


@record
class Ecn:
    min_kbytes: int
    max_kbytes: int
    max_mark_percent: int


@record
class QueuingClass:
    name: str
    strict: bool
    bandwidth_percent: int
    ecn: Ecn | None


@record
class NetworkQosClass:
    name: str
    mtu: int
    pause_cos: int | None


@record
class PauseBuffer:
    """The no-drop class's ingress buffer (bytes): pause sent at `pause_threshold`, the rest up to `buffer_size`
    is the headroom that absorbs what is still on the cable, and traffic resumes below `resume_threshold`."""

    name: str  # the input queuing class, c-in-q<qos-group>
    buffer_size: int
    pause_threshold: int
    resume_threshold: int
    why: str  # the headroom arithmetic, printed as a comment


@record
class Qos:
    classify_policy: str
    queuing_policy: str
    network_policy: str
    classes: tuple[QosClass, ...]
    queues: tuple[QueuingClass, ...]  # all eight, in the order NX-OS prints them
    network_classes: tuple[NetworkQosClass, ...]
    ingress_policy: str = ""
    pause_buffers: tuple[PauseBuffer, ...] = ()  # only where cables are longer than Cisco's 100 m


@record
class Vlan:
    id: int
    name: str


@record
class VrfManagement:
    default_gateway: str


@record
class VpcDomain:
    domain_id: int
    role_priority: int
    keepalive_source: str
    keepalive_destination: str
    keepalive_vrf: str


@record
class VlanInterface:
    vlan: int
    description: str
    mtu: int
    ipv4: str
    virtual_ipv4: str | None  # HSRP group address


@record
class PortChannelInterface:
    name: str
    description: str
    access_vlan: int | None
    trunk_vlans: str | None
    edge: bool
    peer_link: bool
    mtu: int
    vpc: int | None
    classify_policy: str


@record
class EthernetInterface:
    name: str
    description: str
    routed: bool
    access_vlan: int | None  # members repeat their port-channel's switchport settings
    trunk_vlans: str | None
    mtu: int
    channel_group: int | None
    ipv4: str | None
    classify_policy: str
    pfc_watchdog: bool
    # BFD sessions run on it: ICMP redirects off (Cisco's BFD prerequisite), and the timers where they differ
    # from NX-OS's own 50/50/3
    bfd: bool = False
    bfd_timers: tuple[int, int, int] | None = None


@record
class ManagementInterface:
    ipv4: str


@record
class LoopbackInterface:
    ipv4: str


@record
class Neighbor:
    address: str
    remote_asn: int
    description: str
    bfd: bool = False


@record
class RouterBgp:
    asn: int
    router_id: str
    max_paths: int
    networks: tuple[str, ...]
    neighbors: tuple[Neighbor, ...]
    aggregates: tuple[str, ...] = ()  # summary-only, under address-family ipv4 unicast beside the networks


@record
class Dlb:
    """`hardware profile dlb`: dynamic load balancing over the listed routed fabric ports, with the fabric-wide
    virtual next-hop MAC."""

    mode: str  # flowlet | per-packet
    interfaces: tuple[str, ...]
    mac_address: str


@record
class NxosConfig:
    """The sections in the order NX-OS prints them (and templates/nxos/nxos.j2 includes them)."""

    header: tuple[str, ...]
    hostname: str
    features: Features
    breakouts: tuple[Breakout, ...]
    # `ip load-sharing address source-destination port source-destination rotate N`: the five-tuple with this
    # tier's rotation; None leaves NX-OS's own
    load_sharing_rotate: int | None
    dlb: Dlb | None
    qos: Qos
    pfc_watchdog: bool
    vlans: tuple[Vlan, ...]
    vrf_management: VrfManagement | None
    vpc_domain: VpcDomain | None
    vlan_interfaces: tuple[VlanInterface, ...]
    port_channel_interfaces: tuple[PortChannelInterface, ...]
    ethernet_interfaces: tuple[EthernetInterface, ...]
    management_interface: ManagementInterface | None
    loopback_interfaces: tuple[LoopbackInterface, ...]
    router_bgp: RouterBgp
