"""`rocefab doctor`: verify's failed checks (and the plan) turned into diagnoses — what is wrong, the evidence,
what the training job sees because of it, and how to fix it.

Each rule is data: a code, the checks that are its evidence, the symptom, and the fix. A few rules read across
rows (a leaf whose uplinks are down is now oversubscribed; a port whose LLDP neighbour is another device's is
miscabled). The codes are stable: tests, alerts (their runbook hints) and people refer to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rocefab.deploy.verify.checks import Row, Verdict
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
    Rule("dcqcn-off", ("dcqcn", "ecn"), "ECN / DCQCN off on the RoCE priority",
         "no rate control before PFC: congestion spreads as pause frames, victim flows slow down, tail latency "
         "of all-reduce grows with the job", "{apply}", True),
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
    Rule("input-errors", ("input-error-rate",), "input errors above 0.001 % of packets",
         "corrupted frames are dropped: RoCE retransmits, bandwidth and tail latency suffer",
         "clean or replace the cable and optics of {device} {port}", False),
    Rule("unreachable", ("read",), "device could not be read", "nothing is known about this device's state",
         "check management access and the inventory entry", False),
)
RULE_OF_CHECK = {check: rule for rule in RULES for check in rule.checks}
OVERSUBSCRIBED = Rule("oversubscribed", (), "leaf oversubscribed beyond its plan",
                      "host traffic meets less uplink capacity than planned: all-reduce slows as the job grows "
                      "(the seed's collapse at ~1,000 GPUs)", "restore the down uplinks of {device}", False)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    code: str
    device: str
    port: str
    title: str
    evidence: tuple[str, ...]
    symptom: str
    fix: str


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
    return out + _oversubscription(plan, rows)


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
