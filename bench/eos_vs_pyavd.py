"""Benchmark: rocefab's EOS rendering against pyavd's `get_device_config`, per line of EOS configuration.

An all-EOS ToR fabric (EOS spines, EOS leaf pairs of 16 bonded hosts each) is planned once. For every switch the
bench then times, in this process and in CPU time (`time.process_time`, so other load on a shared machine does not
count), rocefab's own EOS file renderer (structured config built and printed: what `rocefab render` runs per
switch), and pyavd's `get_device_config` on an AVD `eos_cli_config_gen` structured config carrying the same content.
Those AVD inputs are mapped here from rocefab's structured config (rocefab/platforms/eos/structured.py) and checked
with pyavd's `validate_structured_config` once, outside the timing, as pyavd's docstring asks for a dict input.
Mapping and validation are pyavd's input preparation, not its rendering, so neither is timed.

Lines are counted the same way in both outputs: configuration lines, that is without blank lines and without
lines that are only a `!` separator or a `!` comment (rocefab writes a four-line header, AVD a RANCID marker).

Needs the bench extra (`pip install -e '.[bench]'`, pyavd). From the top of the checkout:

    python bench/eos_vs_pyavd.py                 # 48 EOS leaves + 4 EOS spines, best/median of 7 runs
    python bench/eos_vs_pyavd.py --pairs 32 --runs 9
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is a folder of scripts, not a package
from bench import lab_intent
from rocefab.platforms import unit
from rocefab.platforms.eos import structured as s
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.render import target_of

EOS_LEAF = "DCS-7060DX5-64S"  # Tomahawk 4, 64 x 400G
EOS_SPINE = "DCS-7060X6-64PE"  # Tomahawk 5, 64 x 800G, broken out to 400G leaf links


def eos_intent(pairs: int) -> dict[str, Any]:
    """bench.py's lab fabric with every switch an Arista: 4 spines and `pairs` MLAG leaf pairs of 16 hosts."""
    intent = lab_intent(4 + 18 * pairs)
    intent["fabric"]["name"] = f"eos{2 * pairs}"
    intent["topology"]["spines"]["model"] = EOS_SPINE
    for pair in intent["topology"]["leaf_pairs"]:
        pair["model"] = EOS_LEAF
    return intent


def config_lines(text: str) -> int:
    """Configuration lines: neither blank nor a `!` separator or comment (the same count for both outputs)."""
    return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("!"))


def content_difference(ours: list[str], theirs: list[str]) -> dict[str, Any]:
    """Configuration lines one output has and the other lacks, per switch, order and indentation aside (the two
    print some sections in a different order); summed over the switches, with the commonest such lines."""
    only_ours: Counter[str] = Counter()
    only_theirs: Counter[str] = Counter()
    for a, b in zip(ours, theirs, strict=True):
        lines_a = Counter(x.strip() for x in a.splitlines() if x.strip() and not x.lstrip().startswith("!"))
        lines_b = Counter(x.strip() for x in b.splitlines() if x.strip() and not x.lstrip().startswith("!"))
        only_ours += lines_a - lines_b
        only_theirs += lines_b - lines_a
    return {"only_rocefab": only_ours.total(), "only_pyavd": only_theirs.total(),
            "commonest_only_rocefab": only_ours.most_common(3), "commonest_only_pyavd": only_theirs.most_common(3)}


# --- rocefab structured config -> AVD eos_cli_config_gen structured config (the bench's own mapping) ---------


def _qos_profile(p: s.QosProfile) -> dict[str, Any]:
    queues = []
    for q in p.queues:
        queue: dict[str, Any] = {"id": q.id, "priority": "priority strict" if q.strict else "no priority"}
        if not q.strict:
            queue["bandwidth_percent"] = q.bandwidth_percent
        if q.ecn:
            queue["random_detect"] = {"ecn": {"threshold": {
                "units": q.ecn.unit, "min": q.ecn.min_threshold, "max": q.ecn.max_threshold,
                "max_probability": q.ecn.max_mark_percent, "weight": 0}}}
        queues.append(queue)
    pfc: dict[str, Any] = {"enabled": True, "priorities": [{"priority": n, "no_drop": True} for n in p.pfc_priorities]}
    if p.pfc_watchdog:
        pfc["watchdog"] = {"enabled": True}
    queue_key = "uc_tx_queues" if p.queue_keyword == "uc-tx-queue" else "tx_queues"
    return {"name": p.name, "trust": "dscp", "priority_flow_control": pfc, queue_key: queues}


