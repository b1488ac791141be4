"""The running fabric against the plan: one row per check, each naming what was expected and what was seen.

Expected values come from the plan alone (renderers/plan.py) — never from the rendered text — so a renderer's
mistake shows up here as a failed check instead of being confirmed. Observations arrive in the shared words of
observation.py; nothing here knows a platform's output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rocefab.deploy.verify.observation import (
    HostNetdev,
    HostObservation,
    Interface,
    PortCounters,
    RdmaDevice,
    SwitchObservation,
)
from rocefab.platforms import unit
from rocefab.renderers.plan import FabricPlan, Host, PortRole, Switch

SPEED_FLOOR_GBPS = 200  # the field's floor for a GPU fabric port: anything slower is flagged
ERROR_RATE_LIMIT = 0.00001  # input errors above 0.001 % of packets in (the field's alarm threshold)
PAUSE_STORM_PER_S = 10_000  # PFC frames a second, in either direction, that no healthy link sustains
NO_ECN_SYSFS = ("no per-priority DCQCN enables in sysfs (MLNX_OFED's ecn/ folder, or a file that read empty); "
                "on the inbox driver they are the firmware's ROCE_CC_PRIO_MASK_P1 (mlxconfig query)")


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"  # worth a look, not a violation (a host that sends no LLDP)


@dataclass(frozen=True, slots=True)
class Row:
    device: str
    port: str  # "" for the device as a whole
    check: str
    expected: str
    observed: str
    verdict: Verdict

    @property
    def failed(self) -> bool:
        return self.verdict is Verdict.FAIL


def judged(device: str, port: str, check: str, expected: object, observed: object, ok: bool,
         *, soft: bool = False) -> Row:
    verdict = Verdict.PASS if ok else Verdict.WARN if soft else Verdict.FAIL
    return Row(device, port, check, str(expected), str(observed), verdict)


def _gbps(value: float | None) -> str:
    return "not reported" if value is None else f"{value:g}G"


def _priorities(values: Iterable[int]) -> str:
    found = sorted(values)
    return ",".join(map(str, found)) if found else "none"


def _dscp_differences(expected: Sequence[int], observed: Sequence[int]) -> str:
    wrong = [f"{d}->{observed[d]}" for d in range(64) if observed[d] != expected[d]]
    return "as planned" if not wrong else " ".join(wrong[:8]) + (f" (+{len(wrong) - 8} more)" if len(wrong) > 8 else "")


# -- switches --------------------------------------------------------------------------------------------------------
def _link_rows(sw: Switch, obs: SwitchObservation, hosts: set[str]) -> list[Row]:
    rows = []
    for port in sw.ports:
        seen = obs.interfaces.get(port.name)
        rows.append(judged(sw.name, port.name, "link", "up", "absent" if seen is None else "up" if seen.up else "down",
                         seen is not None and seen.up))
        if seen is not None and seen.up:
            rows.append(judged(sw.name, port.name, "speed", f"{port.speed_gbps}G", _gbps(seen.speed_gbps),
                             seen.speed_gbps == port.speed_gbps))
            if port.speed_gbps < SPEED_FLOOR_GBPS:
                rows.append(judged(sw.name, port.name, "speed-floor", f">= {SPEED_FLOOR_GBPS}G", f"{port.speed_gbps}G",
                                 False, soft=True))
        neighbors = obs.lldp.get(port.name, ())
        want = f"{port.peer.device} {port.peer.port}"
        to_host = port.peer.device in hosts
        if any(n.device == port.peer.device and n.port == port.peer.port for n in neighbors):
            rows.append(judged(sw.name, port.name, "lldp", want, want, True))
        elif neighbors:
            rows.append(judged(sw.name, port.name, "lldp", want, ", ".join(f"{n.device} {n.port}" for n in neighbors),
                             False))
        elif seen is not None and seen.up:
            # hosts need lldpd to be seen; a switch always is
            rows.append(judged(sw.name, port.name, "lldp", want, "no neighbour", False, soft=to_host))
        if port.role in (PortRole.UPLINK, PortRole.DOWNLINK):  # routed: the MTU is the port's own
            rows.append(_mtu_row(sw, port.name, seen, sw.port_mtu(port)))
    for lag in sw.lags:
        seen = obs.interfaces.get(lag.name)
        rows.append(judged(sw.name, lag.name, "link", "up", "absent" if seen is None else "up" if seen.up else "down",
                         seen is not None and seen.up))
    spec = unit(sw.platform).spec
    for svi in sw.svis:
        name = (spec.svi_format if spec else "Vlan{vlan}").format(vlan=svi.vlan)
        rows.append(_mtu_row(sw, name, obs.interfaces.get(name), sw.mtu_bytes))
    return rows


def _mtu_row(sw: Switch, name: str, seen: Interface | None, want: int) -> Row:
    observed = "absent" if seen is None else "not reported" if seen.mtu is None else seen.mtu
    return judged(sw.name, name, "mtu", want, observed, seen is not None and seen.mtu == want)


def _classes(plan: FabricPlan, sw: Switch) -> tuple[int, ...]:
    """The class (traffic class, qos-group) each fabric priority takes on this platform: the priority itself,
    except where the platform queues strictly only from one class (NX-OS: the CNP class on qos-group 7)."""
    spec = unit(sw.platform).spec
    strict = spec.strict_qos_group if spec else None
    return tuple(strict if strict is not None and p == plan.qos.cnp_priority else p for p in range(8))


def _qos_rows(plan: FabricPlan, sw: Switch, obs: SwitchObservation) -> list[Row]:
    q = plan.qos
    klass = _classes(plan, sw)
    if obs.qos is None:
        return [judged(sw.name, "", "qos", "read", "not reported", False)]
    rows = []
    lossless = frozenset(q.lossless_priorities)
    for port in sw.ports:
        pq = obs.qos.ports.get(port.name)
        if pq is None:
            rows.append(judged(sw.name, port.name, "pfc", _priorities(lossless), "not reported", False))
            continue
        rows.append(judged(sw.name, port.name, "trust", "dscp", "dscp" if pq.trust_dscp else "not dscp", pq.trust_dscp))
        rows.append(judged(sw.name, port.name, "pfc", _priorities(lossless), _priorities(pq.pfc_priorities),
                         pq.pfc_priorities == lossless))
        if q.watchdog_enabled:
            rows.append(judged(sw.name, port.name, "pfc-watchdog", "armed", "armed" if pq.watchdog else "off",
                             pq.watchdog))
    expected_map = tuple(klass[p] for p in q.dscp_classes)
    rows.append(judged(sw.name, "", "dscp-map", "as planned", _dscp_differences(expected_map, obs.qos.dscp_priority),
                     tuple(obs.qos.dscp_priority) == expected_map))
    cnp = klass[q.cnp_priority]
    rows.append(judged(sw.name, "", "cnp-strict", f"class {cnp} strict",
                     f"strict: {_priorities(obs.qos.strict_priorities)}", cnp in obs.qos.strict_priorities))
    if sw.ecn is not None:
        want = sw.ecn
        seen = obs.qos.ecn.get(klass[q.roce_priority])
        expected = f"{want.min_threshold}-{want.max_threshold} {want.unit} @ {want.max_mark_percent}%"
        observed = "off" if seen is None else \
            f"{seen.min_threshold}-{seen.max_threshold} {seen.unit} @ {seen.max_mark_percent}%"
        rows.append(judged(sw.name, "", "ecn", f"priority {q.roce_priority}: {expected}", observed,
                           observed == expected))
    return rows


def _bgp_rows(sw: Switch, obs: SwitchObservation) -> list[Row]:
    rows = []
    for n in sw.bgp.neighbors:
        where = n.interface or n.address or n.peer_device
        session = next((s for s in obs.bgp if (n.interface and s.interface == n.interface)
                        or (n.address and s.address == n.address)), None)
        observed = "not configured" if session is None else session.state
        rows.append(judged(sw.name, where, "bgp", f"Established with {n.peer_device} (AS {n.remote_asn})", observed,
                         session is not None and session.established))
    return rows


def switch_rows(plan: FabricPlan, sw: Switch, obs: SwitchObservation) -> list[Row]:
    hosts = {h.name for h in plan.hosts}
    rows = _link_rows(sw, obs, hosts) + _qos_rows(plan, sw, obs) + _bgp_rows(sw, obs)
    if sw.mlag is not None:
        kind = sw.mlag.kind
        rows.append(judged(sw.name, "", kind, f"{kind} with {sw.mlag.peer} healthy",
                         "not reported" if obs.mlag is None else obs.mlag.detail,
                         obs.mlag is not None and obs.mlag.healthy))
    return rows


# -- counters over a sampling window ---------------------------------------------------------------------------------
def lossless_class(plan: FabricPlan, sw: Switch) -> int:
    """The class (traffic class, qos-group) RoCE's queue counters are kept under on `sw`: where a lossless profile
    owns fixed classes, the profile's."""
    spec = unit(sw.platform).spec
    return spec.roce_profile_classes[0] if spec and spec.roce_profile_classes else \
        _classes(plan, sw)[plan.qos.roce_priority]


