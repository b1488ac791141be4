"""The device output corpus and the readers built on it: every sample has its provenance; each reader reads the
fields verify uses from the samples; and no drift of a sample (a key dropped or renamed, a count that is no
count, a table emptied, a one-row table printed the other way) turns a faulted device into a PASS."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from corpus import EVIDENCE, FIXTURES, counters_set, drifts, index, load, platforms, sample

from rocefab.deploy.verify.checks import Verdict
from rocefab.deploy.verify.counter_checks import port_rows
from rocefab.deploy.verify.doctor import diagnose
from rocefab.deploy.verify.observation import PortCounters, asn
from rocefab.platforms.cumulus import counters as cumulus_counters
from rocefab.platforms.eos import counters as eos_counters
from rocefab.platforms.eos import observe as eos_observe
from rocefab.platforms.host import observe as host_observe
from rocefab.platforms.nxos import bootflash
from rocefab.platforms.nxos import counters as nxos_counters
from rocefab.platforms.nxos import observe as nxos_observe
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Switch

ROOT = Path(__file__).resolve().parents[1]


# -- the index --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("platform", platforms())
def test_every_sample_has_its_provenance(platform: str) -> None:
    found = index(platform)
    listed = set()
    for entry in found.get("samples") or []:
        assert (FIXTURES / platform / entry["file"]).is_file(), entry["file"]
        assert entry["evidence"] in EVIDENCE, entry
        for key in ("command", "release", "source", "licence"):
            assert str(entry.get(key) or "").strip(), (entry["file"], key)
        if entry["evidence"] == "reconstructed":
            assert str(entry.get("reconstructed") or "").strip(), f"{entry['file']}: say which keys came from where"
        listed.add(entry["file"])
        load(platform, entry["file"])  # parses (JSON) or reads (text)
    on_disk = {str(p.relative_to(FIXTURES / platform)) for p in (FIXTURES / platform).rglob("*")
               if p.is_file() and p.name != "index.yaml"}
    assert on_disk == listed, f"unindexed: {sorted(on_disk - listed)}; missing: {sorted(listed - on_disk)}"
    for gap in found.get("unsourced") or []:
        assert str(gap.get("command") or "").strip() and str(gap.get("why") or "").strip(), gap


# -- a plan whose RoCE class is the one a sample's device runs --------------------------------------------------------
def plan_with_roce_priority(priority: int, tmp: Path) -> FabricPlan:
    text = (ROOT / "intents" / "pod32.yaml").read_text(encoding="utf-8")
    intent = tmp / "pod.yaml"
    intent.write_text(text.replace("roce: {dscp: 26, priority: 3}", f"roce: {{dscp: 26, priority: {priority}}}"),
                      encoding="utf-8")
    checked = check_file(intent, "pod")
    assert checked.plan is not None
    return checked.plan


def leaf(plan: FabricPlan, platform: str) -> Switch:
    return next(sw for sw in plan.switches if sw.platform == platform and sw.role.value == "leaf")


Reader = Callable[[Sequence[Any]], Mapping[str, PortCounters]]


def verdicts(plan: FabricPlan, sw: Switch, lossless: int, read: Reader, before: Sequence[Any],
             after: Sequence[Any]) -> dict[str, dict[str, Verdict]]:
    a, b = read(before), read(after)
    return {port: {r.check: r.verdict for r in port_rows(plan, sw, port, a[port], b[port], lossless, 1.0)}
            for port in a}


def no_drift_passes(plan: FabricPlan, sw: Switch, lossless: int, read: Reader, answers: list[Any],
                    feeds: set[str], skip: frozenset[str]) -> int:
    """The faulted device (every counter 10^9 after 0) fails each check in `feeds` on at least one port; then for
    every drift of every answer, applied to both reads as a release would, none of those checks passes on any
    port. Returns how many drifts were tried."""
    before = [counters_set(x, 0, skip) for x in answers]
    after = [counters_set(x, 10**9, skip) for x in answers]
    baseline = verdicts(plan, sw, lossless, read, before, after)
    sick = [p for p, rows in baseline.items() if all(rows.get(c) is Verdict.FAIL for c in feeds)]
    assert sick, f"no port fails all of {sorted(feeds)}: {baseline}"
    tried = 0
    for i, answer in enumerate(after):
        for what, drifted in drifts(answer):
            # the same drift in the first read: the drifted answer with its counters at 0
            drifted_zero = counters_set(drifted, 0, skip)
            b = [*after[:i], drifted, *after[i + 1:]]
            a = [*before[:i], drifted_zero, *before[i + 1:]]
            found = verdicts(plan, sw, lossless, read, a, b)
            for port in sick:
                passed = [c for c, v in found.get(port, {}).items() if c in feeds and v is Verdict.PASS]
                assert not passed, f"answer {i}: {what}: {port} passes {passed}"
            tried += 1
    return tried


# -- NX-OS ------------------------------------------------------------------------------------------------------------
NXOS_ANSWERS = ("show interface counters", "show interface counters errors", "show interface priority-flow-control",
                "show queuing interface", "show queuing pfc-queue detail")
NXOS_NAMES = frozenset({"cos", "pfc-qosgrp", "eq-qosgrp", "pfc-cos", "module_number"})  # numbers that are names


def nxos_answers(*commands: str) -> list[Any]:
    return [sample("nxos", f"{c} | json", "9.3") if c in commands else {} for c in NXOS_ANSWERS]


def nxos_reader(ports: Sequence[str]) -> Reader:
    return lambda answers: nxos_counters.parse(answers, ports)


def test_nxos_counters_from_the_samples() -> None:
    c = nxos_counters.parse(nxos_answers(*NXOS_ANSWERS), ["Ethernet1/1", "Ethernet1/51", "Ethernet1/52"])
    one = c["Ethernet1/1"]
    # show interface counters: unicast (row 1) + multicast + broadcast (row 2); errors from the first of 3 rows
    assert (one.in_packets, one.out_packets, one.in_errors) == (73625 + 2805707 + 3, 2830261, 15)
    assert one.pfc_rx is None and one.queue_drops is None and one.watchdog_storms is None  # not in these samples
    e51 = c["Ethernet1/51"]
    assert (e51.pfc_rx, e51.pfc_tx) == (0, 150)  # TABLE_module/.../ROW_pfc_interface rx-stats, tx-stats
    assert e51.pfc_tx_priority == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 150, 6: 0, 7: 0}  # per CoS, ingress row
    assert e51.queue_drops == {0: 0, 5: 0}  # "WRED/AFD & Tail Drop" Pkts per qos-group; the CPU/SPAN groups skipped
    assert e51.ecn_marked is None  # 9.3 prints no ECN row: not reported, not 0
    assert e51.watchdog_storms == {5: 2}  # "QOS GROUP 5 " / q-shutdown
    assert c["Ethernet1/52"].watchdog_storms == {5: 0}


@pytest.mark.parametrize(("commands", "feeds", "ports"), [
    (("show interface counters", "show interface counters errors"), {"input-error-rate"}, ["Ethernet1/1"]),
    (("show interface priority-flow-control", "show queuing interface", "show queuing pfc-queue detail"),
     {"pfc-pause-rate", "lossless-drops", "pfc-watchdog-events"}, ["Ethernet1/51", "Ethernet1/52"]),
])
def test_no_drift_of_the_nxos_samples_passes(commands: tuple[str, ...], feeds: set[str], ports: list[str],
                                             tmp_path: Path) -> None:
    plan = plan_with_roce_priority(5, tmp_path)  # the sample's switch runs RoCE on CoS / qos-group 5
    tried = no_drift_passes(plan, leaf(plan, "nxos"), 5, nxos_reader(ports), nxos_answers(*commands), feeds,
                            NXOS_NAMES)
    assert tried > 20, tried


def _set(tree: Any, match: Callable[[dict[str, Any]], bool], key: str, value: str) -> None:
    """In every row of `tree` that `match` accepts, `key` becomes `value`."""
    if isinstance(tree, dict):
        if match(tree):
            tree[key] = value
        for v in tree.values():
            _set(v, match, key, value)
    elif isinstance(tree, list):
        for v in tree:
            _set(v, match, key, value)


def test_a_sick_nxos_port_in_ciscos_format_fails_and_doctor_names_each_cause(tmp_path: Path) -> None:
    """Ethernet1/51 pausing without end on CoS 5 (2,000,000 frames a second), dropping on qos-group 5's queue and
    having its watchdog shut that queue three times in the window, in the 9.3 shapes: each check fails and doctor
    names pause-storm, lossless-drops and watchdog-firing on that port."""
    plan = plan_with_roce_priority(5, tmp_path)
    sw = leaf(plan, "nxos")
    before = [counters_set(x, 0, NXOS_NAMES) for x in nxos_answers(*NXOS_ANSWERS)]
    after = counters_set(before, 0, NXOS_NAMES)
    pfc, queuing, watchdog = after[2], after[3], after[4]
    _set(pfc, lambda r: r.get("if_name_str") == "Ethernet1/51", "rx-stats", "2000000")
    _set(queuing, lambda r: r.get("cos") == "5", "rx-pause-count", "2000000")
    _set(queuing, lambda r: r.get("eq-stat-type") == "WRED/AFD & Tail Drop" and r.get("eq-stat-units") == "Pkts",
         "eq-uc-stat-value", "5000")  # group 0's queue too: only group 5's is judged
    _set(watchdog, lambda r: "q-shutdown" in r, "q-shutdown", "3")
    a, b = nxos_counters.parse(before, ["Ethernet1/51"]), nxos_counters.parse(after, ["Ethernet1/51"])
    rows = port_rows(plan, sw, "Ethernet1/51", a["Ethernet1/51"], b["Ethernet1/51"], 5, 1.0)
    judged = {r.check: r for r in rows}
    for check in ("pfc-pause-rate", "lossless-drops", "pfc-watchdog-events"):
        assert judged[check].verdict is Verdict.FAIL, judged[check]
    assert "rx 2,000,000/s" in judged["pfc-pause-rate"].observed and "priority 5" in judged["pfc-pause-rate"].expected
    found = {(d.code, d.port) for d in diagnose(plan, rows, "pod.yaml", "inventory.yaml")}
    assert {("pause-storm", "Ethernet1/51"), ("lossless-drops", "Ethernet1/51"),
            ("watchdog-firing", "Ethernet1/51")} <= found, found


# -- EOS --------------------------------------------------------------------------------------------------------------
EOS_ANSWERS = ("show interfaces", "show priority-flow-control counters", "show interfaces counters queue detail",
               "show qos interfaces ecn counters queue")
EOS_FILES = {"show interfaces": "napalm-units/show_interfaces.json",
             "show priority-flow-control counters": "anta-units/show_priority_flow_control_counters.json",
             "show interfaces counters queue detail": "anta-units/show_interfaces_counters_queue_detail.json",
             "show qos interfaces ecn counters queue": "anta-units/show_qos_interfaces_ecn_counters_queue.json"}


RANGED = {"show interfaces counters queue detail": "anta-units/show_interfaces_counters_queue_detail_ranges.json"}


def eos_answers(*commands: str, files: Mapping[str, str] | None = None) -> list[Any]:
    chosen = {**EOS_FILES, **(files or {})}
    return [load("eos", chosen[c]) if c in commands else {} for c in EOS_ANSWERS]


def eos_reader(ports: Sequence[str]) -> Reader:
    return lambda answers: eos_counters.parse(answers, ports)


def test_eos_counters_from_the_samples() -> None:
    c = eos_counters.parse(eos_answers(*EOS_ANSWERS), ["Ethernet1", "Ethernet2", "Ethernet3/3/1", "Ethernet10/28/1"])
    assert (c["Ethernet1"].in_packets, c["Ethernet1"].in_errors, c["Ethernet1"].out_packets) == (0, 0, 0)
    assert c["Ethernet1"].queue_drops == {0: 2, 1: 0}  # unicast queues only: TC1's multicast drops are not RoCE
    assert c["Ethernet2"].queue_drops == {0: 0, 1: 2} and c["Ethernet2"].in_packets is None  # no row: not reported
    assert (c["Ethernet3/3/1"].pfc_rx, c["Ethernet3/3/1"].pfc_tx) == (2, 0)
    assert c["Ethernet3/3/1"].pfc_rx_priority is None and c["Ethernet3/3/1"].watchdog_storms is None
    assert c["Ethernet10/28/1"].ecn_marked == {1: 0, 2: 0}  # queue 0 prints "-": no ECN there, not 0 marks
    ranged = eos_counters.parse(eos_answers("show interfaces counters queue detail", files=RANGED),
                                ["Ethernet1"])["Ethernet1"]
    assert ranged.queue_drops is not None and set(ranged.queue_drops) == {0, 1, 2}  # TC0-2 / DP0-2: each class


@pytest.mark.parametrize(("commands", "feeds", "ports"), [
    (("show interfaces",), {"input-error-rate"}, ["Ethernet1"]),
    (("show priority-flow-control counters",), {"pfc-pause-rate"}, ["Ethernet3/1/1", "Ethernet3/3/1"]),
    (("show interfaces counters queue detail",), {"lossless-drops"}, ["Ethernet1", "Ethernet2"]),
])
def test_no_drift_of_the_eos_samples_passes(commands: tuple[str, ...], feeds: set[str], ports: list[str],
                                            tmp_path: Path) -> None:
    plan = plan_with_roce_priority(1, tmp_path)  # the queue samples count traffic classes 0 and 1
    tried = no_drift_passes(plan, leaf(plan, "eos"), 1, eos_reader(ports), eos_answers(*commands), feeds,
                            frozenset())
    assert tried > 5, tried


def test_no_drift_of_eos_ranged_queue_keys_passes(tmp_path: Path) -> None:
    plan = plan_with_roce_priority(1, tmp_path)
    answers = eos_answers("show interfaces counters queue detail", files=RANGED)
    assert no_drift_passes(plan, leaf(plan, "eos"), 1, eos_reader(["Ethernet1", "Ethernet2"]), answers,
                           {"lossless-drops"}, frozenset()) > 5


def test_eos_lossless_drops_behind_a_range_and_ecn_marks_are_seen(tmp_path: Path) -> None:
    """Drops counted for a range of classes that holds the lossless one fail verify (the range cannot say which
    class dropped, so none is hidden) and doctor names lossless-drops; ECN marks on the lossless queue of
    `show qos interfaces ecn counters queue` are read (a warning above 1 % of the packets sent)."""
    plan = plan_with_roce_priority(1, tmp_path)
    sw = leaf(plan, "eos")
    ranged = load("eos", RANGED["show interfaces counters queue detail"])
    before = [{}, {}, counters_set(ranged, 0), {}]
    after = [{}, {}, counters_set(ranged, 7), {}]
    a, b = eos_counters.parse(before, ["Ethernet1"]), eos_counters.parse(after, ["Ethernet1"])
    rows = port_rows(plan, sw, "Ethernet1", a["Ethernet1"], b["Ethernet1"], 1, 1.0)
    assert {r.check: r.verdict for r in rows}["lossless-drops"] is Verdict.FAIL
    assert ("lossless-drops", "Ethernet1") in {(d.code, d.port) for d in diagnose(plan, rows, "i", "v")}
    ecn = load("eos", "anta-units/show_qos_interfaces_ecn_counters_queue.json")
    names = ("inUcastPkts", "inMulticastPkts", "inBroadcastPkts", "outUcastPkts", "outMulticastPkts",
             "outBroadcastPkts", "totalInErrors")
    general = {"interfaces": {"Ethernet10/20/1": {"interfaceCounters": dict.fromkeys(names, 0)}}}
    busy = counters_set(general, 1000)
    a = eos_counters.parse([general, {}, {}, counters_set(ecn, 0)], ["Ethernet10/20/1"])["Ethernet10/20/1"]
    b = eos_counters.parse([busy, {}, {}, counters_set(ecn, 500)], ["Ethernet10/20/1"])["Ethernet10/20/1"]
    marked = {r.check: r for r in port_rows(plan, sw, "Ethernet10/20/1", a, b, 1, 1.0)}["ecn-marking"]
    assert marked.verdict is Verdict.WARN and "500 of 3,000" in marked.observed, marked


# -- hosts ------------------------------------------------------------------------------------------------------------
# mlnx_qos -i across mlnx-tools' output eras: (trust, PFC enables, the priority of DSCP 26 and 48 under DSCP trust)
MLNX_QOS = {
    "mlnx-tools-4.2/mlnx_qos_i_eth4_trust_dscp.txt": ("dscp", (0, 0, 0, 1, 0, 0, 0, 0), (3, 6)),
    "mlnx-tools-4.6/mlnx_qos_i_ens6.txt": ("pcp", (0,) * 8, None),
    "mlnx-tools-4.6/mlnx_qos_i_ens6_trust_dscp.txt": ("dscp", (0,) * 8, (3, 6)),
    "mlnx-tools-4.6/mlnx_qos_i_ens14f0_pfc_0_0_0_1_0_0_0_0.txt": ("dscp", (0, 0, 0, 1, 0, 0, 0, 0), (3, 6)),
    "mlnx-tools-4.6/mlnx_qos_i_ens14f0_trust_pcp.txt": ("pcp", (0, 0, 0, 1, 0, 0, 0, 0), None),
    "mlnx-tools-5.2/mlnx_qos_i_ens4np0.txt": ("dscp", (0, 0, 0, 0, 0, 1, 0, 0), (3, 6)),
    "mlnx-tools-5.2/mlnx_qos_i_ens2f0_pfc_0_0_0_0_0_1_0_0.txt": ("pcp", (0, 0, 0, 0, 0, 1, 0, 0), None),
    "mlnx-tools-25.07/mlnx_qos_i_mce0.txt": ("dscp", (0, 0, 0, 1, 0, 0, 0, 0), (3, 6)),
    "mlnx-tools-25.07/mlnx_qos_i_ens1f0v0.txt": (None, None, None),  # a VF: DCB "not supported", nothing known
}


@pytest.mark.parametrize("file", sorted(MLNX_QOS))
def test_mlnx_qos_from_the_samples(file: str) -> None:
    trust, pfc, dscp = host_observe.parse_mlnx_qos(load("host", file).splitlines())
    want_trust, want_pfc, want_dscp = MLNX_QOS[file]
    assert (trust, pfc) == (want_trust, want_pfc)
    assert (None if dscp is None else (dscp[26], dscp[48])) == want_dscp
    if dscp is not None:  # every DSCP placed, from rows of at most 8 with trailing commas
        assert len(dscp) == 64 and dscp[0] == 0 and dscp[63] == 7


# `Cable len:` of each sample: the driver's 7 m default, 30 m where the capture set it; a VF prints none
CABLE_LEN = dict.fromkeys(MLNX_QOS, 7) | {"mlnx-tools-5.2/mlnx_qos_i_ens4np0.txt": 30,
                                             "mlnx-tools-25.07/mlnx_qos_i_ens1f0v0.txt": None}


@pytest.mark.parametrize("file", sorted(CABLE_LEN))
def test_nic_cable_length_from_the_samples(file: str) -> None:
    assert host_observe.cable_len(load("host", file).splitlines()) == CABLE_LEN[file]


def test_mlnx_qos_trust_none_is_not_reported() -> None:
    """mlnx_qos prints `none` when it cannot read the trust state: not reported, not a trust mode."""
    text = load("host", "mlnx-tools-25.07/mlnx_qos_i_mce0.txt").replace("Priority trust state: dscp",
                                                                         "Priority trust state: none")
    assert host_observe.parse_mlnx_qos(text.splitlines())[0] is None


@pytest.mark.parametrize(("file", "pause"), [("inbox-6.x/ethtool_a_enp15s0np0.txt", (True, True)),
                                             ("inbox-6.x/ethtool_a_ens1f0np0.txt", (False, False)),
                                             ("release-unknown/ethtool_a_eth03.txt", (True, True))])
def test_ethtool_pause_from_the_samples(file: str, pause: tuple[bool, bool]) -> None:
    assert host_observe.parse_pause(load("host", file).splitlines()) == pause


@pytest.mark.parametrize(("file", "tclass"), [
    ("ofed-4.2/cat_sys_class_infiniband_mlx5_0_tc_1_traffic_class.txt", 106),  # a bare number (4.2-4.3)
    ("ofed-4.2/cat_sys_class_infiniband_mlx5_0_tc_1_traffic_class_unset.txt", None),  # -1: unset, not 1
    ("ofed-5.x/cat_sys_class_infiniband_mlx5_2_tc_1_traffic_class.txt", 106),  # "Global tclass=106"
    ("ofed-5.x/cat_sys_class_infiniband_mlx5_2_tc_1_traffic_class_unset.txt", None),  # empty
    ("ofed-5.x/cat_sys_class_infiniband_mlx5_0_tc_1_traffic_class_global_and_rule.txt", 106),
    ("ofed-5.x/cat_sys_class_infiniband_mlx5_0_tc_1_traffic_class_rules_only.txt", None),  # rules are not global
])
def test_traffic_class_from_the_samples(file: str, tclass: int | None) -> None:
    lines = load("host", file).splitlines()
    assert host_observe.traffic_class(["tclass\t" + "\t".join(lines)]) == tclass


@pytest.mark.parametrize(("file", "tos", "why"), [
    ("mlnx-tools-4.2/cma_roce_tos_d_mlx5_2_t_106.txt", 106, None),
    ("mlnx-tools-25.07/cma_roce_tos_d_mlx5_0_p_1.txt", 0, None),
    ("ofed-5.x/cat_sys_kernel_config_rdma_cm_mlx5_0_ports_1_default_roce_tos.txt", 106, None),
    ("mlnx-tools-25.07/cma_roce_tos_d_mlx5_0_p_1_non_root.txt", None, "needs root"),
    ("mlnx-tools-4.6/cma_roce_tos_d_mlx5_0_p_1_non_root.txt", None, "needs root"),
    ("mlnx-tools-25.07/cma_roce_tos_d_mlx5_0_p_1_no_rdma_cm_configfs.txt", None, "not loaded"),
])
def test_rdma_cm_tos_from_the_samples(file: str, tos: int | None, why: str | None) -> None:
    """What the read script prints after `tos` is the tool's (or configfs's) last line; a refusal is not a value
    and carries the tool's reason, and the check turns it into a warning with the fix."""
    last = load("host", file).strip().splitlines()[-1]
    output = f"@@rocefab rdma mlx5_0\nstate\t4: ACTIVE\ntos\t{last}\n"
    seen = host_observe.parse(output, "gpu001").rdma["mlx5_0"]
    assert seen.cma_tos == tos
    assert (why is None) == ("cma_tos" not in seen.why) and (why is None or why in seen.why["cma_tos"])


