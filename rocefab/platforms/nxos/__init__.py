"""Cisco NX-OS (Nexus 9000): running-config text over NX-API or SSH (NAPALM `nxos`/`nxos_ssh`; a full
replace uploads over SCP and lets the switch compute the rollback patch)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rocefab.platforms.nxos.disruption import TABLE as DISRUPTION
from rocefab.platforms.nxos.maintenance import GIR
from rocefab.platforms.spec import LoadBalancingSupport, Multihoming, PlatformSpec
from rocefab.platforms.telemetry import QUEUES, SwitchTelemetry
from rocefab.platforms.unit import (
    ContainerlabNode,
    DeviceUnit,
    DiagramStyle,
    EmulatorFactory,
    FileRenderer,
    StructuredBuilder,
)

if TYPE_CHECKING:
    from rocefab.deploy.session import DeviceSession

SPEC = PlatformSpec(
    key="nxos",
    display_name="Cisco NX-OS (Nexus 9000)",
    release="10.5",
    mtu_max_bytes=9216,
    mgmt_interface="mgmt0",
    port_format="Ethernet1/{cage}",
    child_format="Ethernet1/{cage}/{index1}",
    multihoming=(Multihoming.VPC,),
    bgp_unnumbered=False,
    ecmp_max_paths=64,
    # Default reserved block for internal VLANs on Nexus 9000.
    reserved_vlans=((3968, 4095),),
    peer_vlan_default=3967,
    lag_format="port-channel{n}",
    peer_link_lag="port-channel1000",
    peer_session_interface=None,
    # NX-OS serves strict priority only on its highest-numbered qos-groups (N9K 10.5 QoS guide, queuing
    # guidelines), so the CNP class takes group 7 there, as in Cisco's RoCE configurations.
    strict_qos_group=7,
    # The watchdog's interval and multiplier commands could not be confirmed from a vendor source: NX-OS
    # runs it with its defaults.
    pfc_watchdog_timers=False,
    # Recovery is automatic (a shut queue is polled every 100 ms and restored when no PFC frames arrive; its
    # timing follows the auto-/fixed-restore multipliers, whose 10.5 keywords are unconfirmed): not rendered.
    pfc_watchdog_recovery=False,
    keepalive_out_of_band=True,
    # rocefab's classification policy ends in `class class-default` -> `set qos-group 0`: a DSCP no class
    # matches lands in group 0, so only the named DSCPs need classes.
    default_dscp_classes=(0,) * 64,
    # Over 100 m the no-drop class's `pause buffer-size ... pause-threshold ... resume-threshold ...` is
    # mandatory, in the input queuing policy (NX-OS 10.5 QoS guide, "Configuring Priority Flow Control",
    # guidelines); under it the platform's own buffer applies.
    headroom_by="pause-buffer",
    headroom_rendered_above_m=100,
    # NX-OS 10.5 Interfaces guide, BFD default settings: 50 ms / 50 ms / 3; an interface `bfd interval 50
    # min_rx 50 multiplier 3` does not show in the running config.
    bfd_default_timers=(50, 50, 3),
    # `feature grpc` starts the gRPC agent (gNMI and gNOI) on TCP 50051 (`grpc port`, 1024-65535), answering in
    # the management VRF unless `grpc use-vrf default` adds the default one (NX-OS 10.6 Programmability Guide,
    # "gRPC Agent"; no 10.5 edition was found, and the 50051 / management-VRF defaults are as Cisco's TechNote
    # 220640 shows them on 9.3(9), not read from a 10.x page). It is TLS only: without `grpc certificate
    # <trustpoint>` the switch presents its own self-signed certificate, which that TechNote shows valid for one
    # day. OpenConfig paths also need `feature openconfig` (Cisco Network as Code, NX-OS gRPC). Get, Set,
    # Subscribe and Capabilities (10.4 guide, "gNMI-gRPC Network Management Interface"). Sources:
    # https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/106x/programmability/cisco-nexus-9000-series-nx-os-programmability-guide-106x/m-grpc-agent.html
    # https://netascode.cisco.com/docs/data_models/nxos/system/grpc/
    # Dynamic load balancing (Cloud Scale, 10.5(1)F): `hardware profile dlb` with `mode flowlet|per-packet`, the
    # fabric-facing `dlb-interface` list and the DLB `mac-address`, the virtual next hop every DLB switch of the
    # fabric must share (Nexus 9000 NX-OS Unicast Routing Configuration Guide 10.5(x), "Configure Dynamic Load
    # Balancing": supported with RoCE, PFC and ECN; exact lines from Cisco's own pyATS library, genielibs
    # conf/dlb/nxos/tests/test_dlb.py, "configuration example from the guide for CloudScale switches", which joins
    # the list with " , "). Secondary sources only: Cloud Scale GX2 among the platforms, L3 physical interfaces
    # only, default MAC 00:CC:CC:CC:CC:CC, and that the profile is listed by `show system config reload-pending`
    # ("require copy r s + reload"), so a change of it is a reload-class change. NX-OS has a generic ECMP UDF
    # (`ip load-sharing address source-destination udf offset <o> length <l>`, Interfaces guide 10.3(x)) but Cisco
    # names neither GX2 nor a RoCE queue-pair use for it: no queue-pair hash here.
    # `ip load-sharing address source-destination port source-destination rotate <1-63>` (Interfaces guide, "Configuring
    # ECMP Load Balancing")
    hash_rotation=True,
    load_balancing=(LoadBalancingSupport(
        ("CloudScale GX2A", "CloudScale GX2B"), roce_qp_hash=False, dynamic=("flowlet", "per-packet"),
        source="Cisco Nexus 9000 Unicast Routing Configuration Guide 10.5(x), Configure Dynamic Load Balancing; "
               "genielibs conf/dlb/nxos tests (CloudScale example)",
        dynamic_unconfirmed="GX2 among DLB's platforms, the reload, the form NX-OS prints the dlb-interface list "
                            "in and how long a line it takes are from secondary sources or not confirmed"),),
    dlb_lists_ports=True,
    dlb_mac=True,
    reload_sections=("hardware profile dlb", "hardware access-list tcam region"),
    dlb_reload_sections=("hardware profile dlb",),
    gnmi_port=50051,
    gnmi_tls=True,
    gnmi_get=True,
    telemetry=SwitchTelemetry(
        paths=(f"{QUEUES}/dropped-pkts", f"{QUEUES}/transmit-pkts"),
        queue_name="c-out-8q-q{n}", class_default_queue="c-out-8q-q-default",
        queue_drops=("dropped-pkts",), queue_ecn_marked=None,
        pfc=None,  # only in the NX-OS device YANG (per queuing class): not subscribed yet
        watchdog=None,
        source="Cisco Nexus 9000 OpenConfig YANG 10.3(x) guide, OC QoS: output queue statistics"),
)

# Blocks of the running config a replace keeps: accounts, management access and the management-plane services.
# The AAA server lines and keys (with `feature tacacs+`, which they need), top-level resolvers and the banner
# joined with the intent's services section: where the intent renders a kind of line, the device's lines of that
# kind give way (deploy/preserve.RENDERED_FAMILIES), and the secrets beside them stay.
PRESERVED = (
    "version ", "username ", "feature ssh", "feature nxapi", "feature scp-server", "ssh ", "aaa ", "role ",
    "interface mgmt0", "vrf context management", "boot ", "line ", "snmp-server ", "ntp ", "logging ",
    "ip domain", "copp profile", "rmon ", "nxapi ", "ip name-server ", "feature tacacs+", "tacacs-server ",
    "radius-server ", "banner ",
)


def _container_interfaces(ports: Sequence[str]) -> list[str]:
    """Nexus 9000v counts `eth1`, `eth2`, ...: `ethN` is `Ethernet1/N` inside NX-OS."""
    return [f"eth{i}" for i in range(1, len(ports) + 1)]


def _structured() -> StructuredBuilder:
    from rocefab.platforms.nxos.config import build

    return build


def _files() -> FileRenderer:
    from rocefab.platforms.nxos.config import render_switch

    return render_switch


def _session() -> type[DeviceSession]:
    from rocefab.platforms.nxos.session import NxosSession

    return NxosSession


def _emulator() -> EmulatorFactory:
    from rocefab.platforms.nxos.emulator import start

    return start


UNIT = DeviceUnit(
    key="nxos",
    display_name=SPEC.display_name,
    spec=SPEC,
    disruption=DISRUPTION,
    maintenance=GIR,
    target=f"{SPEC.display_name} {SPEC.release}",
    candidate_kind="nxos-config",
    transports=("nxapi", "nxos-ssh"),
    nornir_platforms=(("nxos", "nxapi"), ("nxos_ssh", "nxos-ssh"), ("cisco_nxos", "nxos-ssh")),
    structured=_structured,
    files=_files,
    session=_session,
    emulator=_emulator,
    containerlab=ContainerlabNode(
        kind="cisco_n9kv", image="vrnetlab/cisco_n9kv", release_name="NX-OS", interfaces=_container_interfaces,
        interfaces_note="cisco_n9kv counts eth1, eth2, ... (Ethernet1/1, Ethernet1/2, ... in NX-OS)",
        note="Nexus 9000v VM packaged with srl-labs/vrnetlab; needs /dev/kvm and by default 10 GB RAM and 4 vCPUs "
             "per node (n9kv-lite: set env QEMU_MEMORY: 6144 and QEMU_SMP: 2 on the kind)."),
    diagram=DiagramStyle("#dcf1e2", "#1e7b3c", 12, SPEC.display_name),
    preserved=PRESERVED,
)
