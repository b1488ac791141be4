"""EOS structured config: one frozen dataclass per section of the running-config, named after the section's
template in templates/eos/ (`ethernet_interfaces` is printed by `ethernet-interfaces.j2`).

`config.build` decides every value from the plan; the templates print these objects as they are. The whole
object dumps to JSON (`dataclasses.asdict`), which is how the golden tests read it on its own.
"""

from __future__ import annotations

from rocefab.renderers.record import record


@record
class ManagementApi:
    vrf: str | None  # eAPI also listens in the management VRF


@record
class ManagementApiGnmi:
    """The gNMI server: one gRPC transport, on EOS's default port (not printed, as EOS hides it)."""

    transport: str
    vrf: str | None  # None: the default VRF, where eAPI listens too when there is no management VRF


@record
class Ecn:
    unit: str  # "kbytes" or "segments", as `random-detect ecn` takes them
    min_threshold: int
    max_threshold: int
    max_mark_percent: int


@record
class TxQueue:
    id: int
    strict: bool
    bandwidth_percent: int
    ecn: Ecn | None


@record
class QosProfile:
    name: str
    pfc_priorities: tuple[int, ...]
    pfc_watchdog: bool
    queue_keyword: str  # uc-tx-queue on Strata chips, tx-queue elsewhere
    queues: tuple[TxQueue, ...]


@record
class SpanningTree:
    disabled_vlans: int


@record
class Vlan:
    id: int
    name: str
    trunk_group: str | None


@record
class PortChannelInterface:
    name: str
    description: str
    access_vlan: int | None
    trunk_group: str | None
    mlag: int | None
    edge: bool


@record
class EthernetInterface:
    name: str
    description: str
    shutdown: bool
    mtu: int | None  # routed ports only: switched ports carry jumbo frames by default
    speed: str | None
    channel_group: int | None
    routed: bool
    ipv4: str | None
    ipv6_enable: bool
    service_profile: str | None


@record
class LoopbackInterface:
    ipv4: str


@record
class ManagementInterface:
    name: str
    vrf: str
    ipv4: str


@record
class VlanInterface:
    vlan: int
    description: str
    mtu: int
    no_autostate: bool
    ipv4: str
    virtual_ipv4: str | None


@record
class IpRouting:
    ipv6_interfaces: bool  # IPv4 over IPv6 link-local next hops (RFC 8950), for BGP unnumbered
    no_routing_vrf: str | None


@record
class MlagConfiguration:
    domain_id: str
    peer_vlan: int
    peer_address: str
    heartbeat: str | None
    heartbeat_vrf: str | None
    peer_link: str
    reload_delay_mlag_s: int
    reload_delay_non_mlag_s: int


@record
class StaticRoute:
    vrf: str
    prefix: str
    next_hop: str


@record
class DscpMap:
    dscps: str  # space-separated, as EOS takes them
    traffic_class: int


@record
class PfcWatchdogDefaults:
    timeout_s: str
    recovery_s: str
    polling_s: str


@record
class Qos:
    dscp_maps: tuple[DscpMap, ...]
    watchdog: PfcWatchdogDefaults | None


@record
class NumberedNeighbor:
    address: str
    group: str
    remote_asn: int
    description: str


@record
class InterfaceNeighbor:
    interface: str
    group: str
    remote_asn: int


@record
class RouterBgp:
    asn: int
    router_id: str
    max_paths: int
    groups: tuple[str, ...]
    numbered: tuple[NumberedNeighbor, ...]
    unnumbered: tuple[InterfaceNeighbor, ...]
    ipv6_next_hop_groups: tuple[str, ...]
    networks: tuple[str, ...]
    bfd_groups: tuple[str, ...] = ()  # peer groups whose sessions run BFD
    aggregates: tuple[str, ...] = ()  # summary-only: peers receive these instead of the networks inside them


@record
class RouterBfd:
    """Global BFD timers, rendered only where they differ from EOS's."""

    interval_ms: int
    min_rx_ms: int
    multiplier: int


@record
class LoadBalance:
    """RoCE load balancing on Strata: user-defined hash fields (outer L4 byte offsets, each masked 0xff) and
    dynamic load balancing of ECMP groups, with its flow-set size (None: the platform's)."""

    udf_offsets: tuple[int, ...]
    dynamic: bool
    flow_set_size: int | None


@record
class EosConfig:
    """The sections in the order EOS prints them (and templates/eos/eos.j2 includes them)."""

    header: tuple[str, ...]
    management_api: ManagementApi
    management_api_gnmi: ManagementApiGnmi | None
    hostname: str
    qos_profiles: tuple[QosProfile, ...]
    spanning_tree: SpanningTree | None
    load_balance: LoadBalance | None
    vlans: tuple[Vlan, ...]
    vrfs: tuple[str, ...]
    port_channel_interfaces: tuple[PortChannelInterface, ...]
    ethernet_interfaces: tuple[EthernetInterface, ...]
    loopback_interfaces: tuple[LoopbackInterface, ...]
    management_interfaces: tuple[ManagementInterface, ...]
    vlan_interfaces: tuple[VlanInterface, ...]
    ip_virtual_router_mac: str | None
    ip_routing: IpRouting
    mlag_configuration: MlagConfiguration | None
    static_routes: tuple[StaticRoute, ...]
    qos: Qos
    router_bfd: RouterBfd | None
    router_bgp: RouterBgp
