"""Properties every rendered fabric must have, checked on the rendered text itself (not on the plan),
so a template that drops or garbles a line is caught."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from ipaddress import IPv4Interface, IPv4Network
from typing import Any

from rocefab.models.loader import load_yaml12
from rocefab.renderers.configtext import parse_indented
from rocefab.renderers.plan import FabricPlan, LinkKind, PortRole, Switch
from rocefab.renderers.render import RenderedFile

# The oracle's own statement of NX-OS queuing (Cisco Nexus 9000 NX-OS 10.5 QoS configuration guide, queuing
# guidelines): strict priority is served only from the highest qos-group, so CNPs must be classified into
# group 7, and a priority numbered 7 takes the CNP priority's group instead. Written here, not imported from
# the renderer, so the test does not share the code it checks.
NXOS_STRICT_GROUP = 7


@lru_cache(maxsize=2)  # check_fabric asks for one switch's document twice in a row
def _nvue(text: str) -> Any:
    """A switch's NVUE YAML, loaded once for both of its checks (BGP origins and QoS); only ever read."""
    return load_yaml12(text)


def nxos_group(priority: int, cnp_priority: int) -> int:
    return {cnp_priority: NXOS_STRICT_GROUP, NXOS_STRICT_GROUP: cnp_priority}.get(priority, priority)


# Each platform's own DSCP -> class map where the config names none, as the oracle states it (not imported):
# Cumulus trusting L3 maps d to d >> 3 (Cumulus 5.14 QoS, Classification); EOS does the same but swaps the two
# lowest blocks, 0-7 -> 1 and 8-15 -> 0 (secondary source; Arista confirms CS3 -> TC3); NX-OS classifies only
# what rocefab's policy matches, everything else falls to class-default, qos-group 0; a ConnectX NIC
# trusting DSCP maps d to d >> 3 (mlnx-tools `mlnx_qos`, setDefaultAppEntry).
PLATFORM_DEFAULT_DSCP = {
    "cumulus": [d >> 3 for d in range(64)],
    "nxos": [0] * 64,
}
NIC_DEFAULT_DSCP = [d >> 3 for d in range(64)]


def effective(default: list[int], explicit: dict[int, int]) -> list[int]:
    return [explicit.get(d, default[d]) for d in range(64)]


@dataclass
class SwitchQos:
    """What a rendered switch config says about QoS."""

    dscp_to_priority: dict[int, int]  # every DSCP's class, in the switch's own numbering (NX-OS: qos-groups)
    unmarked_class: int  # where DSCP 0 lands
    lossless: set[int]
    ecn_queues: set[int]
    strict_queues: set[int]
    port_mtus: dict[str, int]  # the MTU each fabric-facing (routed) port is rendered with


JUMBO = 9000


def _mtu_child(node: Any) -> int | None:
    lines = [line for line in node.lines() if line.startswith("mtu ")]
    return int(lines[0].split()[1]) if lines else None


def _eos(sw: Switch, text: str) -> SwitchQos:
    root = parse_indented(text)
    entries = []
    for line in root.lines():
        m = re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", line)
        if m:
            entries += [(int(d), int(m.group(2))) for d in m.group(1).split()]
    # All 64, each once: the switch's map never rests on the release's built-in one (no source gives it whole).
    assert sorted(d for d, _ in entries) == list(range(64)), f"{sw.name}: DSCP map is not all 64 entries once"
    dscp = dict(entries)
    profile = root.child("qos profile ROCE-LOSSLESS")
    assert profile is not None, f"{sw.name}: no qos profile"
    assert profile.child("qos trust dscp"), f"{sw.name}: profile does not trust DSCP"
    assert profile.child("priority-flow-control on"), f"{sw.name}: PFC not on"
    lossless = {int(m.group(1)) for line in profile.lines()
                if (m := re.fullmatch(r"priority-flow-control priority (\d) no-drop", line))}
    ecn, strict = set(), set()
    for queue in profile.starting(f"{sw.queue_keyword} "):
        qid = int(queue.line.split()[1])
        assert sw.ecn is not None
        marking = f"random-detect ecn minimum-threshold {sw.ecn.min_threshold} {sw.ecn.unit} maximum-threshold " \
            f"{sw.ecn.max_threshold} {sw.ecn.unit} max-mark-probability {sw.ecn.max_mark_percent} weight 0"
        if any(line == marking for line in queue.lines()):  # the plan's marking profile, as EOS takes it
            ecn.add(qid)
        if queue.child("priority strict"):
            strict.add(qid)
    port_mtus = {}
    for port in sw.ports:
        node = root.child(f"interface {port.name}")
        assert node is not None, f"{sw.name}: {port.name} missing"
        assert node.child("service-profile ROCE-LOSSLESS"), f"{sw.name} {port.name}: no lossless profile"
        if port.ipv4 or port.unnumbered:
            port_mtus[port.name] = mtu = _mtu_child(node) or 0
            assert JUMBO <= mtu <= sw.mtu_bytes, f"{sw.name} {port.name}: routed port MTU {mtu}"
    for svi in root.starting("interface Vlan"):
        assert svi.child(f"mtu {sw.mtu_bytes}"), f"{sw.name} {svi.line}: SVI without jumbo MTU"
    full = [dscp[d] for d in range(64)]
    return SwitchQos(dict(enumerate(full)), full[0], lossless, ecn, strict, port_mtus)


