"""QoS consistency: the lossless class, CNP, ECN thresholds, ETS weights and MTU headroom."""

from __future__ import annotations

from rocefab.models.checks.common import error, info, warning
from rocefab.models.findings import Finding
from rocefab.models.intent import Intent
from rocefab.models.resolve import Resolution

# Ethernet header (14) + one 802.1Q tag (4): what a host frame adds on top of its IP MTU.
L2_OVERHEAD_BYTES = 18


def check(intent: Intent, resolution: Resolution) -> list[Finding]:
    q = intent.qos
    found: list[Finding] = []
    roce, cnp = q.roce, q.cnp

    if q.pfc.priorities is not None and tuple(sorted(set(q.pfc.priorities))) != (roce.priority,):
        found.append(error(
            "pfc-priority-mismatch", ("qos", "pfc", "priorities"),
            f"PFC priorities {list(q.pfc.priorities)} differ from the RoCE priority {roce.priority}",
            f"PFC must cover exactly the lossless RoCE priority: set priorities: [{roce.priority}] or drop the key",
        ))
    mapped_roce = q.dscp_map.get(roce.dscp)
    if mapped_roce is not None and mapped_roce != roce.priority:
        found.append(error(
            "roce-dscp-map-conflict", ("qos", "dscp_map", roce.dscp),
            f"dscp_map sends the RoCE DSCP {roce.dscp} to priority {mapped_roce}, "
            f"but qos.roce.priority is {roce.priority}",
            "remove the entry; the RoCE mapping is implied by qos.roce",
        ))
    mapped_cnp = q.dscp_map.get(cnp.dscp)
    if mapped_cnp is not None and mapped_cnp != cnp.priority:
        found.append(error(
            "cnp-dscp-map-conflict", ("qos", "dscp_map", cnp.dscp),
            f"dscp_map sends the CNP DSCP {cnp.dscp} to priority {mapped_cnp}, but qos.cnp.priority is {cnp.priority}",
            "remove the entry; the CNP mapping is implied by qos.cnp",
        ))
    for dscp, prio in sorted(q.dscp_map.items()):
        if prio == roce.priority and dscp != roce.dscp:
            found.append(warning(
                "lossless-class-shared", ("qos", "dscp_map", dscp),
                f"DSCP {dscp} also lands in the lossless priority {prio}",
                "non-RoCE traffic in the no-drop queue can trigger PFC storms; map it elsewhere",
            ))

    if cnp.priority == roce.priority or cnp.priority in q.lossless_priorities:
        found.append(error(
            "cnp-priority-lossless", ("qos", "cnp", "priority"),
            f"CNP priority {cnp.priority} is a lossless (PFC) priority",
            "CNPs must bypass the paused RoCE queue: give them their own strict-priority class (6 by convention)",
        ))
    # A platform that queues strictly only from one qos-group gives that group to CNPs (NX-OS: group 7);
    # a lossless class there would have nowhere to go.
    for spec in sorted({m.spec for _, m in resolution.models}, key=lambda s: s.key):
        if spec.strict_qos_group is not None and roce.priority == spec.strict_qos_group:
            found.append(error(
                "lossless-on-strict-queue", ("qos", "roce", "priority"),
                f"RoCE priority {roce.priority} is the queue {spec.display_name} must give to CNPs: it serves "
                f"strict priority only on its highest qos-group",
                "use priority 3 for RoCE, the convention every platform and NIC default agrees on",
            ))
    profiled = sorted({m.spec.display_name for _, m in resolution.models
                       if m.spec.roce_profile_classes is not None and roce.priority != m.spec.roce_profile_classes[0]})
    if profiled:
        found.append(warning(
            "roce-ingress-pool-unconfirmed", ("qos", "roce", "priority"),
            f"{', '.join(profiled)}: RoCE on priority {roce.priority} is mapped onto the lossless profile's traffic "
            f"class 3, as NVIDIA's guide does; whether the profile's ingress pool (roce-reserved-ingress, priority 3 "
            "by default) follows PFC to that priority is not documented",
            f"after apply, check `nv show interface <port> qos roce status` lists priority {roce.priority} in "
            "roce-reserved-ingress, or use priority 3",
        ))
    if cnp.dscp == roce.dscp:
        found.append(error(
            "cnp-dscp-conflict", ("qos", "cnp", "dscp"),
            f"CNP and RoCE data share DSCP {cnp.dscp}",
            "CNPs need their own DSCP (48 by convention) so switches can queue them strictly",
        ))

    ecn = q.ecn
    if ecn is not None and ecn.min_threshold_kbytes >= ecn.max_threshold_kbytes:
        found.append(error(
            "ecn-threshold-order", ("qos", "ecn", "min_threshold_kbytes"),
            f"ECN min threshold {ecn.min_threshold_kbytes} KB is not below max {ecn.max_threshold_kbytes} KB",
            "marking ramps between min and max; min must be smaller",
        ))
    too_small = [] if ecn is None else sorted(
        {m.name: m for _, m in resolution.models if ecn.max_threshold_kbytes > m.buffer_mbytes * 1000}.values(),
        key=lambda m: m.buffer_mbytes)
    if too_small:
        found.append(error(
            "ecn-threshold-exceeds-buffer", ("qos", "ecn", "max_threshold_kbytes"),
            f"ECN max threshold {ecn.max_threshold_kbytes} KB exceeds the packet buffer of "  # type: ignore[union-attr]
            + ", ".join(f"{m.name} ({m.buffer_mbytes} MB)" for m in too_small),
            "queues never grow past the buffer, so marking would never reach its maximum",
        ))

    ets = q.ets
    if ets.roce_percent + ets.default_percent != 100:
        found.append(error(
            "ets-weights-sum", ("qos", "ets"),
            f"ETS weights sum to {ets.roce_percent + ets.default_percent}%, not 100%",
            "roce_percent + default_percent must be 100; CNP is strict priority and takes no share",
        ))

    found.extend(_mtu(intent, resolution))
    found.extend(_watchdog_recovery(intent, resolution))
    return found