def counter_rows(plan: FabricPlan, sw: Switch, before: Mapping[str, PortCounters], after: Mapping[str, PortCounters],
                 seconds: float) -> list[Row]:
    """What each port did between two reads `seconds` apart (counter_checks.py); a port missing from either read
    is a WARN, not a verdict on nothing."""
    from rocefab.deploy.verify import counter_checks  # it builds on this module's rows

    rows = []
    lossless = lossless_class(plan, sw)
    for port in sw.ports:
        a, b = before.get(port.name), after.get(port.name)
        if a is None or b is None:
            rows.append(judged(sw.name, port.name, "counters", "read twice", "not reported", False, soft=True))
            continue
        rows += counter_checks.port_rows(plan, sw, port.name, a, b, lossless, seconds)
    return rows


# -- hosts -----------------------------------------------------------------------------------------------------------
def _netdev_rows(plan: FabricPlan, host: str, name: str, seen: HostNetdev | None, speed_gbps: int | None,
                 physical: bool, cable_len: int | None = None) -> list[Row]:
    q = plan.qos
    mtu = plan.host_profile.mtu_bytes
    if seen is None:
        return [judged(host, name, "link", "up", "absent", False)]
    rows = [judged(host, name, "link", "up", "up" if seen.up else "down", seen.up),
            judged(host, name, "mtu", mtu, seen.mtu, seen.mtu == mtu)]
    if speed_gbps is not None and seen.up:
        rows.append(judged(host, name, "speed", f"{speed_gbps}G", _gbps(seen.speed_gbps),
                           seen.speed_gbps == speed_gbps))
    if not physical:
        return rows
    rows.append(judged(host, name, "nic-trust", "dscp", seen.trust or "not reported", seen.trust == "dscp"))
    pfc = ",".join(map(str, q.pfc_vector))
    rows.append(judged(host, name, "nic-pfc", pfc, ",".join(map(str, seen.pfc)) if seen.pfc else "not reported",
                     seen.pfc == q.pfc_vector))
    if cable_len is not None:  # the NIC's receive-buffer headroom is sized for the planned cable, as the switch's
        rows.append(judged(host, name, "nic-cable-len", f"{cable_len} m",
                           "not reported" if seen.cable_m is None else f"{seen.cable_m} m", seen.cable_m == cable_len,
                           soft=seen.cable_m is None))
    if seen.trust == "dscp":
        observed = _dscp_differences(q.dscp_classes, seen.dscp_priority) if seen.dscp_priority else "not reported"
        rows.append(judged(host, name, "nic-dscp-map", "as planned", observed, seen.dscp_priority == q.dscp_classes))
    pause = "not reported" if seen.pause_rx is None else \
        f"rx {'on' if seen.pause_rx else 'off'}, tx {'on' if seen.pause_tx else 'off'}"
    rows.append(judged(host, name, "global-pause", "rx off, tx off", pause, seen.pause_rx is False
                     and seen.pause_tx is False))
    for point, enabled in (("notification", seen.ecn_np), ("reaction", seen.ecn_rp)):
        want = set(q.lossless_priorities)
        if enabled is None:  # neither on nor off is known: a warning that says where the setting lives
            rows.append(judged(host, name, "dcqcn", f"{point} point on priority {_priorities(want)}",
                             f"not reported: {NO_ECN_SYSFS}", False, soft=True))
            continue
        rows.append(judged(host, name, "dcqcn", f"{point} point on priority {_priorities(want)}",
                         f"on: {_priorities(enabled)}", want <= set(enabled)))
    return rows


