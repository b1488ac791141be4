"""BFD, edge-port protection and ECMP load balancing, stated as agreements over the rendered configs of all
three platforms (pod32: NX-OS spines and EOS, Cumulus and NX-OS leaf pairs): every BGP session runs BFD with the
intent's timers at both ends (a platform's own default counts where rocefab writes none), every host port is an
edge port with BPDU guard, every switch hashes ECMP on the five-tuple, and NX-OS tiers rotate differently."""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rocefab.platforms import unit
from rocefab.platforms.cumulus.config import nvue_document
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, LinkKind, Switch
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent


@cache
def example(name: str) -> str:
    return (ROOT / "intents" / f"{name}.yaml").read_text(encoding="utf-8")


def plan_for(tmp: Path, name: str, nic_model: str | None = None,
             **underlay: Any) -> tuple[FabricPlan, dict[str, str], list[str]]:
    intent = copy.deepcopy(yaml.safe_load(example(name)))
    intent["underlay"].update(underlay)
    if nic_model is not None:
        intent["hosts"]["nic_model"] = nic_model
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    configs = {f.path.split("/")[1].split(".")[0]: f.content for f in render_fabric(checked.plan)
               if f.path.startswith("switches/") and not f.path.endswith(".nv-set.txt")}
    return checked.plan, configs, [f.code for f in checked.findings]


Timers = tuple[int, int, int]


def bfd_of(plan: FabricPlan, sw: Switch, config: str) -> tuple[set[str], Timers] | None:
    """(BGP peers with BFD on, the timers the switch runs) as read from its rendered config."""
    default = unit(sw.platform).spec.bfd_default_timers  # type: ignore[union-attr]
    if sw.platform == "cumulus":
        neighbors = nvue_document(plan, sw)["vrf"]["default"]["router"]["bgp"]["neighbor"]
        with_bfd = {k: n["bfd"] for k, n in neighbors.items() if "bfd" in n and n["bfd"]["enable"] == "on"}
        if not with_bfd:
            return None
        timers = {(b["min-tx-interval"], b["min-rx-interval"], b["detect-multiplier"]) for b in with_bfd.values()}
        assert len(timers) == 1
        return set(with_bfd), timers.pop()
    if sw.platform == "eos":
        groups = set(re.findall(r"^   neighbor (\S+) bfd$", config, re.M))
        if not groups:
            return None
        numbered = {a for a, g in re.findall(r"^   neighbor (\S+) peer group (\S+)$", config, re.M) if g in groups}
        numbered |= {i for i, g in re.findall(r"^   neighbor interface (\S+) peer-group (\S+)", config, re.M)
                     if g in groups}
        found = re.search(r"^router bfd\n   interval (\d+) min-rx (\d+) multiplier (\d+) default$", config, re.M)
        return numbered, tuple(map(int, found.groups())) if found else default  # type: ignore[return-value]
    assert sw.platform == "nxos"
    if "\nfeature bfd\n" not in config:
        return None
    peers = set(re.findall(r"^  neighbor (\S+)\n    remote-as \d+\n    description [^\n]*\n    bfd$", config, re.M))
    routed = re.findall(r"^interface (Ethernet\S+)\n((?:  [^\n]*\n)*?)  ip address", config, re.M)
    timers = set()
    for _name, body in routed:
        assert "  no ip redirects\n" in body  # Cisco's BFD prerequisite
        found = re.search(r"  bfd interval (\d+) min_rx (\d+) multiplier (\d+)\n", body)
        timers.add(tuple(map(int, found.groups())) if found else default)
    assert len(timers) <= 1
    return peers, timers.pop() if timers else default


@settings(max_examples=6, deadline=None)
@given(st.integers(50, 999), st.integers(50, 999), st.integers(3, 50))
def test_every_bgp_session_runs_bfd_with_the_intents_timers_at_both_ends(tmp_path_factory: Any, interval: int,
                                                                         min_rx: int, multiplier: int) -> None:
    tmp = tmp_path_factory.mktemp("bfd")
    plan, configs, _ = plan_for(tmp, "pod32", bfd={"interval_ms": interval, "min_rx_ms": min_rx,
                                                   "multiplier": multiplier})
    for sw in plan.switches:
        state = bfd_of(plan, sw, configs[sw.name])
        assert state is not None, sw.name
        peers, timers = state
        assert timers == (interval, min_rx, multiplier), sw.name
        want = {n.address or n.interface for n in sw.bgp.neighbors}
        assert peers == want, sw.name


def test_bfd_off_leaves_no_trace(tmp_path: Path) -> None:
    plan, configs, _ = plan_for(tmp_path, "pod32", bfd={"enabled": False})
    for sw in plan.switches:
        assert bfd_of(plan, sw, configs[sw.name]) is None
        assert "bfd" not in configs[sw.name]


def test_default_timers_are_not_written_where_the_platform_has_them(tmp_path: Path) -> None:
    """300/300/3 is EOS's default (no `router bfd` block) but not NX-OS's 50/50/3 (interfaces carry it)."""
    _, configs, _ = plan_for(tmp_path, "pod32")
    assert "router bfd" not in configs["rack1-a"]
    assert "  bfd interval 300 min_rx 300 multiplier 3\n" in configs["spine1"]