# -- BGP, routes: the parts of the readers the counters do not cover -------------------------------------------------
def test_asn_in_asplain_and_asdot() -> None:
    assert [asn(x) for x in ("65001", "4200000001", "65001.1028", "8.1201", 65000)] == \
        [65001, 4200000001, 65001 * 65536 + 1028, 8 * 65536 + 1201, 65000]
    assert [asn(x) for x in ("", None, "65536.1", "1.65536", "4294967296", "AS65001", "-1")] == [None] * 7


def test_eos_bgp_unnumbered_asdot_peers_from_the_capture() -> None:
    """NAPALM issue 1759's capture: unnumbered peers keyed `fe80::...%Et3` with asdot ASNs."""
    sessions = eos_observe.bgp(load("eos", "napalm-units/show_ip_bgp_summary_vrf_all_unnumbered.json"))
    assert sessions and all(s.interface and s.interface.startswith("Ethernet") and s.address is None
                            and s.remote_asn is not None and s.established for s in sessions)
    assert any(s.interface == "Ethernet3" and s.remote_asn == 65001 * 65536 + 1028 for s in sessions)


def test_nxos_bgp_from_the_captures() -> None:
    plain = nxos_observe.bgp(load("nxos", "release-unknown/show_bgp_all_summary_vrf_all_json.json"))
    dotted = nxos_observe.bgp(load("nxos", "release-unknown/show_bgp_all_summary_vrf_all_asdot_json.json"))
    assert plain and all(s.remote_asn is not None for s in plain)
    assert dotted and all(s.remote_asn is not None for s in dotted)
    assert {s.address for s in plain} == {s.address for s in dotted}