def _nxos(sw: Switch, text: str) -> SwitchQos:
    root = parse_indented(text)
    class_dscps = {}
    for cm in root.starting("class-map type qos match-any "):
        match = cm.starting("match dscp ")
        assert len(match) == 1
        class_dscps[cm.line.split()[-1]] = [int(d) for d in match[0].line.split()[-1].split(",")]
    policy = root.child("policy-map type qos ROCE-CLASSIFY")
    assert policy is not None
    dscp, unmarked = {}, None
    for cls in policy.starting("class "):
        name = cls.line.split()[1]
        group = int(cls.starting("set qos-group ")[0].line.split()[-1])
        for d in class_dscps.get(name, []):
            dscp[d] = group
        if name == "class-default":
            unmarked = group
    assert unmarked is not None, f"{sw.name}: no class-default"
    network = root.child("policy-map type network-qos ROCE-NETWORK")
    assert network is not None
    lossless = set()
    for cls in network.children:
        assert cls.child(f"mtu {sw.mtu_bytes}"), f"{sw.name} {cls.line}: no jumbo MTU"
        for line in cls.lines():
            if line.startswith("pause pfc-cos "):
                cos = int(line.split()[-1])
                assert cls.line == f"class type network-qos c-8q-nq{cos}", f"{sw.name}: pause on wrong class"
                lossless.add(cos)
    queuing = root.child("policy-map type queuing ROCE-EGRESS")
    assert queuing is not None
    ecn, strict = set(), set()
    assert len(queuing.children) == 8, f"{sw.name}: all eight queues must be listed"
    for cls in queuing.children:
        suffix = cls.line.removeprefix("class type queuing c-out-8q-q")
        qid = 0 if suffix == "-default" else int(suffix)
        assert sw.ecn is not None and sw.ecn.unit == "kbytes"
        marking = f"random-detect minimum-threshold {sw.ecn.min_threshold} kbytes maximum-threshold " \
            f"{sw.ecn.max_threshold} kbytes drop-probability {sw.ecn.max_mark_percent} weight 0 ecn"
        if any(line == marking for line in cls.lines()):  # the plan's marking profile, marking instead of dropping
            ecn.add(qid)
        if cls.child("priority level 1"):
            strict.add(qid)
    system = root.child("system qos")
    assert system is not None
    assert system.child("service-policy type network-qos ROCE-NETWORK")
    assert system.child("service-policy type queuing output ROCE-EGRESS")
    port_mtus = {}
    for port in sw.ports:
        node = root.child(f"interface {port.name}")
        assert node is not None, f"{sw.name}: {port.name} missing"
        for line in ("priority-flow-control mode on", "service-policy type qos input ROCE-CLASSIFY"):
            assert node.child(line), f"{sw.name} {port.name}: missing '{line}'"
        port_mtus[port.name] = mtu = _mtu_child(node) or 0
        assert JUMBO <= mtu <= sw.mtu_bytes, f"{sw.name} {port.name}: MTU {mtu}"
    for lag in sw.lags:
        node = root.child(f"interface {lag.name}")
        assert node is not None and node.child("priority-flow-control mode on"), f"{sw.name} {lag.name}"
    assert strict <= {7}, f"{sw.name}: NX-OS queues strictly only from the top group down, not {strict}"
    full = effective([unmarked] * 64, dscp)
    return SwitchQos(dict(enumerate(full)), full[0], lossless, ecn, strict, port_mtus)


