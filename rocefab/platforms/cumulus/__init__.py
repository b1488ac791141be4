"""NVIDIA Cumulus Linux (NVUE): the YAML document `nv config replace` takes, staged and applied over SSH
(`nv config diff|apply --confirm`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rocefab.platforms.cumulus.disruption import TABLE as DISRUPTION
from rocefab.platforms.maintenance import Maintenance
from rocefab.platforms.spec import Multihoming, PlatformSpec
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
    key="cumulus",
    display_name="NVIDIA Cumulus Linux (NVUE)",
    release="5.14",
    mtu_max_bytes=9216,
    mgmt_interface="eth0",
    port_format="swp{cage}",
    child_format="swp{cage}s{index0}",
    multihoming=(Multihoming.MLAG,),
    bgp_unnumbered=True,
    ecmp_max_paths=128,
    # Cumulus keeps 3725-3999 for internal use by default (bridge reserved-vlan-range).
    reserved_vlans=((3725, 3999),),
    peer_vlan_default=4094,
    lag_format="bond{n}",
    peer_link_lag="peerlink",
    peer_session_interface="peerlink.4094",
    # Trusting L3, Cumulus maps each block of eight DSCPs to one switch priority: d -> d >> 3 (Cumulus 5.14
    # QoS guide, Classification).
    default_dscp_classes=tuple(d >> 3 for d in range(64)),
    # `qos roce mode lossless` binds its lossless egress pool, ETS (TC3 DWRR 50 %, TC6 strict) and ECN to traffic
    # classes 3 and 6 and maps switch priority 3 -> 3, 6 -> 6, every other -> 0. To carry RoCE on another priority
    # NVIDIA remaps the priority onto traffic class 3 (and priority 3 onto 0) rather than moving the class (Cumulus
    # 5.14-5.16 RoCE guide, "Change RoCE Configuration": egress-queue-mapping switch-priority 2 traffic-class 3,
    # switch-priority 3 traffic-class 0). CNPs keep the strict class 6 the same way.
    roce_profile_classes=(3, 6),
    svi_format="vlan{vlan}",
    # switchd sizes the headroom from the PFC profile's cable length (`nv set qos pfc <profile> cable-length`,
    # 1-100000 m; 10 m in a new profile, 100 m in the RoCE one: Cumulus 5.14 QoS guide, Flow Control); rocefab
    # sets it to the switch's longest cable.
    headroom_by="cable-length",
    # NVUE has no recovery timer: a triggered queue is restored after one polling interval without pause frames
    # (Cumulus 5.14 QoS guide, PFC Watchdog).
    pfc_watchdog_recovery=False,
    # Cumulus 5.14 BFD guide: detect-multiplier 3, min-rx-interval 300 ms, min-tx-interval 300 ms.
    bfd_default_timers=(300, 300, 3),
    # Cumulus 5.14 ECMP guide, Adaptive Routing: Spectrum-4 only, 400G and 200G ports, routed (not bonds,
    # SVIs or subinterfaces), RoCEv2 unicast in the default VRF; every port of an ECMP group alike.
    adaptive_routing_asics=("Spectrum-4",),
    adaptive_routing_speeds_gbps=(200, 400),
    # NVUE's own gNMI server (`system gnmi-server`: listening-address, port, state; new in Cumulus 5.13, before it
    # gNMI came only with the NetQ agent) listens on TCP 9339 with a self-signed certificate unless one is bound,
    # and answers Capabilities and Subscribe (STREAM sample / on-change) but not Get or Set; Spectrum-1 switches
    # have none (Cumulus 5.14 "gNMI Streaming":
    # https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/Monitoring-and-Troubleshooting/gNMI-Streaming;
    # NVUE reference, gNMI commands, "Introduced in Cumulus Linux 5.13.0").
    gnmi_port=9339,
    gnmi_tls=True,
    gnmi_get=False,
    telemetry=SwitchTelemetry(
        paths=(f"{QUEUES}/wred-dropped-pkts", f"{QUEUES}/no-buffer-uc-dropped-pkts", f"{QUEUES}/transmit-pkts",
               f"{QUEUES}/ecn-marked-pkts",
               "/qos/interfaces/interface/switch-priority/state/counters/in-pause-pkts",
               "/qos/interfaces/interface/switch-priority/state/counters/out-pause-pkts"),
        queue_name="{n}",
        # no dropped-pkts leaf: WRED drops plus drops for want of buffer
        queue_drops=("wred-dropped-pkts", "no-buffer-uc-dropped-pkts"), queue_ecn_marked="ecn-marked-pkts",
        pfc=("/qos/interfaces/interface/switch-priority/state/counters/in-pause-pkts",
             "/qos/interfaces/interface/switch-priority/state/counters/out-pause-pkts"),
        watchdog=None,  # not in 5.14's list of gNMI metrics
        source="Cumulus Linux 5.14 user guide, gNMI Streaming, supported metrics (queue names are the traffic "
               "class: queue[name=1])",
        # 5.13 takes credentials only from an HTTP Basic header; 5.14 also from gRPC metadata
        gnmi_auth_scheme="Basic"),
)


def _container_interfaces(ports: Sequence[str]) -> list[str]:
    return [f"swp{i}" for i in range(1, len(ports) + 1)]


def _structured() -> StructuredBuilder:
    from rocefab.platforms.cumulus.config import build

    return build


def _files() -> FileRenderer:
    from rocefab.platforms.cumulus.config import render_switch

    return render_switch


def _commands() -> FileRenderer:
    from rocefab.platforms.cumulus.config import render_commands

    return render_commands


def _session() -> type[DeviceSession]:
    from rocefab.platforms.cumulus.session import CumulusSession

    return CumulusSession


def _emulator() -> EmulatorFactory:
    from rocefab.platforms.cumulus.emulator import start

    return start


UNIT = DeviceUnit(
    key="cumulus",
    display_name=SPEC.display_name,
    spec=SPEC,
    disruption=DISRUPTION,
    # Cumulus Linux 5.14, Maintenance Mode (5.13 and later; `nv action ... maintenance` before): the all-protocols
    # unit drains BGP with the graceful-shutdown community, sessions and ports stay up
    maintenance=Maintenance(
        "- set:\n    maintenance:\n      unit:\n        all-protocols:\n          mode: enabled\n",
        "- set:\n    maintenance:\n      unit:\n        all-protocols:\n          mode: disabled\n",
        "Cumulus Linux 5.14 user guide, Maintenance Mode (https://docs.nvidia.com/networking-ethernet-software/"
        "cumulus-linux-514/System-Configuration/Maintenance-Mode/)",
        r"all-protocols:\s*\n\s*mode:\s*enabled\b"),
    target=f"{SPEC.display_name} {SPEC.release}",
    candidate_kind="nvue-yaml",
    # the same document as `nv set` lines: for reading or pasting, never what apply pushes
    on_request=("nvue-commands",),
    on_request_files=_commands,
    transports=("nvue-ssh",),
    nornir_platforms=(("cumulus_linux", "nvue-ssh"), ("cumulus", "nvue-ssh")),
    structured=_structured,
    files=_files,
    session=_session,
    emulator=_emulator,
    containerlab=ContainerlabNode(
        kind="nvidia_cumulusvx", image="vrnetlab/nvidia_cumulus-vx", release_name="Cumulus Linux",
        interfaces=_container_interfaces, interfaces_note="nvidia_cumulusvx counts swp1, swp2, ...",
        note="Cumulus VX VM packaged with srl-labs/vrnetlab; needs /dev/kvm and a containerlab release that has "
             "this kind. NVIDIA discontinued Cumulus VX after 5.12.1, so use the newest VX you have. containerlab's "
             "older container-based `cvx` kind takes the same swpN names but is no longer maintained."),
    diagram=DiagramStyle("#fde8d2", "#b45f06", 5, SPEC.display_name),
)