def test_eos_route_with_two_equal_cost_vias_from_the_capture() -> None:
    shown = load("eos", "napalm-units/show_ip_route_vrf_default_1_0_4_0_24_bgp_detail.json")
    hops = eos_observe.route(shown, "1.0.4.0/24")
    assert len(hops) == 2 and all(h.address and h.interface and h.interface.startswith("Ethernet") for h in hops)


# -- Cumulus (NVUE JSON: link stats as NVIDIA prints it, the QoS and watchdog views rebuilt from its tables) ---------
CUMULUS_FILES = ("5.14/nv_show_interface_swp1_link_stats_o_json.json",
                 "5.16/nv_show_interface_swp1_counters_qos_o_json.json",
                 "5.16/nv_show_interface_swp1_qos_pfc_watchdog_status_o_json.json")
CUMULUS_ECN = "release-unknown/nv_show_interface_swp37s0_counters_qos_o_json.json"


def cumulus_answers(qos: str = CUMULUS_FILES[1]) -> list[Any]:
    return [load("cumulus", f) for f in (CUMULUS_FILES[0], qos, CUMULUS_FILES[2])]


def cumulus_reader(answers: Sequence[Any]) -> Mapping[str, PortCounters]:
    return {"swp1": cumulus_counters.port(*answers)}


