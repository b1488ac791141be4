"""What a network operating system accepts, as data its platform unit declares and every layer reads.

Renderers, checks and drivers ask these fields (the MTU ceiling, how ports and LAGs are named, whether BGP
unnumbered works, which qos-group is served strictly) instead of testing a platform's name.
"""

from __future__ import annotations

from enum import StrEnum

from rocefab.platforms.telemetry import SwitchTelemetry
from rocefab.renderers.record import record


class Multihoming(StrEnum):
    MLAG = "mlag"
    VPC = "vpc"


@record
class LoadBalancingSupport:
    """What one ASIC family can do for RoCE load balancing under this NOS, each with where that is written."""

    asics: tuple[str, ...]  # the catalogue's ASIC names this entry covers
    roce_qp_hash: bool  # hashes on the RoCE destination queue pair (bytes of the UDP payload)
    dynamic: tuple[str, ...]  # the dynamic load-balancing modes it runs: "flowlet", "per-packet"
    source: str
    # What the sources leave open about the queue-pair hash / dynamic load balancing on these ASICs ("": nothing);
    # validate says it as a warning wherever the intent asks for that feature.
    roce_qp_hash_unconfirmed: str = ""
    dynamic_unconfirmed: str = ""


@record
class PlatformSpec:
    """What one network operating system accepts, for the release rocefab's templates target."""

    key: str
    display_name: str
    release: str
    mtu_max_bytes: int
    mgmt_interface: str
    # Port naming. `cage` is the front-panel cage number; a broken-out child also gets its 0-based index,
    # 1-based index and first electrical lane (EOS names children by lane).
    port_format: str
    child_format: str
    multihoming: tuple[Multihoming, ...]
    bgp_unnumbered: bool
    ecmp_max_paths: int
    # VLAN ids the platform keeps for itself (inclusive ranges); rocefab's own MLAG peer VLAN is added by
    # the planner per pair.
    reserved_vlans: tuple[tuple[int, int], ...]
    # Default VLAN of the routed SVI over the MLAG/vPC peer link (kept clear of the reserved ranges).
    peer_vlan_default: int
    lag_format: str  # name of LAG number n
    peer_link_lag: str  # name of the LAG forming the MLAG/vPC peer link
    # The leaf pair's backup BGP session rides the peer link: over this link-local interface where the
    # NOS creates one (Cumulus peerlink.4094), otherwise over a /31 on the peer VLAN's SVI.
    peer_session_interface: str | None
    # The only qos-group the NOS serves strictly, which the CNP class must take whatever its fabric priority
    # (NX-OS queues strictly only from its highest group down); None where priorities are queued as they are.
    strict_qos_group: int | None = None
    # A lossless profile whose buffer pools, ETS and ECN are bound to fixed traffic classes, (RoCE's, CNP's): the
    # switch priorities RoCE and CNP use are mapped onto those classes and every other priority to class 0, instead
    # of priority p onto class p (NVUE `qos roce`: traffic classes 3 and 6).
    roce_profile_classes: tuple[int, int] | None = None
    # Whether the intent's PFC watchdog timers (polling interval, robustness, recovery) are rendered, or the
    # watchdog runs with the platform's own.
    pfc_watchdog_timers: bool = True
    # Whether the watchdog's recovery time (pause-free time before a stormed queue is restored) is configurable;
    # where not, the NOS restores on its own schedule.
    pfc_watchdog_recovery: bool = True
    # MLAG reload delays (s): how long MLAG ports and the other ports stay down after a reboot (EOS).
    mlag_reload_delay_s: int | None = None
    non_mlag_reload_delay_s: int | None = None
    # vPC needs a peer-keepalive path: over mgmt0 when the intent gives management addressing.
    keepalive_out_of_band: bool = False
    # The class each DSCP lands in when the config names none for it, DSCP 0 first; the renderer writes an
    # explicit mapping wherever this differs from the fabric's map. Default: DSCP d -> d >> 3.
    default_dscp_classes: tuple[int, ...] = tuple(d >> 3 for d in range(64))
    # How the no-drop priority gets its PFC headroom (renderers/headroom.py): "cable-length" (the NOS sizes it
    # from a cable length rocefab renders), "pause-buffer" (rocefab renders the bytes, where the vendor requires
    # it: on cables longer than `headroom_rendered_above_m`), "none" (nothing documented to render: a finding
    # names the switches whose cables are longer than that).
    headroom_by: str = "none"
    headroom_rendered_above_m: int = 100
    # BFD timers (interval ms, min-rx ms, multiplier) the NOS runs when none are configured; rocefab renders
    # timers only where the intent's differ, since NOSes hide default values from the running config.
    bfd_default_timers: tuple[int, int, int] = (300, 300, 3)
    # Adaptive routing: the ASICs that have it under this NOS, and the port speeds it runs at.
    adaptive_routing_asics: tuple[str, ...] = ()
    adaptive_routing_speeds_gbps: tuple[int, ...] = ()
    # The ECMP hash takes a rotation rocefab sets per tier (against polarization), rendered with the hash fields.
    hash_rotation: bool = False
    # RoCE load balancing beyond the five-tuple hash, per ASIC family (an ASIC not listed has neither).
    load_balancing: tuple[LoadBalancingSupport, ...] = ()
    # How its dynamic load balancing is configured: whether it lists the ports it runs on, takes a fabric-wide
    # virtual next-hop MAC, takes a flow-set size.
    dlb_lists_ports: bool = False
    dlb_mac: bool = False
    dlb_flow_set_size: bool = False
    # Top-level config sections whose change the NOS applies only after a reload (apply pushes them in a step of
    # their own, only when the operator accepts the reload); the disruption table classes them `reload`, with its
    # source.
    reload_sections: tuple[str, ...] = ()
    # Those of them dynamic load balancing lives in (the plan's load-balancing rows name them)
    dlb_reload_sections: tuple[str, ...] = ()
    # The routed interface of VLAN n, as the platform names it in show commands (verify reads its MTU).
    svi_format: str = "Vlan{vlan}"
    # The gNMI dial-in server rocefab turns on, on the switch's management address, for a telemetry collector:
    # the TCP port it listens on (None: the release has no gNMI server rocefab can enable, and none is rendered);
    # whether it speaks TLS as rendered (then with the NOS's own self-signed certificate unless the operator
    # installs one, so a collector must either trust that or skip verification; without TLS it must dial in
    # plaintext, gnmic's --insecure); whether it answers Get as well as Capabilities and Subscribe.
    gnmi_port: int | None = None
    gnmi_tls: bool = True
    gnmi_get: bool = True
    # The queue, PFC and watchdog counters it streams over gNMI (the monitoring rules and collector read them).
    telemetry: SwitchTelemetry | None = None

    def load_balancing_of(self, asic: str) -> LoadBalancingSupport | None:
        return next((entry for entry in self.load_balancing if asic in entry.asics), None)

    def is_reserved_vlan(self, vlan: int) -> bool:
        return any(low <= vlan <= high for low, high in self.reserved_vlans)

    def port_name(self, cage: int) -> str:
        return self.port_format.format(cage=cage)

    def child_name(self, cage: int, index: int, lanes_per_child: int) -> str:
        return self.child_format.format(
            cage=cage, index0=index, index1=index + 1, lane=1 + index * lanes_per_child
        )