def _port_channel(pc: s.PortChannelInterface) -> dict[str, Any]:
    row: dict[str, Any] = {"name": pc.name, "description": pc.description}
    if pc.access_vlan:
        row["switchport"] = {"access_vlan": pc.access_vlan}
    if pc.trunk_group:
        row["switchport"] = {"mode": "trunk", "trunk": {"groups": [pc.trunk_group]}}
    if pc.mlag:
        row["mlag"] = pc.mlag
    if pc.edge:
        row |= {"spanning_tree_portfast": "edge", "spanning_tree_bpduguard": "enabled"}
    return row


def _ethernet(e: s.EthernetInterface) -> dict[str, Any]:
    row: dict[str, Any] = {"name": e.name, "description": e.description}
    optional = {"mtu": e.mtu, "speed": e.speed, "ip_address": e.ipv4, "service_profile": e.service_profile}
    row |= {key: value for key, value in optional.items() if value}
    if e.shutdown:  # AVD prints `no shutdown` for False; rocefab leaves enabled ports at EOS's default
        row["shutdown"] = True
    if e.channel_group:
        row["channel_group"] = {"id": e.channel_group, "mode": "active"}
    if e.routed:
        row["switchport"] = {"enabled": False}
    if e.ipv6_enable:
        row["ipv6_enable"] = True
    return row


def _vlan_interface(v: s.VlanInterface) -> dict[str, Any]:
    row: dict[str, Any] = {"name": f"Vlan{v.vlan}", "description": v.description, "mtu": v.mtu, "ip_address": v.ipv4}
    if v.no_autostate:
        row["no_autostate"] = True
    if v.virtual_ipv4:
        row["ip_virtual_router_addresses"] = [v.virtual_ipv4]
    return row


def _router_bgp(b: s.RouterBgp) -> dict[str, Any]:
    ipv6_next_hop = set(b.ipv6_next_hop_groups)
    af_groups = []
    for group in b.groups:
        row: dict[str, Any] = {"name": group, "activate": True}
        if group in ipv6_next_hop:
            row["next_hop"] = {"address_family_ipv6": {"enabled": True, "originate": True}}
        af_groups.append(row)
    return {
        "as": str(b.asn), "router_id": b.router_id, "bgp": {"default": {"ipv4_unicast": False}},
        "maximum_paths": {"paths": b.max_paths, "ecmp": b.max_paths},
        "peer_groups": [{"name": g, **({"bfd": True} if g in b.bfd_groups else {})} for g in b.groups],
        "neighbors": [{"ip_address": n.address, "peer_group": n.group, "remote_as": str(n.remote_asn),
                       "description": n.description} for n in b.numbered],
        "neighbor_interfaces": [{"name": n.interface, "peer_group": n.group, "remote_as": str(n.remote_asn)}
                                for n in b.unnumbered],
        "address_family_ipv4": {"peer_groups": af_groups, "networks": [{"prefix": p} for p in b.networks]},
    }


