"""The intent schema: one YAML document describing a lossless RoCEv2 training fabric.

Every field carries its unit in its name. Defaults follow the de-facto AI-fabric convention (RoCE DSCP 26 on
priority 3 with PFC and ECN, CNP DSCP 48 on strict priority 6, MTU 9000 on hosts and 9216 on switches) so a
short intent already describes a complete, consistent fabric.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Literal

# Strict numbers and booleans: "yes" is not true and "2" is not a number, whatever lax coercion would
# make of them; YAML already gives real ints and booleans.
from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    Tag,
    model_validator,
)

from rocefab.models.base import IntentModel
from rocefab.models.hosts_intent import Hosts
from rocefab.models.media import REACH_M, Medium
from rocefab.models.operations import Acceptance, Monitoring
from rocefab.models.qos_intent import Qos
from rocefab.models.services import Services
from rocefab.models.types import (
    DeviceName,
    Distinct,
    Ipv4Address,
    Ipv4Network,
    MacAddress,
    ModelName,
    NameFormat,
    PortName,
    SpeedGbps,
    Text,
    VlanName,
    whole_number_choice,
)
from rocefab.platforms import switch_specs
from rocefab.platforms.spec import Multihoming

Asn = Annotated[StrictInt, Field(ge=1, le=4_294_967_294, description="BGP autonomous system number (asplain)")]
Cage = Annotated[StrictInt, Field(ge=1, le=1024, description="front-panel cage number, from 1")]


class FabricInfo(IntentModel):
    name: DeviceName = Field(description="fabric name, printed in every generated file header")
    description: Text = Field("", description="one line about the fabric: the topology diagram's title shows it "
                                              "beside the name, and the plan records it")


# --- QoS -----------------------------------------------------------------------------------------------


class Mtu(IntentModel):
    host_bytes: StrictInt = Field(9000, ge=1280, le=9216, description="IP MTU on host NICs and bonds")
    switch_bytes: StrictInt = Field(
        9216, ge=1500, le=9216, description="interface MTU on switches; capped at each NOS's maximum"
    )


# --- addressing ------------------------------------------------------------------------------------------


class Vlan(IntentModel):
    id: StrictInt = Field(ge=1, le=4094, description="802.1Q VLAN id, 1-4094 (each platform's reserved range is "
                                                     "checked at validation)")
    name: VlanName = Field(description="VLAN name configured on the leaves, e.g. train-rail0")
    subnet: Ipv4Network = Field(description="supernet; each leaf pair routes one slice of it")
    pair_prefix_length: StrictInt = Field(
        24, ge=16, le=29, description="prefix length of the slice each leaf pair gets"
    )


class Asns(IntentModel):
    spine: Asn = Field(description="shared by every spine (three tiers: spines of pod p take spine + p)")
    leaf_first: Asn = Field(description="first leaf ASN; leaves count up from here, one ASN each")
    superspine: Asn | None = Field(None, description="shared by every super-spine; needed for three tiers")


class Bfd(IntentModel):
    """BFD on every BGP session, so a failed link leaves ECMP in about interval x multiplier instead of the
    BGP hold time. The ranges are what all three NOSes take (NX-OS 50-999 ms, EOS multiplier 3-50)."""

    enabled: StrictBool = Field(True, description="BFD on every BGP session of the fabric")
    interval_ms: StrictInt = Field(300, ge=50, le=999, description="transmit interval")
    min_rx_ms: StrictInt = Field(300, ge=50, le=999, description="slowest receive interval accepted")
    multiplier: StrictInt = Field(3, ge=3, le=50, description="missed packets before the session is down")


# What ECMP hashes on: the five-tuple, or the five-tuple and the RoCE queue pair (the BTH destination QP, where
# the ASIC can hash on bytes of the UDP payload).
EcmpHash = Literal["five-tuple", "roce-qp"]
# Dynamic load balancing: none, flowlet (a flow moves to a less loaded path only after a gap long enough that its
# packets cannot overtake each other) or per-packet (spraying: receivers must place out-of-order packets).
Dynamic = Literal["none", "flowlet", "per-packet"]


class PlatformLoadBalancing(IntentModel):
    """One platform's choice, replacing the fabric's where given (a mixed fabric's platforms differ in what their
    ASICs can do)."""

    ecmp_hash: EcmpHash | None = Field(None, description="default: the fabric's ecmp_hash")
    dynamic: Dynamic | None = Field(None, description="default: the fabric's dynamic")


def _switch_platforms(entries: dict[str, PlatformLoadBalancing]) -> dict[str, PlatformLoadBalancing]:
    """by_platform's keys are the switch platforms rocefab has units for (rocefab/platforms/)."""
    known = sorted(switch_specs())
    for key in entries:
        if key not in known:
            raise ValueError(f"{key!r} is not a switch platform; known: {', '.join(known)}")
    return entries