def test_host_ports_are_edge_ports_with_bpdu_guard(tmp_path: Path) -> None:
    plan, configs, _ = plan_for(tmp_path, "pod32")
    for sw in plan.switches:
        host_lags = [lag for lag in sw.lags if lag.host]
        if not host_lags:
            continue
        if sw.platform == "cumulus":
            interfaces = nvue_document(plan, sw)["interface"]
            for lag in host_lags:
                assert interfaces[lag.name]["bridge"]["domain"]["br_default"]["stp"] == {
                    "admin-edge": "on", "bpdu-guard": "on"}
            continue
        edge = "   spanning-tree portfast\n   spanning-tree bpduguard enable\n" if sw.platform == "eos" else \
            "  spanning-tree port type edge\n  spanning-tree bpduguard enable\n"
        for lag in host_lags:
            block = configs[sw.name].split(f"\ninterface {lag.name}\n", 1)[1].split("\ninterface ", 1)[0]
            assert edge in block, (sw.name, lag.name)
        peer = next(lag for lag in sw.lags if not lag.host)
        assert "bpduguard" not in configs[sw.name].split(f"\ninterface {peer.name}\n", 1)[1].split("\ninterface ")[0]


def test_every_switch_hashes_ecmp_on_the_five_tuple(tmp_path: Path) -> None:
    plan, configs, _ = plan_for(tmp_path, "tor128-3tier")
    rotations: dict[str, set[int]] = {}
    for sw in plan.switches:
        config = configs[sw.name]
        if sw.platform == "nxos":
            found = re.search(r"^ip load-sharing address source-destination port source-destination rotate (\d+)$",
                              config, re.M)
            assert found, sw.name
            rotations.setdefault(sw.role.value, set()).add(int(found.group(1)))
        elif sw.platform == "cumulus":
            assert nvue_document(plan, sw)["system"]["forwarding"]["ecmp-hash"] == {
                "destination-ip": "on", "destination-port": "on", "ip-protocol": "on", "source-ip": "on",
                "source-port": "on"}
        else:  # EOS hashes the five-tuple by default and hides it from the running config: nothing to write
            assert "load-sharing" not in config
    assert all(len(r) == 1 for r in rotations.values()) and len(set.union(*rotations.values())) == len(rotations)
    assert 32 not in set.union(*rotations.values())  # NX-OS's default would hide the line


def test_adaptive_routing_only_where_spectrum_4_runs_it(tmp_path: Path) -> None:
    plan, _, codes = plan_for(tmp_path, "tor128-3tier", "ConnectX-8", load_balancing={"adaptive_routing": True})
    supers = [sw for sw in plan.switches if sw.platform == "cumulus"]
    assert supers and all(sw.model == "SN5600" for sw in supers)
    for sw in supers:
        doc = nvue_document(plan, sw)
        assert doc["router"]["adaptive-routing"] == {"enable": "on"}
        ports = {name for name, entry in doc["interface"].items() if "router" in entry}
        fabric = {link.b.port for link in plan.links if link.kind is LinkKind.FABRIC and link.b.device == sw.name}
        assert ports == fabric  # every 400G downlink of the ECMP group, nothing else
    assert "adaptive-routing-unsupported" in codes  # the NX-OS spines and EOS leaves cannot
    _, _, plain = plan_for(tmp_path, "tor128-3tier")
    assert "adaptive-routing-unsupported" not in plain
    assert all("adaptive-routing" not in c for c in plan_for(tmp_path, "tor128-3tier")[1].values())


def test_one_ecmp_set_mixing_adaptive_and_hashed_ports_is_named(tmp_path: Path) -> None:
    """NVIDIA's guide: adaptive-routing and other egress ports in one ECMP set hash unexpectedly. The generated
    fabric has one speed per set; a super-spine with one 800G downlink in a set (Spectrum-4 runs adaptive routing
    at 200G/400G only) is named, the set and the odd speed said."""
    from dataclasses import replace

    from rocefab.renderers.plan_checks import check_plan

    plan, _, codes = plan_for(tmp_path, "tor128-3tier", "BlueField-3 SuperNIC",
                              load_balancing={"adaptive_routing": True})
    assert "adaptive-routing-mixed-ecmp" not in codes
    sw = next(s for s in plan.switches if s.platform == "cumulus" and s.load_balancing and
              s.load_balancing.adaptive_routing)
    first = next(p for p in sw.ports if p.role.value == "downlink")
    ports = tuple(replace(p, speed_gbps=800) if p is first else p for p in sw.ports)
    odd = replace(plan, switches=tuple(replace(s, ports=ports) if s is sw else s for s in plan.switches))
    (finding,) = [f for f in check_plan(odd) if f.code == "adaptive-routing-mixed-ecmp"]
    assert f"{sw.name} downlinks to {first.peer.device}" in finding.message and "800G without it" in finding.message


@pytest.mark.parametrize("nic_model", [None, "ConnectX-6 Dx", "ConnectX-7"])
def test_adaptive_routing_is_refused_with_nics_that_cannot_reorder(tmp_path: Path, nic_model: str | None) -> None:
    intent = copy.deepcopy(yaml.safe_load(example("tor128-3tier")))
    intent["underlay"]["load_balancing"] = {"adaptive_routing": True}
    if nic_model:
        intent["hosts"]["nic_model"] = nic_model
    path = tmp_path / "ar.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is None
    (finding,) = [f for f in checked.findings if f.code == "adaptive-routing-needs-reordering-nics"]
    assert finding.path == ("underlay", "load_balancing", "adaptive_routing")
    assert (nic_model or "is not set") in finding.message and "ConnectX-8, BlueField-3 SuperNIC" in finding.hint