def sw_roce_priority(sw: Switch, doc: Any) -> int:
    """The RoCE priority as the NVUE document's PFC profile names it (exactly one lossless priority)."""
    (prio,) = doc[0]["set"]["qos"]["pfc"]["default-global"]["switch-priority"]
    return int(prio)


def _cumulus(sw: Switch, text: str) -> SwitchQos:
    doc = _nvue(text)
    assert isinstance(doc, list) and len(doc) == 1
    tree = doc[0]["set"]
    qos = tree["qos"]
    mapping = qos["mapping"]["default-global"]
    assert mapping["trust"] == "l3"
    dscp = {int(d): v["switch-priority"] for d, v in mapping["dscp"].items()}
    queue_map = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
    # `qos roce` (enabled below) maps priority 3 -> class 3, 6 -> 6, the rest -> 0; the document's entries override
    assert qos["roce"] == {"enable": "on", "mode": "lossless"}
    queue_of = {p: (p if p in (3, 6) else 0) for p in range(8)} | {
        int(p): v["traffic-class"] for p, v in queue_map.items()}
    # the profile's pools, ETS and ECN serve classes 3 (RoCE) and 6 (CNPs): RoCE's priority must land on 3
    assert queue_of[sw_roce_priority(sw, doc)] == 3, f"{sw.name}: RoCE is not in the lossless profile's class"
    pfc = qos["pfc"]["default-global"]
    assert pfc["tx"] == "enable" and pfc["rx"] == "enable"
    lossless = {int(p) for p in pfc["switch-priority"]}
    assert sw.ecn is not None and sw.ecn.unit == "kbytes"
    marking = {"ecn": "enable", "red": "disable", "min-threshold": sw.ecn.min_threshold * 1000,
               "max-threshold": sw.ecn.max_threshold * 1000, "probability": sw.ecn.max_mark_percent}
    ecn_classes = {int(tc) for tc, v in qos["congestion-control"]["default-global"]["traffic-class"].items()
                   if v == marking}
    strict_classes = {int(tc) for tc, v in qos["egress-scheduler"]["default-global"]["traffic-class"].items()
                      if v["mode"] == "strict"}
    dwrr = [v["bw-percent"] for v in qos["egress-scheduler"]["default-global"]["traffic-class"].values()
            if v["mode"] == "dwrr"]
    assert sum(dwrr) <= 100, f"{sw.name}: DWRR weights {dwrr} exceed 100 %"
    # in priorities, as the other platforms' checks speak: the priorities whose class marks / is strict
    ecn = {p for p, tc in queue_of.items() if tc in ecn_classes}
    strict = {p for p, tc in queue_of.items() if tc in strict_classes}
    interfaces = tree["interface"]
    port_mtus = {}
    for port in sw.ports:
        entry = interfaces[port.name]
        assert entry["type"] == "swp"
        port_mtus[port.name] = mtu = entry["link"]["mtu"]
        assert JUMBO <= mtu <= sw.mtu_bytes, f"{sw.name} {port.name}: MTU {mtu}"
    for lag in sw.lags:
        assert interfaces[lag.name]["link"]["mtu"] == sw.mtu_bytes
    full = effective(PLATFORM_DEFAULT_DSCP["cumulus"], dscp)
    return SwitchQos(dict(enumerate(full)), full[0], lossless, ecn, strict, port_mtus)


PARSERS = {"eos": (".cfg", _eos), "nxos": (".cfg", _nxos), "cumulus": (".nvue.yaml", _cumulus)}