ByPlatform = Annotated[dict[str, PlatformLoadBalancing], AfterValidator(_switch_platforms),
                       Field(json_schema_extra={"propertyNames": {"enum": sorted(switch_specs())}})]


class LoadBalancing(IntentModel):
    """How ECMP spreads RoCE. Each queue pair is one UDP flow to port 4791 whose source port the NIC varies per
    QP, so the five-tuple hash (addresses, protocol, both L4 ports) spreads QPs on every platform; NX-OS gets a
    hash rotation of its own per tier, so no two tiers split a flow set the same way (polarization). Where the
    ASIC can, the hash also takes the destination QP (roce-qp), and dynamic load balancing moves flowlets (or
    packets) to the least loaded path. A switch model that cannot do what is asked is an error naming it."""

    ecmp_hash: EcmpHash = Field("five-tuple", description="fields every switch hashes ECMP on: five-tuple, or "
                                                          "roce-qp (five-tuple plus the RoCE destination queue pair)")
    dynamic: Dynamic = Field("none", description="dynamic load balancing on the routed fabric ports: none, flowlet "
                                                 "or per-packet (per-packet needs NICs that place out-of-order "
                                                 "packets)")
    by_platform: ByPlatform = Field({}, description="per switch platform (eos, nxos, cumulus): ecmp_hash / "
                                                    "dynamic replacing the fabric's on that platform's switches")
    dlb_mac: MacAddress = Field("00:cc:cc:cc:cc:cc", description="NX-OS dynamic load balancing: the virtual next-hop "
                                                                "MAC every DLB switch of the fabric shares")
    dlb_flow_set_size: StrictInt | None = Field(
        None, ge=1, le=7, description="EOS dynamic load balancing: flow-set size 1 (128 ECMP groups x 256 entries) "
                                      "to 7 (2 groups x 16,384); default: the platform's")
    rotate_per_tier: StrictBool = Field(True, description="NX-OS: a different hash rotation on each tier")
    adaptive_routing: StrictBool = Field(
        False, description="Spectrum-4 adaptive routing (per-packet, Spectrum-X) on the 200G/400G routed fabric "
                           "ports; the receiving NICs must place out-of-order packets (BlueField-3 SuperNIC)")

    def for_platform(self, platform: str) -> tuple[EcmpHash, Dynamic]:
        """(ecmp_hash, dynamic) on a platform's switches: its own where given, else the fabric's."""
        own = self.by_platform.get(platform)
        if own is None:
            return self.ecmp_hash, self.dynamic
        return own.ecmp_hash or self.ecmp_hash, own.dynamic or self.dynamic


class Underlay(IntentModel):
    asn: Asns = Field(description="eBGP autonomous system numbers per tier")
    ecmp_max_paths: StrictInt = Field(64, ge=1, le=128, description="BGP multipath limit: equal-cost paths installed "
                                                                     "per prefix")
    loopback_subnet: Ipv4Network = Field(description="router-id / loopback0 addresses, one /32 each")
    p2p_subnet: Ipv4Network = Field(description="/31 leaf-spine links that cannot be unnumbered")
    peer_link_subnet: Ipv4Network | None = Field(
        None, description="/31 per leaf pair for the MLAG/vPC peer SVI (ToR dual-homed designs)"
    )
    host_subnet: Ipv4Network | None = Field(
        None, description="rail-optimized: a /31 per host NIC and its leaf port, one slice per rail"
    )
    unnumbered: Literal["auto", "never"] = Field(
        "auto", description="auto: BGP unnumbered on links where both ends support it"
    )
    bfd: Bfd = Field(Bfd(), description="BFD on the BGP sessions: on by default, 300 ms x 3")
    load_balancing: LoadBalancing = Field(LoadBalancing(), description="ECMP hashing of RoCE flows")