def test_cumulus_counters_from_the_samples() -> None:
    c = cumulus_counters.port(*cumulus_answers())
    assert (c.in_packets, c.in_errors, c.out_packets) == (2321737, 0, 3536629)  # link stats, NVIDIA's example
    assert (c.pfc_rx, c.pfc_tx) == (0, 0) and c.pfc_rx_priority == dict.fromkeys(range(8), 0)  # per switch priority
    assert c.queue_drops == dict.fromkeys(range(8), 0)  # tx-uc-buffer-discards per traffic class
    assert c.ecn_marked is None  # NVIDIA's table counts ECN marks per port only: not the RoCE queue's, not 0
    assert c.watchdog_storms == {0: 0, 1: 3, 2: 2, 3: 0, 4: 0, 5: 0, 6: 0, 7: 3}  # per traffic class
    marked = cumulus_counters.port(*cumulus_answers(CUMULUS_ECN))
    assert marked.ecn_marked == dict.fromkeys(range(8), 0)  # ecn-marked-frames per class, as the SN5600 collector
    assert marked.pfc_rx is None  # that answer has no pfc-stats: not reported


def test_a_refused_cumulus_view_reads_not_reported() -> None:
    """A release without the watchdog view (before 5.6) or `counters qos` (before 5.5): the session passes ""."""
    c = cumulus_counters.parse({"swp1": (json.dumps(load("cumulus", CUMULUS_FILES[0])), "", "")})["swp1"]
    assert c.in_packets == 2321737
    assert (c.pfc_rx, c.queue_drops, c.watchdog_storms, c.ecn_marked) == (None, None, None, None)