def avd_structured_config(c: s.EosConfig) -> dict[str, Any]:
    """The AVD structured config (eos_cli_config_gen schema, pyavd 6.x) that says what `c` says."""
    avd: dict[str, Any] = {
        "hostname": c.hostname,
        "service_routing_protocols_model": "multi-agent",
        "management_api_http": {"enable_vrfs": [{"name": c.management_api.vrf}]} if c.management_api.vrf else {},
        "qos_profiles": [_qos_profile(p) for p in c.qos_profiles],
        "vlans": [{"id": v.id, "name": v.name, **({"trunk_groups": [v.trunk_group]} if v.trunk_group else {})}
                  for v in c.vlans],
        "vrfs": [{"name": vrf, "ip_routing": c.ip_routing.no_routing_vrf != vrf} for vrf in c.vrfs],
        "port_channel_interfaces": [_port_channel(pc) for pc in c.port_channel_interfaces],
        "ethernet_interfaces": [_ethernet(e) for e in c.ethernet_interfaces],
        "loopback_interfaces": [{"name": f"Loopback{i}", "description": "router-id", "ip_address": lo.ipv4}
                                for i, lo in enumerate(c.loopback_interfaces)],
        "management_interfaces": [{"name": m.name, "vrf": m.vrf, "ip_address": m.ipv4}
                                  for m in c.management_interfaces],
        "vlan_interfaces": [_vlan_interface(v) for v in c.vlan_interfaces],
        "ip_routing": not c.ip_routing.ipv6_interfaces,
        "ip_routing_ipv6_interfaces": c.ip_routing.ipv6_interfaces,
        "ipv6_unicast_routing": c.ip_routing.ipv6_interfaces,
        "static_routes": [{"vrf": r.vrf, "prefix": r.prefix, "next_hop": r.next_hop} for r in c.static_routes],
        "qos": {"map": {"dscp": [f"{m.dscps} to traffic-class {m.traffic_class}" for m in c.qos.dscp_maps]}},
        "router_bgp": _router_bgp(c.router_bgp),
    }
    if c.management_api_gnmi:
        grpc = {"name": c.management_api_gnmi.transport}
        if c.management_api_gnmi.vrf:
            grpc["vrf"] = c.management_api_gnmi.vrf
        avd["management_api_gnmi"] = {"transport": {"grpc": [grpc]}}
    if c.spanning_tree:
        avd["spanning_tree"] = {"mode": "mstp", "no_spanning_tree_vlan": str(c.spanning_tree.disabled_vlans)}
    if c.ip_virtual_router_mac:
        avd["ip_virtual_router_mac_address"] = c.ip_virtual_router_mac
    if m := c.mlag_configuration:
        avd["mlag_configuration"] = {
            "domain_id": m.domain_id, "local_interface": f"Vlan{m.peer_vlan}", "peer_address": m.peer_address,
            "peer_link": m.peer_link, "reload_delay_mlag": str(m.reload_delay_mlag_s),
            "reload_delay_non_mlag": str(m.reload_delay_non_mlag_s),
            **({"peer_address_heartbeat": {"peer_ip": m.heartbeat, "vrf": m.heartbeat_vrf}} if m.heartbeat else {})}
    if w := c.qos.watchdog:
        avd["priority_flow_control"] = {"watchdog": {"action": "drop", "timeout": w.timeout_s,
                                                     "recovery_time": w.recovery_s, "polling_interval": w.polling_s}}
    if c.router_bfd:
        avd["router_bfd"] = {"interval": c.router_bfd.interval_ms, "min_rx": c.router_bfd.min_rx_ms,
                             "multiplier": c.router_bfd.multiplier}
    return avd


# --- timing ------------------------------------------------------------------------------------------------------


def cpu_seconds(job: Callable[[], object], runs: int) -> list[float]:
    """CPU seconds of this process for each of `runs` calls of `job`."""
    samples = []
    for _ in range(runs):
        start = time.process_time()
        job()
        samples.append(time.process_time() - start)
    return samples


def eos_plan(pairs: int, folder: Path) -> FabricPlan:
    path = folder / "eos.yaml"
    path.write_text(yaml.safe_dump(eos_intent(pairs), sort_keys=False))
    checked = check_file(path, "bench")
    if checked.plan is None:
        raise SystemExit("the bench intent does not plan: " + "; ".join(map(str, checked.findings)))
    return checked.plan


