"""`rocefab doctor`: verify's failed checks (and the plan) turned into diagnoses — what is wrong, the evidence,
what the training job sees because of it, and how to fix it.

Each rule is data: a code, the checks that are its evidence, the symptom, and the fix. A few rules read across
rows (a leaf whose uplinks are down is now oversubscribed; a port whose LLDP neighbour is another device's is
miscabled). The codes are stable: tests, alerts (their runbook hints) and people refer to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rocefab.deploy.verify import doctor_fabric
from rocefab.deploy.verify.checks import Row, Verdict
from rocefab.deploy.verify.counter_checks import NOT_REPORTED
from rocefab.deploy.verify.diagnosis import Diagnosis
from rocefab.renderers.plan import FabricPlan, PortRole, Role


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    checks: tuple[str, ...]  # verify checks whose failure is this diagnosis' evidence
    title: str
    symptom: str
    fix: str  # may name {device}, {port}, {apply}
    repaired_by_apply: bool  # the rendered config sets it right: re-applying repairs it


RULES = (
    Rule("mtu-below-jumbo", ("mtu",), "MTU below the fabric's jumbo MTU",
         "NCCL far below line rate (the seed's 40 % case), or RDMA connections that stall once messages exceed the "
         "smaller MTU", "set the MTU back: {apply}", True),
    Rule("pfc-missing", ("pfc", "nic-pfc"), "PFC missing or on the wrong priority",
         "RoCE packets dropped under congestion instead of paused: go-back-N retransmissions and jobs dying with "
         "\"transport retry count exceeded\"", "restore PFC on the lossless priority: {apply}", True),
    Rule("trust-mismatch", ("trust", "nic-trust"), "DSCP not trusted",
         "RoCE classified by PCP or not at all: it rides a lossy queue with neither PFC nor ECN, drops under load",
         "trust DSCP again: {apply}", True),
    Rule("dscp-map-mismatch", ("dscp-map", "nic-dscp-map"), "DSCP map differs from the fabric's",
         "RoCE or CNPs land on another priority at this hop than at the next: lossless on one side, dropped on "
         "the other; or bulk traffic shares the no-drop queue (how pause storms start)", "{apply}", True),
    Rule("global-pause-on", ("global-pause",), "802.3x global pause on a RoCE NIC",
         "link-level pause stops every priority at once: head-of-line blocking and pause storms across the fabric",
         "{apply} (the host script turns rx/tx pause off)", True),
    Rule("dcqcn-off", ("dcqcn", "ecn", "nic-cnp"), "ECN / DCQCN off on the RoCE priority",
         "no rate control before PFC: congestion spreads as pause frames, victim flows slow down, tail latency "
         "of all-reduce grows with the job", "{apply}", True),
    Rule("nic-headroom-short", ("nic-cable-len",), "NIC receive buffer sized for another cable",
         "the NIC pauses its link partner for a shorter (or longer) cable than it has: when the host is the congestion "
         "point (PCIe back-pressure) lossless packets arrive after its buffer is full and are dropped",
         "{apply} (the host script sets mlnx_qos --cable_len to the planned length)", True),
    Rule("cnp-not-strict", ("cnp-strict",), "CNP queue not strict priority",
         "congestion notifications queue behind data: DCQCN reacts late, PFC fires more", "{apply}", True),
    Rule("watchdog-off", ("pfc-watchdog",), "PFC watchdog not armed",
         "a stuck receiver's pause storm spreads through the fabric instead of being cut at this port", "{apply}",
         True),
    Rule("link-wrong-speed", ("speed", "speed-floor"), "link at the wrong speed",
         "the slowest link paces every ring and tree through it: all-reduce bandwidth falls to that link's share",
         "check the optic and cable of {device} {port} (and the far end's); a forced speed in the config "
         "would show in `rocefab diff`", False),
    Rule("link-down", ("link",), "planned link down",
         "fewer paths: ECMP concentrates flows on the rest (see the oversubscription diagnosis), or a host "
         "runs on one leg of its bond", "check the cable and optic of {device} {port}; the far end's state", False),
    Rule("miscabled", ("lldp",), "cable on the wrong port",
         "traffic for one leaf or host arrives on another: BGP or LACP refuse the link, paths go missing",
         "move the cable so {device} {port} reaches what the cabling plan (cabling.csv) says", False),
    Rule("bgp-down", ("bgp",), "BGP session not established",
         "routes through this peer are gone: fewer ECMP paths, or a leaf cut off", "check the link and the peer "
         "(`rocefab verify --only` both ends); if the config drifted, {apply}", False),
    Rule("mlag-unhealthy", ("mlag", "vpc"), "MLAG/vPC pair not healthy",
         "dual-homed hosts may lose a bond leg or see split-brain forwarding", "check the peer link and keepalive",
         False),
    Rule("bond-degraded", ("bond",), "host bond not as planned",
         "the host runs on one port: half its bandwidth, and RoCE LAG may fall back to a single port",
         "check the members' links and LACP on the leaf pair", False),
    Rule("rdma-inactive", ("rdma",), "RDMA device not ACTIVE", "NCCL cannot use the NIC: it falls back to sockets "
         "or fails to start", "check the driver (MLNX_OFED/DOCA), the link, and the bond's RoCE LAG", False),
    Rule("gid-missing", ("gid",), "no RoCE v2 GID for the interface's address",
         "NCCL finds no usable GID: connection setup fails, or picks a RoCE v1 / IPv6 GID that the fabric does not "
         "route", "check the interface address; {apply}", True),
    Rule("tos-mismatch", ("traffic-class", "rdma-cm-tos"), "RoCE traffic class differs from the fabric's",
         "queue pairs send with another DSCP: RoCE rides the lossy default queue", "{apply}", True),
    Rule("nccl-env-mismatch", ("nccl",), "NCCL settings differ from the fabric's",
         "NCCL uses another traffic class, HCA or GID than the switches expect", "{apply}", True),
    Rule("pause-storm", ("pfc-pause-rate",), "PFC pause storm",
         "a receiver that cannot drain pauses its partner without end: the pause spreads hop by hop and every job "
         "behind it stalls; the watchdog should shut the queue", "find the stuck receiver at the far end of "
         "{device} {port} (its NIC or host); check the PFC watchdog is armed", False),
    Rule("lossless-drops", ("lossless-drops",), "drops on the lossless queue",
         "RoCE packets lost where PFC should have held them: go-back-N retransmissions, then \"transport retry "
         "count exceeded\"", "PFC headroom too small for the cable (set `cabling` lengths or "
         "`qos.pfc.measured_headroom_bytes` and re-apply), or the partner ignores pause: check PFC at both ends",
         False),
    Rule("watchdog-firing", ("pfc-watchdog-events",), "PFC watchdog shut the lossless queue",
         "the port's lossless queue was shut down: RoCE flows through it stall, then drop (the watchdog discards "
         "while it holds the queue), and jobs see retransmissions or \"transport retry count exceeded\"",
         "find what keeps pausing {device} {port}: the far end's receiver (a stuck NIC or host, a PFC storm from "
         "below); the watchdog only contains it", False),
    Rule("input-errors", ("input-error-rate",), "input errors above 0.001 % of packets",
         "corrupted frames are dropped: RoCE retransmits, bandwidth and tail latency suffer",
         "clean or replace the cable and optics of {device} {port}", False),
    Rule("firmware-mismatch", ("firmware-match",), "NIC firmware differs from the fleet's",
         "mixed firmware is a known cause of RoCE and DCQCN behaving differently between NIC pairs: uneven "
         "bandwidth, and \"transport retry count exceeded\" between some pairs only",
         "flash {device}'s NIC ({port}) to the release the rest of the fleet runs (mlxfwmanager, or the site's "
         "firmware bundle), then reset the NIC or reboot", False),
    Rule("peermem-missing", ("nvidia-peermem",), "nvidia_peermem not loaded",
         "GPUDirect RDMA is off: NCCL stages GPU buffers through host memory, bandwidth far below line rate, "
         "and NCCL_NET_GDR_LEVEL has no effect",
         "`modprobe nvidia_peermem` on {device}, and load it at boot (a line in /etc/modules-load.d/)", False),
    Rule("nic-pause-storm", ("nic-pause-rate",), "PFC pause storm at a host NIC",
         "a NIC that cannot drain pauses its leaf without end (tx), or is held back by it (rx): the pause spreads "
         "into the fabric and every flow through that leaf port stalls",
         "sent: find what stops {device} draining {port} (a stalled receive path, its PCIe link: run its "
         "preflight script; the NIC's tx_pause_storm_error_events); received: look for congestion behind the "
         "leaf port; check the leaf's PFC watchdog is armed", False),
    Rule("unreachable", ("read",), "device could not be read", "nothing is known about this device's state",
         "check management access and the inventory entry", False),
    Rule("pending-revert", ("commit-confirmed",), "a commit awaits its confirm and will revert by itself",
         "the fabric verifies now, then changes under running jobs when the switch reverts the commit at the end of "
         "its window (half old, half new if its peers stay)",
         "let apply settle it (it confirms the commit if it is what the intent renders and verify passes, else "
         "reverts it): {apply}", True),
)
RULE_OF_CHECK = {check: rule for rule in RULES for check in rule.checks}
RETRANSMISSIONS = Rule("roce-retransmissions", (), "RoCE retransmissions above the intent's threshold",
                       "jobs die with \"transport retry count exceeded\", or collectives run slow: every "
                       "retransmission is go-back-N from the lost packet",
                       "packets are lost on the way: PFC missing on a hop, drops on the lossless queue, an MTU "
                       "below the RoCE MTU somewhere, a dirty optic; the evidence lists what verify also saw on "
                       "this host and its leaf ports, else check the path towards its peers", False)
UNREPORTED = Rule("not-reported", (), "counters the device did not report",
                  "the checks that need them prove nothing here: a pause storm, drops on the lossless queue or a "
                  "watchdog shutting it would pass unseen on these ports",
                  "run the command on {device} by hand: a release that answers it in another shape, or not at all, "
                  "needs a reader for that shape (rocefab's readers follow the samples in tests/fixtures/devices); "
                  "until then watch these ports through the rendered monitoring rules", False)
OVERSUBSCRIBED = Rule("oversubscribed", (), "leaf oversubscribed beyond its plan",
                      "host traffic meets less uplink capacity than planned: all-reduce slows as the job grows "
                      "(the seed's collapse at ~1,000 GPUs)", "restore the down uplinks of {device}", False)


def _apply(intent: str, inventory: str, device: str) -> str:
    return f"rocefab apply {intent} -i {inventory} --only {device}"


def diagnose(plan: FabricPlan, rows: Sequence[Row], intent: str, inventory: str) -> list[Diagnosis]:
    failed = [r for r in rows if r.verdict is not Verdict.PASS]
    grouped: dict[tuple[str, str, str], list[Row]] = {}
    for row in failed:
        rule = RULE_OF_CHECK.get(row.check)
        if rule is None or (row.verdict is Verdict.WARN and row.check != "speed-floor"):
            continue
        if row.check == "lldp" and row.observed == "no neighbour":
            continue  # the link row says it; a neighbour that is someone else's is a miscable
        grouped.setdefault((rule.code, row.device, row.port), []).append(row)
    rules = {r.code: r for r in RULES}
    out = []
    for (code, device, port), evidence in grouped.items():
        rule = rules[code]
        out.append(Diagnosis(code, device, port, rule.title,
                             tuple(f"{r.check}: expected {r.expected}, observed {r.observed}" for r in evidence),
                             rule.symptom, rule.fix.format(device=device, port=port,
                                                           apply=_apply(intent, inventory, device))))
    fabric = doctor_fabric.ecmp_below_plan(plan, rows) + doctor_fabric.tier_too_thin(plan, rows)
    return out + _retransmissions(plan, rows) + _oversubscription(plan, rows) + fabric + _unreported(rows)


def _retransmissions(plan: FabricPlan, rows: Sequence[Row]) -> list[Diagnosis]:
    """A host's RDMA device retransmits: its evidence is everything else that failed on that host and on the leaf
    ports (and leaf-wide settings) it is cabled to, which is where the lost packets most likely went."""
    hosts = {h.name: h for h in plan.hosts}
    failed = [r for r in rows if r.failed]
    out = []
    for row in failed:
        host = hosts.get(row.device)
        if row.check != "roce-retransmit-rate" or host is None:
            continue
        leaf_ports = {(m.switch, m.port) for b in host.bonds for m in b.members} | \
            {(n.switch, n.port) for n in host.nics}
        leaves = {leaf for leaf, _ in leaf_ports}
        related = [r for r in failed if r is not row and (
            r.device == host.name or (r.device, r.port) in leaf_ports or (r.device in leaves and not r.port))]
        evidence = [f"{row.check}: expected {row.expected}, observed {row.observed}"]
        evidence += [f"also {r.device} {r.port} {r.check}: expected {r.expected}, observed {r.observed}"
                     .replace("  ", " ") for r in related]
        if not related:
            evidence.append(f"nothing else failed on {host.name} or its leaf ports: look further along the path "
                            "(spines, the peers' hosts and leaves)")
        out.append(Diagnosis(RETRANSMISSIONS.code, row.device, row.port, RETRANSMISSIONS.title, tuple(evidence),
                             RETRANSMISSIONS.symptom, RETRANSMISSIONS.fix))
    return out


def _oversubscription(plan: FabricPlan, rows: Sequence[Row]) -> list[Diagnosis]:
    """A leaf whose planned uplinks are partly down carries its hosts on fewer paths than planned."""
    down = {(r.device, r.port) for r in rows if r.check == "link" and r.failed}
    out = []
    for sw in plan.switches:
        if sw.role is not Role.LEAF:
            continue
        host_gbps = sum(p.speed_gbps for p in sw.ports if p.role is PortRole.HOST)
        uplinks = [p for p in sw.ports if p.role is PortRole.UPLINK]
        lost = [p for p in uplinks if (sw.name, p.name) in down]
        if not host_gbps or not uplinks or not lost:
            continue
        planned = sum(p.speed_gbps for p in uplinks)
        left = planned - sum(p.speed_gbps for p in lost)
        ratio = f"{host_gbps / left:.2g}:1" if left else "cut off"
        out.append(Diagnosis(
            OVERSUBSCRIBED.code, sw.name, "", OVERSUBSCRIBED.title,
            (f"{len(lost)} of {len(uplinks)} uplinks down ({', '.join(p.name for p in lost)}): {left}G of {planned}G "
             f"for {host_gbps}G of hosts, oversubscription now {ratio} (planned {host_gbps / planned:.2g}:1)",),
            OVERSUBSCRIBED.symptom, OVERSUBSCRIBED.fix.format(device=sw.name)))
    return out


def _unreported(rows: Sequence[Row]) -> list[Diagnosis]:
    """Counter checks that found no value: one diagnosis per device and missing command, naming the checks and
    ports it cost (a release without a table costs it on every port)."""
    grouped: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.verdict is Verdict.WARN and row.observed.startswith(NOT_REPORTED):
            grouped.setdefault((row.device, row.observed), []).append(row)
    out = []
    for (device, observed), found in grouped.items():
        checks = sorted({r.check for r in found})
        ports = list(dict.fromkeys(r.port for r in found if r.port))
        where = ", ".join(ports[:6]) + (f" and {len(ports) - 6} more" if len(ports) > 6 else "")
        evidence = f"{', '.join(checks)}: {observed}" + (f" on {where}" if where else "")
        out.append(Diagnosis(UNREPORTED.code, device, "", UNREPORTED.title, (evidence,), UNREPORTED.symptom,
                             UNREPORTED.fix.format(device=device)))
    return out