def _rdma_rows(plan: FabricPlan, host: str, device: str, seen: RdmaDevice | None, netdev: str,
               source: str) -> list[Row]:
    if seen is None:
        return [judged(host, device, "rdma", f"ACTIVE on {netdev}", "absent", False)]
    gid = "0000:0000:0000:0000:0000:ffff:" + "{:02x}{:02x}:{:02x}{:02x}".format(*map(int, source.split(".")))
    found = [index for index, value, ndev in seen.roce_v2_gids if value == gid and ndev in (netdev, "")]
    tos = plan.qos.roce_tos
    return [judged(host, device, "rdma", f"ACTIVE on {netdev}", seen.state or "not reported", seen.active),
            judged(host, device, "gid", f"RoCE v2 GID for {source} on {netdev}",
                 f"index {found[0]}" if found else "none", bool(found)),
            _unknown_or(host, device, "traffic-class", tos, seen.traffic_class, seen.why.get("traffic_class"),
                        "not set"),
            _unknown_or(host, device, "rdma-cm-tos", tos, seen.cma_tos, seen.why.get("cma_tos"), "not reported")]


def _unknown_or(host: str, device: str, check: str, want: int, seen: int | None, why: str | None,
                absent: str) -> Row:
    """A value compared with the plan; one that could not be read for a stated reason is a warning with it."""
    if seen is None and why:
        return judged(host, device, check, want, f"not reported: {why}", False, soft=True)
    return judged(host, device, check, want, absent if seen is None else seen, seen == want)