def _bgp_origins(sw: Switch, text: str) -> tuple[set[str], set[str]]:
    """What a rendered switch config puts into BGP of its own: (summary-only aggregates, network statements). EOS
    keeps aggregates at the router level and networks in the address family; NX-OS keeps both in its IPv4 unicast
    address family; NVUE in the default VRF's ipv4-unicast family."""
    if sw.platform == "cumulus":
        doc = _nvue(text)
        ipv4 = doc[0]["set"]["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        aggregates = {a for a, conf in (ipv4.get("aggregate-route") or {}).items() if conf.get("summary-only") == "on"}
        return aggregates, set(ipv4.get("network") or {})
    (router,) = parse_indented(text).starting("router bgp ")
    family = router.child("address-family ipv4" if sw.platform == "eos" else "address-family ipv4 unicast")
    assert family is not None, f"{sw.name}: no IPv4 address family"
    where = router if sw.platform == "eos" else family
    aggregates = {m.group(1) for line in where.lines()
                  if (m := re.fullmatch(r"aggregate-address (\S+) summary-only", line))}
    return aggregates, {line.split()[1] for line in family.lines() if line.startswith("network ")}


def check_bgp_origins(sw: Switch, files: dict[str, RenderedFile]) -> None:
    """The switch's rendered BGP originates what the plan says, each aggregate has a contributor strictly inside
    it (else no NOS originates it), and every host /31 of a leaf is in BGP (so, inside its summary, reachable)."""
    suffix = PARSERS[sw.platform][0]
    aggregates, networks = _bgp_origins(sw, files[f"switches/{sw.name}{suffix}"].content)
    assert aggregates == set(sw.bgp.aggregates), f"{sw.name}: aggregates {sorted(aggregates)}"
    assert networks == set(sw.bgp.networks), f"{sw.name}: network statements differ from the plan"
    for agg in map(IPv4Network, aggregates):
        assert any(IPv4Network(n).prefixlen > agg.prefixlen and IPv4Network(n).subnet_of(agg) for n in networks), (
            f"{sw.name}: aggregate {agg} has no contributor, so it is never originated")
    host_nets = {str(IPv4Network(p.ipv4, strict=False)) for p in sw.ports if p.role is PortRole.HOST and p.ipv4}
    assert host_nets <= networks, f"{sw.name}: host /31s {sorted(host_nets - networks)} not in BGP"


def switch_qos(sw: Switch, files: dict[str, RenderedFile]) -> SwitchQos:
    suffix, parse = PARSERS[sw.platform]
    return parse(sw, files[f"switches/{sw.name}{suffix}"].content)


# The RoCE destination queue pair is BTH bytes 5-7, after the 8-byte UDP header: outer L4 bytes 13-15.
ROCE_QP_L4_BYTES = [13, 14, 15]
UDF = re.compile(r"^port-channel load-balance trident udf eth-type IPv4 header outer l4 offset (\d+) mask 0xff$", re.M)
_DLB = re.compile(r"^hardware profile dlb\n((?:  .+\n)+)", re.M)


def fabric_ports(sw: Switch) -> list[str]:
    """The switch's routed fabric ports (uplinks and downlinks outside a LAG), in plan order."""
    return [p.name for p in sw.ports if p.role in (PortRole.UPLINK, PortRole.DOWNLINK) and p.lag is None]


def dlb_block(config: str) -> dict[str, str] | None:
    """The lines of an NX-OS config's `hardware profile dlb` section, by keyword; None without one."""
    found = _DLB.search(config)
    if found is None:
        return None
    return dict(line.strip().split(" ", 1) for line in found.group(1).splitlines())


def check_load_balancing(plan: FabricPlan, files: dict[str, RenderedFile]) -> None:
    """Each switch's rendered text spreads RoCE as its plan says: the queue-pair hash fields, dynamic load balancing
    on exactly its routed fabric ports (NX-OS) with one MAC fabric-wide, adaptive routing and the prefer-global map
    on exactly the sessions that share a router; and a reload-class section is planned exactly where it is
    rendered."""
    dlb_macs = set()
    for sw in plan.switches:
        lb = sw.load_balancing
        assert lb is not None
        if sw.platform == "cumulus":
            doc = _nvue(files[f"switches/{sw.name}.nvue.yaml"].content)[0]["set"]
            assert ("adaptive-routing" in doc["router"]) == lb.adaptive_routing, sw.name
            neighbors = doc["vrf"]["default"]["router"]["bgp"]["neighbor"]
            sessions: dict[str, int] = {}
            for n in sw.bgp.neighbors:
                if n.interface:
                    sessions[n.peer_device] = sessions.get(n.peer_device, 0) + 1
            shared = {n.interface for n in sw.bgp.neighbors if n.interface and sessions[n.peer_device] > 1}
            mapped = {k for k, n in neighbors.items() if "address-family" in n}
            assert mapped == (shared if lb.adaptive_routing else set()), f"{sw.name}: prefer-global on {mapped}"
            assert not lb.roce_qp_hash and lb.dynamic is None and not lb.reload_sections
            continue
        text = files[f"switches/{sw.name}.cfg"].content
        offsets = [int(o) for o in UDF.findall(text)]
        assert offsets == (ROCE_QP_L4_BYTES if lb.roce_qp_hash else []), f"{sw.name}: UDF offsets {offsets}"
        eos_dlb = "\nip hardware fib load-balance distribution dynamic\n" in text
        block = dlb_block(text)
        if sw.platform == "eos":
            assert eos_dlb == (lb.dynamic == "flowlet") and block is None, sw.name
            assert not lb.reload_sections
        else:
            assert not eos_dlb and (block is not None) == (lb.dynamic is not None), sw.name
            assert bool(lb.reload_sections) == (block is not None), f"{sw.name}: reload mark vs rendered profile"
            if block is not None:
                assert block["mode"] == lb.dynamic
                assert block["dlb-interface"].split(" , ") == fabric_ports(sw), f"{sw.name}: DLB ports"
                dlb_macs.add(block["mac-address"])
    assert len(dlb_macs) <= 1, f"DLB switches disagree on the virtual MAC: {dlb_macs}"


def check_fabric(plan: FabricPlan, rendered: list[RenderedFile] | tuple[RenderedFile, ...]) -> None:
    """Assert the end-to-end agreement of every switch and host of a rendered fabric."""
    files = {f.path: f for f in rendered}
    qos_of = {}
    check_load_balancing(plan, files)
    for sw in plan.switches:
        check_bgp_origins(sw, files)
        qos_of[sw.name] = switch_qos(sw, files)
    platform_of = {sw.name: sw.platform for sw in plan.switches}
    by_name = {sw.name: sw for sw in plan.switches}
    cable_of = {(link.a.device, link.a.port): link.length_m for link in plan.links if link.kind is LinkKind.HOST}
    q = plan.qos
    # one IP MTU per routed link: both ends rendered with the same value
    for link in plan.links:
        if link.kind is LinkKind.FABRIC:
            ends = [qos_of[e.device].port_mtus.get(e.port) for e in (link.a, link.b)]
            assert ends[0] is not None and ends[0] == ends[1], (
                f"{link.a.device} {link.a.port} MTU {ends[0]} vs {link.b.device} {link.b.port} MTU {ends[1]}")
    named = dict(q.dscp_to_priority)
    # The fabric's map, stated from the intent alone: named DSCPs where they were named, all others class 0.
    fabric = [named.get(d, 0) for d in range(64)]
    no_drop = {d for d, p in named.items() if p in q.lossless_priorities}
    for name, sq in qos_of.items():
        as_priorities = list(range(8))
        if platform_of[name] == "nxos":
            as_priorities = [nxos_group(p, q.cnp_priority) for p in range(8)]
        assert [sq.dscp_to_priority[d] for d in range(64)] == [as_priorities[p] for p in fabric], (
            f"{name}: its DSCP map differs from the fabric's")
        lossless_classes = {as_priorities[p] for p in q.lossless_priorities}
        reaching = {d for d in range(64) if sq.dscp_to_priority[d] in lossless_classes}
        assert reaching == no_drop, f"{name}: DSCPs {sorted(reaching)} reach the no-drop class, not {sorted(no_drop)}"
        assert sq.lossless == set(q.lossless_priorities), f"{name}: PFC on {sq.lossless}"
        assert sq.ecn_queues == {q.roce_priority}, f"{name}: ECN on {sq.ecn_queues}"
        cnp_class = sq.dscp_to_priority.get(q.cnp_dscp)
        assert sq.strict_queues == {cnp_class}, f"{name}: CNPs in {cnp_class}, strict queues {sq.strict_queues}"
        assert cnp_class not in sq.lossless
        unmarked = dict(q.dscp_to_priority).get(0, 0)
        if platform_of[name] == "nxos":  # qos-groups are NX-OS's own numbering of the priorities
            unmarked = nxos_group(unmarked, q.cnp_priority)
        assert sq.unmarked_class == unmarked, f"{name}: DSCP 0 in {sq.unmarked_class}, not {unmarked}"

    # The switches every host's traffic can cross besides its own leaves: the whole upper fabric.
    upper = [sw.name for sw in plan.switches if sw.role.value != "leaf"]
    mtu = plan.host_profile.mtu_bytes
    for host in plan.hosts:
        # The script's lines that the checks below can match (verify_speed and converge calls, and the commands
        # after a "-- "), so each pattern scans a few hundred lines rather than the whole script with its library.
        script = "\n".join(line for line in files[f"hosts/{host.name}.roce.sh"].content.splitlines()
                            if line.startswith(("verify_speed ", "ensure_", "  FABRIC_")))
        fabric_said = dict(re.findall(r"^  (FABRIC_[A-Z_]+)=\"?([^\"\n]*)\"?$", script, re.MULTILINE))
        # a routing table per bond / rail NIC holds the interface's own subnet on-link, from its own address, beside
        # the rule that sends what it sources there (same-rack peers bridged, not routed through the leaf)
        tabled = [(b.name, b.ipv4, b.table) for b in host.bonds if b.table is not None]
        tabled += [(n.netdev, n.ipv4, n.table) for n in host.nics]
        for netdev_name, address, table in tabled:
            own = IPv4Interface(address)
            assert re.findall(rf"^ensure_rule {re.escape(str(own.ip))} (\d+)$", script, re.M) == [str(table)], (
                f"{host.name} {netdev_name}: no rule for its address into table {table}")
            assert f"\nensure_table_link {own.network} {netdev_name} {own.ip} {table}\n" in f"\n{script}\n", (
                f"{host.name} {netdev_name}: table {table} lacks {own.network} on-link from {own.ip}")
        env = dict(re.findall(r"^export (NCCL_[A-Z_]+)=(\S+)$", files[f"hosts/{host.name}.nccl.env"].content,
                              re.MULTILINE))
        tos = int(env["NCCL_IB_TC"])
        assert tos & 0b11 == 0b10, "RoCE packets leave hosts ECN-capable (ECT(0))"
        assert env["NCCL_IB_HCA"] == "=" + ",".join(f"{d}:1" for d in host.rdma_devices)
        # (rdma device, its ports as (netdev, leaf)) for bonds and for rail NICs alike
        speeds = {m.netdev: b.speed_gbps for b in host.bonds for m in b.members} | {
            n.netdev: n.speed_gbps for n in host.nics}
        for netdev_name, gbps in speeds.items():
            assert re.findall(rf"^verify_speed {re.escape(netdev_name)} (\d+)$", script, re.MULTILINE) == [str(gbps)], (
                f"{host.name} {netdev_name}: link speed not verified at {gbps}G")
        # the NIC sizes its lossless receive buffer from the same cable the switch end's headroom was sized for
        ends = [(m.netdev, m.switch, m.port) for b in host.bonds for m in b.members]
        ends += [(n.netdev, n.switch, n.port) for n in host.nics]
        for netdev_name, switch_name, port_name in ends:
            told = re.findall(rf"^ensure_port_qos {re.escape(netdev_name)} (\d+)$", script, re.MULTILINE)
            planned = cable_of[(switch_name, port_name)]
            assert told == [str(min(max(planned, 1), 999))], f"{host.name} {netdev_name}: cable {told} vs {planned} m"
            assert planned <= by_name[switch_name].longest_cable_m, f"{switch_name} headroom ignores {port_name}"
        devices = [(b.rdma_device, [(m.netdev, m.switch) for m in b.members]) for b in host.bonds]
        devices += [(n.rdma_device, [(n.netdev, n.switch)]) for n in host.nics]
        assert devices, f"{host.name} has no fabric NIC"
        for device, ports in devices:
            dev = re.escape(device)
            assert re.findall(rf"^ensure_roce {dev} ", script, re.MULTILINE), f"{host.name}: {device} not set up"
            assert fabric_said["FABRIC_ROCE_TOS"] == str(tos), f"{host.name}: rdma_cm ToS vs NCCL_IB_TC {tos}"
            path = [leaf for _, leaf in ports] + upper
            for netdev_name, _ in ports:
                netdev = re.escape(netdev_name)
                assert len(re.findall(rf"^ensure_port_qos {netdev} \d+$", script, re.MULTILINE)) == 1, (
                    f"{host.name} {netdev_name}: its QoS (trust, DSCP map, PFC) is not set once")
                wanted = dict(tuple(map(int, e.split(":"))) for e in fabric_said["FABRIC_DSCP_MAP"].split(","))
                nic = effective(NIC_DEFAULT_DSCP, wanted)
                assert nic == fabric, f"{host.name} {netdev_name}: the NIC's DSCP map differs from the fabric's"
                assert nic[tos >> 2] == q.roce_priority and nic[q.cnp_dscp] == q.cnp_priority
                flags = {i for i, v in enumerate(fabric_said["FABRIC_PFC"].split(",")) if v == "1"}
                assert re.search(rf"^ensure_mtu {netdev}$", script, re.MULTILINE)
                assert fabric_said["FABRIC_MTU"] == str(mtu)
                for sw_name in path:
                    sq = qos_of[sw_name]
                    prio = sq.dscp_to_priority.get(tos >> 2)
                    assert prio in sq.lossless, f"{host.name}: DSCP {tos >> 2} lands in {prio} on {sw_name}"
                    assert flags == sq.lossless, f"{host.name} {netdev_name}: host PFC {flags} vs {sw_name}"