# --- topology --------------------------------------------------------------------------------------------


class Spines(IntentModel):
    model: ModelName = Field(description="spine switch model, from the device catalogue")
    count: StrictInt = Field(ge=1, le=128, description="number of spines; every leaf has uplinks_per_spine links "
                                                       "to each")
    name_format: NameFormat = Field("spine{n}", description="spine names, {n} counting from 1, e.g. spine{n} gives "
                                                            "spine1, spine2, ...")
    names: Annotated[tuple[DeviceName, ...], Distinct] | None = Field(
        None, description="explicit names, overriding name_format")


class PortOverrides(IntentModel):
    host_cages_from: StrictInt | None = Field(None, ge=1, description="first front-panel cage for host links")
    uplink_cages: Annotated[tuple[Cage, ...], Distinct] | None = Field(
        None, description="cages for spine uplinks, in order")
    peer_link_cages: Annotated[tuple[Cage, ...], Distinct] | None = Field(
        None, description="cages for the peer link")


class LeafDefaults(IntentModel):
    uplinks_per_spine: StrictInt = Field(1, ge=1, le=32, description="parallel links from every leaf to each spine")
    uplink_speed_gbps: SpeedGbps | None = Field(
        None, description="default: the fastest speed both ends offer"
    )
    peer_link_links: StrictInt = Field(2, ge=1, le=16, description="member links of the MLAG/vPC peer link "
                                                                   "between the two leaves of a pair")
    peer_link_speed_gbps: SpeedGbps | None = Field(None, description="default: the leaf's native cage speed")

    ports: PortOverrides = Field(PortOverrides(), description="front-panel cage choices for every leaf pair; "
                                                              "default: rocefab picks them")


class LeafPair(IntentModel):
    name: DeviceName = Field(description="pair name; its leaves are <name>-a and <name>-b unless `leaves` names them")
    model: ModelName = Field(description="leaf switch model of both leaves, from the device catalogue")
    hosts: StrictInt = Field(0, ge=0, le=1024, description="number of dual-homed hosts on this pair")
    host_names: Annotated[tuple[DeviceName, ...], Distinct] | None = Field(None, description="explicit host names")
    leaves: Annotated[tuple[DeviceName, DeviceName], Distinct] | None = Field(
        None, description="explicit leaf names")
    multihoming: Multihoming | None = Field(None, description="default: the platform's native choice")
    ports: PortOverrides | None = Field(None, description="cage choices for this pair only, replacing leaf.ports")

    @model_validator(mode="after")
    def _hosts_match_names(self) -> LeafPair:
        if self.host_names is not None and self.hosts not in (0, len(self.host_names)):
            raise ValueError(
                f"hosts is {self.hosts} but host_names lists {len(self.host_names)}; give one or make them agree"
            )
        return self

    @property
    def host_count(self) -> int:
        return len(self.host_names) if self.host_names is not None else self.hosts

    @property
    def leaf_names(self) -> tuple[str, str]:
        return self.leaves if self.leaves is not None else (f"{self.name}-a", f"{self.name}-b")


class Topology(IntentModel):
    """Every leaf pair and the spine layer spelled out."""

    design: Literal["tor-dual-homed"] = Field(
        "tor-dual-homed", description="an explicit topology is always ToR pairs with dual-homed hosts")
    spines: Spines = Field(description="the spine layer")
    leaf: LeafDefaults = Field(LeafDefaults(), description="settings every leaf pair shares")
    leaf_pairs: tuple[LeafPair, ...] = Field(min_length=1, description="the ToR leaf pairs, in order; hosts are "
                                                                       "numbered across them in this order")


class TierModels(IntentModel):
    leaf: ModelName = Field(description="leaf switch model, from the device catalogue")
    spine: ModelName = Field(description="spine switch model, from the device catalogue")
    superspine: ModelName | None = Field(None, description="default: the spine model")