@pytest.mark.parametrize("qos", [CUMULUS_FILES[1], CUMULUS_ECN])
def test_no_drift_of_the_cumulus_samples_passes(qos: str, tmp_path: Path) -> None:
    plan = plan_with_roce_priority(3, tmp_path)
    feeds = {"lossless-drops", "pfc-watchdog-events", "input-error-rate"} | \
        ({"pfc-pause-rate"} if qos == CUMULUS_FILES[1] else set())
    tried = no_drift_passes(plan, leaf(plan, "cumulus"), 3, cumulus_reader, cumulus_answers(qos), feeds, frozenset())
    assert tried > 50, tried


def test_a_sick_cumulus_port_in_nvues_shape_fails_and_doctor_names_each_cause(tmp_path: Path) -> None:
    """swp1 pausing on switch priority 3, dropping on traffic class 3 and its watchdog finding that queue
    deadlocked twice in the window: each check fails and doctor names the cause."""
    plan = plan_with_roce_priority(3, tmp_path)
    before = [counters_set(x, 0) for x in cumulus_answers()]
    after = counters_set(before, 0)
    after[0]["in-pkts"] = 10**6
    after[1]["pfc-stats"]["3"]["rx-pause-frames"] = 2_000_000
    after[1]["egress-queue-stats"]["3"]["tx-uc-buffer-discards"] = 5000
    after[1]["egress-queue-stats"]["0"]["tx-uc-buffer-discards"] = 9000  # a lossy class: not judged
    after[2]["3"]["deadlock-count"] = 2
    a, b = cumulus_reader(before)["swp1"], cumulus_reader(after)["swp1"]
    rows = port_rows(plan, leaf(plan, "cumulus"), "swp1", a, b, 3, 1.0)
    judged = {r.check: r for r in rows}
    for check in ("pfc-pause-rate", "lossless-drops", "pfc-watchdog-events"):
        assert judged[check].verdict is Verdict.FAIL, judged[check]
    assert judged["lossless-drops"].observed == "5,000"
    assert judged["ecn-marking"].verdict is Verdict.WARN and "not reported" in judged["ecn-marking"].observed
    found = {(d.code, d.port) for d in diagnose(plan, rows, "pod.yaml", "inventory.yaml")}
    assert {("pause-storm", "swp1"), ("lossless-drops", "swp1"), ("watchdog-firing", "swp1")} <= found, found


# -- NX-OS bootflash: (lock marks, leftover files) ---------------------------------------------------------------------
@pytest.mark.parametrize("release", ["9.3", "7.3"])
def test_nxos_bootflash_listing_from_the_samples(release: str) -> None:
    text = (FIXTURES / "nxos" / release / "dir_bootflash.txt").read_text(encoding="utf-8")
    listed = bootflash.entries(text)
    rows = [line for line in text.split("\n\n")[0].splitlines() if line.strip()]
    assert len(listed) == len(rows), "every row is an entry, the usage lines none"
    assert ("scripts", True) in listed and ("virtual-instance", True) in listed
    assert all(not folder for name, folder in listed if name.endswith((".bin", ".txt", ".log")))