def compare(pairs: int, runs: int) -> dict[str, Any]:
    """Plan the fabric, prepare both renderers' inputs, then time each over every switch `runs` times."""
    import pyavd  # type: ignore[import-untyped]  # the bench extra, imported here so bench.py runs without it

    with tempfile.TemporaryDirectory(prefix="rocefab-bench-eos-") as tmp:
        plan = eos_plan(pairs, Path(tmp))
    switches: list[tuple[Switch, str]] = [(sw, target_of(sw)) for sw in plan.switches]
    if plan.services is not None or any(sw.platform != "eos" for sw, _ in switches):
        raise SystemExit("the mapping to AVD covers an all-EOS fabric without site services only")
    eos = unit("eos")
    render_switch = eos.files()
    build = eos.structured()

    avd_inputs = []
    for sw, target in switches:
        result = pyavd.validate_structured_config(avd_structured_config(build(plan, sw, target)))
        checked = result.validation_result
        if result.validated_data is None or checked.violations or checked.deprecations:
            raise SystemExit(f"{sw.name}: AVD rejects the mapped config: {checked.violations[:3]}, "
                             f"deprecated: {checked.deprecations[:3]}")
        avd_inputs.append(result.validated_data)

    rocefab_texts = [render_switch(plan, sw, target)[0].content for sw, target in switches]  # warms the templates
    avd_texts = [pyavd.get_device_config(data) for data in avd_inputs]
    ours = cpu_seconds(lambda: [render_switch(plan, sw, target) for sw, target in switches], runs)
    theirs = cpu_seconds(lambda: [pyavd.get_device_config(data) for data in avd_inputs], runs)
    # For scale only: `get_device_config` builds a new Jinja environment per call and so loads its ~200
    # precompiled section templates again for every device. The same render with one environment kept (pyavd's
    # private Templar, as get_device_config builds it in pyavd 6.4) shows how much of the gap is that.
    from pyavd import constants
    from pyavd.templater import Templar  # type: ignore[import-untyped]

    root = constants.EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE
    templar = Templar(precompiled_templates_path=constants.EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH)
    if [templar.render_template_from_file(root, data) for data in avd_inputs] != avd_texts:
        raise SystemExit("pyavd's kept environment renders differently from get_device_config")
    kept = cpu_seconds(lambda: [templar.render_template_from_file(root, data) for data in avd_inputs], runs)

    ours_lines = sum(map(config_lines, rocefab_texts))
    avd_lines = sum(map(config_lines, avd_texts))
    ours_us = 1e6 * min(ours) / ours_lines
    avd_us = 1e6 * min(theirs) / avd_lines
    return {
        "switches": len(switches), "runs": runs, "pyavd": pyavd.__version__, "load": os.getloadavg()[0],
        "rocefab": {"lines": ours_lines, "raw_lines": sum(t.count("\n") for t in rocefab_texts),
                    "best_cpu_s": round(min(ours), 4), "median_cpu_s": round(statistics.median(ours), 4),
                    "us_per_line": round(ours_us, 2)},
        "pyavd_get_device_config": {"lines": avd_lines, "raw_lines": sum(t.count("\n") for t in avd_texts),
                                    "best_cpu_s": round(min(theirs), 4),
                                    "median_cpu_s": round(statistics.median(theirs), 4),
                                    "us_per_line": round(avd_us, 2)},
        "pyavd_kept_environment": {"best_cpu_s": round(min(kept), 4),
                                   "median_cpu_s": round(statistics.median(kept), 4),
                                   "us_per_line": round(1e6 * min(kept) / avd_lines, 2)},
        "content_difference": content_difference(rocefab_texts, avd_texts),
        "ratio_per_line_best": round(avd_us / ours_us, 2),
        "ratio_per_line_median": round((statistics.median(theirs) / avd_lines)
                                       / (statistics.median(ours) / ours_lines), 2),
        "examples": {"rocefab": rocefab_texts[-1], "pyavd": avd_texts[-1]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=24, help="EOS leaf pairs (two leaves each), beside 4 spines")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--dump", type=Path, help="write the last leaf's two configs into this folder")
    args = parser.parse_args()
    row = compare(args.pairs, args.runs)
    examples = row.pop("examples")
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for name, text in examples.items():
            (args.dump / f"{name}.cfg").write_text(text)
    ours, theirs = row["rocefab"], row["pyavd_get_device_config"]
    print(f"{row['switches']} EOS switches, {row['runs']} runs, pyavd {row['pyavd']}, load {row['load']:.1f}\n"
          f"  rocefab   {ours['lines']:>7} lines  best {ours['best_cpu_s']:.3f} s  "
          f"median {ours['median_cpu_s']:.3f} s CPU  {ours['us_per_line']:.2f} us/line\n"
          f"  pyavd     {theirs['lines']:>7} lines  best {theirs['best_cpu_s']:.3f} s  "
          f"median {theirs['median_cpu_s']:.3f} s CPU  {theirs['us_per_line']:.2f} us/line\n"
          f"  pyavd, one Jinja environment kept: {row['pyavd_kept_environment']['us_per_line']:.2f} us/line\n"
          f"  rocefab per line: {row['ratio_per_line_best']}x faster (best), "
          f"{row['ratio_per_line_median']}x (median)", flush=True)
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