class ClosNames(IntentModel):
    """Python format strings; n counts from 1 within each tier."""

    leaf: NameFormat = Field("leaf{n:03d}", description="leaf names of a rail-optimized fabric; ToR leaves are "
                                                        "named after their pair (see pair) with -a and -b")
    spine: NameFormat = Field("spine{n:03d}", description="spine names")
    superspine: NameFormat = Field("super{n:03d}", description="super-spine names (three tiers)")
    pair: NameFormat = Field("rack{n:03d}", description="ToR dual-homed: leaf pairs, whose leaves get -a and -b")


class Clos(IntentModel):
    """A fabric sized from the cluster: rocefab derives the tiers, switch counts, pods, rails and cabling."""

    design: Literal["tor-dual-homed", "rail-optimized"] = Field(
        description="tor-dual-homed: every server bonds dual-port NICs across a leaf pair; rail-optimized: NIC i of "
                    "every server goes to a leaf of rail i, single-homed")
    nodes: StrictInt = Field(ge=1, le=65536, description="GPU servers")
    nics_per_node: StrictInt = Field(
        ge=1, le=16, description="fabric NICs per server: rails (rail-optimized) or dual-port bonds (ToR)"
    )
    nic_speed_gbps: SpeedGbps = Field(description="speed of each NIC port, in Gb/s")
    models: TierModels = Field(description="switch model of each tier")
    oversubscription: Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,2}:[1-9][0-9]{0,2}$")] = Field(
        "1:1", description="host bandwidth : uplink bandwidth on every leaf and spine"
    )
    uplink_speed_gbps: SpeedGbps | None = Field(None, description="default: the NIC speed")
    pod_nodes: StrictInt | None = Field(None, ge=1, description="servers per pod; default: as many as fit")
    spare_ports_per_leaf: StrictInt = Field(0, ge=0, le=256, description="ports kept free on every leaf")
    tiers: Annotated[Literal["auto", 2, 3], whole_number_choice("auto", 2, 3)] = Field(
        "auto", description="auto: two tiers when one spine layer can connect")
    spines_per_pod: StrictInt | None = Field(
        None, ge=1, le=512, description="pin the spine count (per pod in three tiers); default: the fewest that fit"
    )
    names: ClosNames = Field(ClosNames(), description="name formats of the switches rocefab sizes")

    @property
    def ratio(self) -> tuple[int, int]:
        down, up = self.oversubscription.split(":")
        return int(down), int(up)


# --- hosts -----------------------------------------------------------------------------------------------


class Management(IntentModel):
    """Out-of-band management addressing of the switches (mgmt VRF, management port)."""

    subnet: Ipv4Network = Field(description="management network of the switches; each takes one address of it")
    gateway: Ipv4Address = Field(description="default gateway of the management VRF, inside subnet")
    first_offset: StrictInt = Field(10, ge=1, description="the first switch gets subnet address number first_offset")


class CableLengths(IntentModel):
    """The length assumed for every cable of a class, for PFC headroom. The class is the medium rocefab picks
    from rack placement (inside a rack copper, across a pod multimode, between pods and to super-spines
    single-mode); the default is the farthest that medium reaches, so headroom errs on the safe side."""

    copper_m: StrictInt = Field(REACH_M[Medium.COPPER], ge=1, le=REACH_M[Medium.COPPER],
                                description="DAC cables inside a rack (servers to their ToR, MLAG peer links)")
    multimode_m: StrictInt = Field(REACH_M[Medium.MULTIMODE], ge=1, le=REACH_M[Medium.MULTIMODE],
                                   description="SR4 fibre between racks of one pod")
    single_mode_m: StrictInt = Field(REACH_M[Medium.SINGLE_MODE], ge=1, le=REACH_M[Medium.SINGLE_MODE],
                                     description="DR4 fibre between pods and up to the super-spines")


class MeasuredCable(IntentModel):
    """One cable's real length, named by the switch port at either of its ends."""

    device: DeviceName = Field(description="switch at one end of the cable, as the plan names it")
    port: PortName = Field(description="that switch's port, e.g. Ethernet1/1 or swp1s0")
    length_m: StrictInt = Field(ge=1, le=REACH_M[Medium.SINGLE_MODE],
                                description="measured length; at most the reach of the medium the plan gives it")


