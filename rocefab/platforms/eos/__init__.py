"""Arista EOS: running-config text over eAPI (NAPALM `eos`: configuration sessions, commit timer)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rocefab.platforms.eos.disruption import TABLE as DISRUPTION
from rocefab.platforms.maintenance import Maintenance
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
    key="eos",
    display_name="Arista EOS",
    release="4.34",
    mtu_max_bytes=9214,
    mgmt_interface="Management1",
    port_format="Ethernet{cage}/1",
    child_format="Ethernet{cage}/{lane}",
    multihoming=(Multihoming.MLAG,),
    bgp_unnumbered=True,
    ecmp_max_paths=128,
    reserved_vlans=(),
    peer_vlan_default=4094,
    lag_format="Port-Channel{n}",
    peer_link_lag="Port-Channel1000",
    peer_session_interface=None,
    # Arista's recommended MLAG reload delays: MLAG ports stay down 300 s after a reboot, others 330 s.
    mlag_reload_delay_s=300,
    non_mlag_reload_delay_s=330,
    # EOS's built-in DSCP -> traffic-class map, as a secondary source (an EOS RoCE configuration write-up) gives
    # it: d >> 3 except that the two lowest classes swap (DSCP 0-7 -> class 1, 8-15 -> class 0). Arista's AI
    # fabric guide confirms only CS3 -> TC3. Rendering does not rely on it (all 64 entries are written); verify's
    # reader uses it only for an entry a running-config leaves out.
    default_dscp_classes=tuple(1 if d < 8 else 0 if d < 16 else d >> 3 for d in range(64)),
    # EOS documents no per-port headroom or cable-length input (the MMU sizes headroom; the only override,
    # `platform trident mmu queue profile ... ingress headroom`, is global and unverified for these ASICs): a
    # finding names the switches whose cables are longer than 100 m.
    headroom_by="none",
    headroom_rendered_above_m=100,
    # BFD runs 300 ms / 300 ms / 3 unless configured (EOS defaults as Arista's AVD designs assume them).
    bfd_default_timers=(300, 300, 3),
    # `management api gnmi` / `transport grpc <name>` starts the OpenConfig gNMI server on TCP 6030, in the VRF
    # the transport names (default VRF without one); only an `ssl profile` under the transport makes it TLS, and
    # rocefab renders none, so collectors dial in plaintext (Arista openmgmt, "OpenConfig" configuration page:
    # https://aristanetworks.github.io/openmgmt/configuration/openconfig/). EOS serves Get, Set, Subscribe and
    # Capabilities (https://aristanetworks.github.io/openmgmt/protocols).
    # RoCE load balancing on the Strata (Trident/Tomahawk) fixed switches of the catalogue. Queue-pair hashing: three
    # user-defined hash fields on bytes 13-15 after the start of the outer L4 header (8 bytes of UDP, then the BTH,
    # whose bytes 5-7 are the destination QP): `port-channel load-balance trident udf eth-type IPv4 header outer l4
    # offset <13|14|15> mask 0xff` (aristanetworks/avd #5386 "Support ROCEv2 static hashing in TH platforms", CLI
    # help `offset <0-64>`, `mask 0x01-0xFF`; eth-type printed `IPv4` as pyavd's eos_cli_config_gen renders it,
    # molecule host1.cfg). Dynamic load balancing: flow sets move to the least loaded member after an idle gap, i.e.
    # flowlets: `ip hardware fib load-balance distribution dynamic`, with `... dynamic flow-set-size <1-7>` on a
    # line of its own (EOS TOI 4.24.2F "Support for dynamic load balancing on ECMP groups", cited in avd #4920 with
    # the CLI help; pyavd ip-hardware.j2 and ip_hardware schema). Not confirmed here: that the UDF feeds the ECMP
    # hash as well as the LAG hash (check `show load-balance` on the release), and which Strata models run DLB (the
    # TOI is not in the stored sources; AVD notes vEOS cannot). Jericho ("sand") switches hash the QP with `load-
    # balance sand profile` (4.33.1F+), but no catalogue model is a Jericho switch.
    load_balancing=(LoadBalancingSupport(
        ("Tomahawk 4", "Tomahawk 5", "Trident 4"), roce_qp_hash=True, dynamic=("flowlet",),
        source="aristanetworks/avd #5386 (UDF offsets 13-15), #4920 and pyavd ip-hardware.j2 (EOS TOI 4.24.2F "
               "dynamic load balancing on ECMP groups)",
        roce_qp_hash_unconfirmed="that EOS feeds the user-defined fields into the ECMP hash as well as the LAG hash "
                                 "is not confirmed (check `show load-balance` on the release)",
        dynamic_unconfirmed="which Strata models run dynamic load balancing is not confirmed (the TOI is not in the "
                            "sources read; vEOS cannot)"),),
    dlb_flow_set_size=True,
    gnmi_port=6030,
    gnmi_tls=False,
    gnmi_get=True,
    telemetry=SwitchTelemetry(
        paths=(f"{QUEUES}/dropped-pkts", f"{QUEUES}/transmit-pkts", f"{QUEUES}/ecn-marked-pkts",
               "/interfaces/interface/ethernet/pfc/priorities/priority/state/in-frames",
               "/interfaces/interface/ethernet/pfc/priorities/priority/state/out-frames",
               "/interfaces/interface/ethernet/pfc/watchdog/tx-queues/tx-queue/state/stuck-count"),
        # TODO(confirm on 4.34): the queue names of EOS's openconfig-qos list, taken as the traffic class number
        queue_name="{n}",
        queue_drops=("dropped-pkts",), queue_ecn_marked="ecn-marked-pkts",
        pfc=("/interfaces/interface/ethernet/pfc/priorities/priority/state/in-frames",
             "/interfaces/interface/ethernet/pfc/priorities/priority/state/out-frames"),
        watchdog="/interfaces/interface/ethernet/pfc/watchdog/tx-queues/tx-queue/state/stuck-count",
        source="aristanetworks/yang, EOS 4.3x: openconfig-qos queue state; arista-intf-augments PFC priorities "
               "and watchdog tx-queues"),
)

# Blocks of the running config a replace keeps: the device's accounts, management plane and logging. The AAA
# server lines and their keys, the DNS search list and the banner joined the list with the intent's services
# section: where the intent renders a kind of line, the device's lines of that kind give way
# (deploy/preserve.RENDERED_FAMILIES), and the secrets beside them (`tacacs-server key`) stay.
PRESERVED = (
    "username ", "aaa ", "enable password", "enable secret", "role ", "management ssh", "management security",
    "management api", "interface Management", "vrf instance", "ip route vrf ", "ntp ", "logging ", "snmp-server ",
    "ip name-server", "dns domain", "daemon ", "tacacs-server ", "radius-server ", "ip tacacs ", "ip radius ",
    "ip domain-list ", "banner ",
    # maintenance mode is the switch's state in operation, not the fabric's design: a push keeps a drained
    # switch drained (rocefab undrain, or the operator, ends it)
    "maintenance",
)

_PORT = re.compile(r"Ethernet([1-9]\d*(?:/\d+)*)")
_LINUX_IFNAME_MAX = 15


def ceos_interface(port: str) -> str | None:
    """The cEOS container interface that comes up as an EOS port, if there is one.

    >>> ceos_interface("Ethernet61/1"), ceos_interface("Ethernet5"), ceos_interface("Port-Channel1")
    ('eth61_1', 'eth5', None)
    """
    match = _PORT.fullmatch(port)
    if match is None:
        return None
    name = "eth" + match.group(1).replace("/", "_")
    return name if len(name) <= _LINUX_IFNAME_MAX else None


def _container_interfaces(ports: Sequence[str]) -> list[str]:
    """cEOS keeps physical numbering (`ethX_Y` is `EthernetX/Y`) when every kept port allows it."""
    named = [ceos_interface(p) for p in ports]
    if all(n is not None for n in named):
        return [n or "" for n in named]
    return [f"eth{i}" for i in range(1, len(ports) + 1)]


def _structured() -> StructuredBuilder:
    from rocefab.platforms.eos.config import build

    return build


def _files() -> FileRenderer:
    from rocefab.platforms.eos.config import render_switch

    return render_switch


def _session() -> type[DeviceSession]:
    from rocefab.platforms.eos.session import EosSession

    return EosSession


def _emulator() -> EmulatorFactory:
    from rocefab.platforms.eos.emulator import start

    return start


UNIT = DeviceUnit(
    key="eos",
    display_name=SPEC.display_name,
    spec=SPEC,
    disruption=DISRUPTION,
    # EOS User Manual, Maintenance Mode: the System unit quiesced drains the switch (BGP keeps its sessions and
    # sends its routes with the graceful-shutdown community)
    maintenance=Maintenance("maintenance\n   unit System\n      quiesce\n",
                            "maintenance\n   unit System\n      no quiesce\n",
                            "Arista EOS User Manual, Maintenance Mode (https://www.arista.com/en/um-eos/eos-maintenance-mode)",
                            r"(?m)^   unit System\n      quiesce$"),
    target=f"{SPEC.display_name} {SPEC.release}",
    candidate_kind="eos-config",
    transports=("eapi",),
    nornir_platforms=(("eos", "eapi"), ("arista_eos", "eapi")),
    structured=_structured,
    files=_files,
    session=_session,
    emulator=_emulator,
    containerlab=ContainerlabNode(
        kind="arista_ceos", image="ceos", release_name="EOS", interfaces=_container_interfaces,
        interfaces_note="arista_ceos keeps the physical numbering (ethX_Y comes up as EthernetX/Y in cEOS; eth1, "
                        "eth2, ... if a port has no such name)",
        note="Arista cEOS-lab container; import it with `docker import cEOS64-lab-<version>.tar.xz <image>`."),
    diagram=DiagramStyle("#dbe8f8", "#1f5fa8", 0, SPEC.display_name),
    preserved=PRESERVED,
    anta=True,
)