def _nccl_rows(plan: FabricPlan, host: Host, obs: HostObservation) -> list[Row]:
    if obs.nccl_conf is None:
        return [judged(host.name, "", "nccl", "/etc/nccl.conf with the fabric's settings", "absent", False)]
    lines = [line.strip() for line in obs.nccl_conf.splitlines()]
    first: dict[str, str] = {}
    for line in lines:  # NCCL keeps a key's first value
        key, sep, value = line.partition("=")
        if sep and not key.startswith("#") and key.strip() not in first:
            first[key.strip()] = value.strip()
    rows = []
    for key, value in plan.host_profile.nccl_env:
        rows.append(judged(host.name, "", "nccl", f"{key}={value}",
                         f"{key}={first[key]}" if key in first else "absent", first.get(key) == value))
    return rows


def host_rows(plan: FabricPlan, host: Host, obs: HostObservation) -> list[Row]:
    rows = []
    for bond in host.bonds:
        seen = obs.netdevs.get(bond.name)
        rows += _netdev_rows(plan, host.name, bond.name, seen, None, physical=False)
        if seen is not None:
            members = tuple(m.netdev for m in bond.members)
            slaves = seen.bond_slaves or ()
            rows.append(judged(host.name, bond.name, "bond", f"members {' '.join(members)}, mii up",
                             f"members {' '.join(slaves) or 'none'}, mii {'up' if seen.bond_mii_up else 'down'}",
                             set(slaves) == set(members) and bool(seen.bond_mii_up)))
        for member in bond.members:
            rows += _netdev_rows(plan, host.name, member.netdev, obs.netdevs.get(member.netdev), bond.speed_gbps,
                                 physical=True, cable_len=member.nic_cable_len)
        rows += _rdma_rows(plan, host.name, bond.rdma_device, obs.rdma.get(bond.rdma_device), bond.name, bond.source)
    for nic in host.nics:
        rows += _netdev_rows(plan, host.name, nic.netdev, obs.netdevs.get(nic.netdev), nic.speed_gbps, physical=True,
                             cable_len=nic.nic_cable_len)
        rows += _rdma_rows(plan, host.name, nic.rdma_device, obs.rdma.get(nic.rdma_device), nic.netdev, nic.source)
    return rows + _nccl_rows(plan, host, obs)


# -- hosts: the driver stack below the NIC script --------------------------------------------------------------------
def driver_rows(plan: FabricPlan, host: Host, obs: HostObservation) -> list[Row]:
    """Each planned NIC's firmware as reported, and GPUDirect RDMA's peer-memory module. Neither is set by the host
    script, so apply's gate leaves them to verify."""
    rows = []
    for device in host.rdma_devices:
        seen = obs.rdma.get(device)
        firmware = None if seen is None else seen.firmware
        rows.append(judged(host.name, device, "nic-firmware", "reported", firmware or "not reported",
                         firmware is not None))
    if obs.modules is None:
        observed = "/proc/modules not readable"
    elif "nvidia_peermem" in obs.modules:
        observed = "loaded"
    elif "nv_peer_mem" in obs.modules:
        observed = "nv_peer_mem (its predecessor) loaded"
    else:
        observed = "not loaded"
    rows.append(judged(host.name, "", "nvidia-peermem", "nvidia_peermem loaded", observed,
                     bool(obs.modules and obs.modules & {"nvidia_peermem", "nv_peer_mem"})))
    return rows


def firmware_rows(observed: Sequence[tuple[Host, HostObservation]]) -> list[Row]:
    """One firmware per NIC model across the fleet: each planned NIC against the release most NICs of its board
    (PSID) run. Without a majority (a tie) every NIC of that model is named: which release is the odd one out is
    the site's to say."""
    nics: dict[str, list[tuple[str, str, str]]] = {}  # board -> (host, RDMA device, release)
    for host, obs in observed:
        for device in host.rdma_devices:
            seen = obs.rdma.get(device)
            if seen is not None and seen.fw_version is not None:
                nics.setdefault(seen.board_id or "unknown board", []).append((host.name, device, seen.fw_version))
    rows = []
    for board, found in sorted(nics.items()):
        counts: dict[str, int] = {}
        for _, _, release in found:
            counts[release] = counts.get(release, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        majority = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else None
        if majority is None:
            expected = f"one release on every {board} NIC (no majority: " + \
                ", ".join(f"{r} on {n}" for r, n in ranked) + ")"
        else:
            expected = f"{majority}, as {counts[majority]} of {len(found)} {board} NICs run"
        rows += [judged(name, device, "firmware-match", expected, release, release == majority)
                 for name, device, release in found]
    return rows