class Cabling(IntentModel):
    lengths: CableLengths = Field(CableLengths(), description="length assumed per cable class (for PFC headroom)")
    measured: tuple[MeasuredCable, ...] = Field(
        (), description="cables whose length is known, overriding their class's length (never above its reach)")


class Racks(IntentModel):
    """Where equipment stands, for the cabling plan: servers fill compute racks in order (a ToR pair's
    servers never share a rack with another pair's, and the pair stands in its first rack); spines,
    rail leaves and super-spines fill network racks per pod."""

    nodes_per_rack: StrictInt = Field(4, ge=1, le=64, description="servers per compute rack (power-bound for GPU "
                                                                   "servers: 4 x 10 kW is typical)")
    switches_per_network_rack: StrictInt = Field(8, ge=1, le=48, description="switches per network rack")


# Union tags: they show in pydantic's error locations, which the loader removes, so they cannot be keys.
EXPLICIT_TAG, SIZED_TAG = "explicit-topology", "sized-topology"
SHAPE_KEY = "nodes"  # the key whose presence makes a topology sized


def _topology_kind(value: object) -> str:
    """A topology that gives a node count is sized by rocefab; otherwise it lists its leaf pairs.

    Without `nodes`, the keys decide: a topology with a key only the sized shape has (nics_per_node, models)
    or with a misspelling of `nodes` is a sized one with a typo, and gets one error about that key, not a
    list of everything the explicit shape misses."""
    if not isinstance(value, dict):
        return SIZED_TAG if isinstance(value, Clos) else EXPLICIT_TAG
    if SHAPE_KEY in value:
        return SIZED_TAG
    keys = {k for k in value if isinstance(k, str)}
    if keys & (set(Topology.model_fields) - set(Clos.model_fields)):
        return EXPLICIT_TAG
    if keys & (set(Clos.model_fields) - set(Topology.model_fields)):
        return SIZED_TAG
    return SIZED_TAG if any(difflib.get_close_matches(k, [SHAPE_KEY], cutoff=0.6) for k in keys) else EXPLICIT_TAG


class Intent(IntentModel):
    """A lossless RoCEv2 training fabric: QoS, MTU, VLANs, underlay, topology and hosts."""

    schema_version: Annotated[Literal[1], whole_number_choice(1)] = Field(
        1, description="version of this schema; 1, the only one so far")
    fabric: FabricInfo = Field(description="the fabric's name and description")
    qos: Qos = Field(Qos(), description="lossless RoCE classes: DSCP marking, PFC, ECN and bandwidth shares")
    mtu: Mtu = Field(Mtu(), description="MTUs of hosts and switches")
    vlans: tuple[Vlan, ...] = Field((), description="training VLANs (ToR dual-homed designs)")
    underlay: Underlay = Field(description="BGP underlay: ASNs, address pools, BFD and ECMP")
    topology: Annotated[
        Annotated[Topology, Tag(EXPLICIT_TAG)] | Annotated[Clos, Tag(SIZED_TAG)],
        Discriminator(_topology_kind),
    ] = Field(description="either every leaf pair spelled out (spines, leaf_pairs) or a cluster size rocefab "
                           "builds the fabric for (design, nodes, nics_per_node, ...)")
    hosts: Hosts = Field(description="the GPU servers' NICs, bonds and NCCL settings")
    management: Management | None = Field(
        None, description="switch management addresses; needed for vPC keepalives and MLAG backup links"
    )
    racks: Racks = Field(Racks(), description="rack placement for the cabling plan and cable classes")
    cabling: Cabling = Field(Cabling(), description="cable lengths for PFC headroom")
    monitoring: Monitoring = Field(Monitoring(), description="thresholds of the rendered alert rules")
    acceptance: Acceptance = Field(Acceptance(), description="targets of the rendered bandwidth tests")
    services: Services | None = Field(
        None, description="management-plane services of every switch (NTP, syslog, DNS, SNMP identity, AAA "
                          "servers, banner) and raw lines per platform and role; no secrets")