def _watchdog_recovery(intent: Intent, resolution: Resolution) -> list[Finding]:
    """The intent's watchdog recovery time holds only where the NOS takes one: say where it does not, as a
    warning when the intent set it and a note when it is the default."""
    wd = intent.qos.pfc.watchdog
    if not wd.enabled:
        return []
    without = sorted({m.spec.display_name for _, m in resolution.models if not m.spec.pfc_watchdog_recovery})
    if not without:
        return []
    finding = warning if "recovery_ms" in wd.model_fields_set else info
    return [finding(
        "watchdog-recovery-not-rendered", ("qos", "pfc", "watchdog", "recovery_ms"),
        f"{', '.join(without)} restore a stormed queue on their own schedule, not after {wd.recovery_ms} ms",
        "NVUE restores after one clean polling interval; NX-OS polls a shut queue every 100 ms",
    )]


def _mtu(intent: Intent, resolution: Resolution) -> list[Finding]:
    found: list[Finding] = []
    host, wanted = intent.mtu.host_bytes, intent.mtu.switch_bytes
    specs = {m.spec.key: m.spec for _, m in resolution.models}
    short = []
    for spec in sorted(specs.values(), key=lambda s: s.key):
        effective = min(wanted, spec.mtu_max_bytes)
        # Only worth saying when the user asked for more than the NOS takes; the default is capped silently.
        if wanted > spec.mtu_max_bytes and "switch_bytes" in intent.mtu.model_fields_set:
            found.append(info(
                "mtu-capped", ("mtu", "switch_bytes"),
                f"{spec.display_name} allows at most {spec.mtu_max_bytes} bytes; its interfaces get that",
            ))
        if host + L2_OVERHEAD_BYTES > effective:
            short.append(f"{spec.display_name} ({effective})")
    if short:
        found.append(error(
            "mtu-too-small", ("mtu", "host_bytes"),
            f"host MTU {host} + {L2_OVERHEAD_BYTES} bytes of Ethernet/802.1Q header exceeds the switch MTU of "
            + ", ".join(short),
            "jumbo frames would be dropped on that hop; raise mtu.switch_bytes or lower mtu.host_bytes",
        ))
    return found
