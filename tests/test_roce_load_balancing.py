"""RoCE load balancing as intent (issue 30 item 5), stated as agreements over the rendered configs:

- every catalogue model, asked for each ECMP hash and each dynamic mode, either renders exactly what its platform
  unit says its ASIC can do, or is refused naming the model and the field that asked (never a silent fallback);
- a queue-pair hash on EOS takes the three BTH destination-QP bytes (outer L4 13-15), and nothing else;
- NX-OS DLB runs on exactly the switch's routed fabric ports, with one virtual next-hop MAC on every DLB switch of
  the fabric, whatever MAC the intent gives;
- per-packet spraying is refused unless the NICs place out-of-order packets;
- a change to a section the NOS applies only after a reload is marked in the plan (and, in the lab tests, refused
  by apply without --accept-reload).
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from properties import UDF, dlb_block, fabric_ports

from rocefab.models.catalogue import MODELS
from rocefab.renderers.pipeline import Checked, check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent
HASHES = ("five-tuple", "roce-qp")
DYNAMICS = ("none", "flowlet", "per-packet")


@cache
def _lab() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "intents" / "lab.yaml").read_text(encoding="utf-8")))


def single_model(model: str, nic_model: str | None = None, **load_balancing: Any) -> dict[str, Any]:
    """The lab fabric with every switch one model."""
    intent = copy.deepcopy(_lab())
    intent["topology"]["spines"]["model"] = model
    intent["topology"]["leaf_pairs"][0].update(model=model, hosts=2)
    if MODELS[model].port_capacity(400) == 0:
        intent["hosts"]["bonds"][0]["speed_gbps"] = 100
    intent["underlay"]["load_balancing"] = load_balancing
    if nic_model:
        intent["hosts"]["nic_model"] = nic_model
    return intent


def checked(tmp: Path, intent: dict[str, Any]) -> Checked:
    path = tmp / "intent.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    return check_file(path, "0.0.0-test")


def configs(plan: FabricPlan) -> dict[str, str]:
    return {f.device: f.content for f in render_fabric(plan) if f.path.startswith("switches/")
            and not f.path.endswith(".nv-set.txt")}


def dlb_lines(config: str) -> dict[str, str]:
    return dlb_block(config) or {}


def assert_renders(plan: FabricPlan, ecmp_hash: str, dynamic: str) -> None:
    """What each switch's config says about load balancing is exactly what was asked (the ASIC can do it)."""
    for name, config in configs(plan).items():
        sw = plan.switch(name)
        offsets = [int(o) for o in UDF.findall(config)]
        assert offsets == ([13, 14, 15] if ecmp_hash == "roce-qp" else []), name
        eos_dlb = "ip hardware fib load-balance distribution dynamic" in config
        dlb = dlb_lines(config)
        if dynamic == "none":
            assert not eos_dlb and not dlb, name
            assert sw.load_balancing is not None and sw.load_balancing.reload_sections == ()
        elif sw.platform == "eos":
            assert eos_dlb and not dlb, name
        else:
            assert dlb["mode"] == dynamic and dlb["dlb-interface"].split(" , ") == fabric_ports(sw), name
            assert sw.load_balancing is not None and sw.load_balancing.reload_sections == ("hardware profile dlb",)


def _can(model: str, ecmp_hash: str, dynamic: str) -> tuple[bool, bool]:
    m = MODELS[model]
    support = m.spec.load_balancing_of(m.asic)
    return ((ecmp_hash == "five-tuple" or bool(support and support.roce_qp_hash)),
            (dynamic == "none" or bool(support and dynamic in support.dynamic)))


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("ecmp_hash", HASHES)
@pytest.mark.parametrize("dynamic", DYNAMICS)
def test_each_model_renders_what_its_asic_can_or_is_refused_by_name(tmp_path: Path, model: str, ecmp_hash: str,
                                                                   dynamic: str) -> None:
    # ConnectX-8 places out-of-order packets: per-packet is judged on the switch alone here
    result = checked(tmp_path, single_model(model, "ConnectX-8", ecmp_hash=ecmp_hash, dynamic=dynamic))
    hash_ok, dynamic_ok = _can(model, ecmp_hash, dynamic)
    refused = [f for f in result.findings if f.code == "load-balancing-unsupported"]
    assert {f.path[-1] for f in refused} == ({"ecmp_hash"} if not hash_ok else set()) | (
        {"dynamic"} if not dynamic_ok else set())
    for finding in refused:
        assert model in finding.message and MODELS[model].asic in finding.message
        assert finding.path == ("underlay", "load_balancing", finding.path[-1])
    if hash_ok and dynamic_ok:
        assert result.plan is not None, [str(f) for f in result.findings]
        assert_renders(result.plan, ecmp_hash, dynamic)
    else:
        assert result.plan is None


def test_pod32_spreads_roce_per_platform(tmp_path: Path) -> None:
    """The bundled example: EOS Tomahawk 4 leaves hash the queue pair and run DLB, the NX-OS GX2A spines and leaves
    run flowlet DLB (a reload-class change), the Cumulus pair keeps the five-tuple."""
    result = check_file(ROOT / "intents" / "pod32.yaml", "0.0.0-test")
    assert result.plan is not None
    rendered = configs(result.plan)
    for sw in result.plan.switches:
        lb = sw.load_balancing
        assert lb is not None
        config = rendered[sw.name]
        if sw.platform == "eos":
            assert [int(o) for o in UDF.findall(config)] == [13, 14, 15]
            assert "\nip hardware fib load-balance distribution dynamic\n" in config
        elif sw.platform == "nxos":
            block = dlb_lines(config)
            assert block == {"mode": "flowlet", "dlb-interface": " , ".join(fabric_ports(sw)),
                             "mac-address": "00:cc:cc:cc:cc:cc"}, sw.name
            assert lb.reload_sections == ("hardware profile dlb",)
        else:
            assert lb.dynamic is None and not lb.roce_qp_hash and "hardware" not in config
    summary = next(f.content for f in render_fabric(result.plan) if f.path == "summary.md")
    assert "| spine | nxos | N9K-C9364D-GX2A | 2 | five-tuple, rotate 29 | flowlet DLB on 64 fabric ports | " \
           "hardware profile dlb |" in summary
    assert "| leaf | eos | DCS-7060DX5-64S | 4 | five-tuple + RoCE destination QP | flowlet DLB | no |" in summary


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mac=st.tuples(st.integers(0, 127).map(lambda b: b * 2), *[st.integers(0, 255)] * 5)
       .filter(lambda octets: any(octets)).map(lambda octets: ":".join(f"{o:02X}" for o in octets)))
def test_every_dlb_switch_shares_the_intents_mac(tmp_path: Path, mac: str) -> None:
    intent = single_model("N9K-C9364D-GX2A", dynamic="flowlet", dlb_mac=mac)
    intent["topology"]["leaf_pairs"].append({"name": "leaf2", "model": "N9K-C9332D-GX2B", "hosts": 2})
    result = checked(tmp_path, intent)
    assert result.plan is not None, [str(f) for f in result.findings]
    macs = {name: dlb_lines(config).get("mac-address") for name, config in configs(result.plan).items()}
    assert set(macs.values()) == {mac.lower()} and len(macs) == 5


def test_by_platform_replaces_the_fabric_choice_only_there(tmp_path: Path) -> None:
    """pod32's mix with the fabric asking for DLB everywhere: Cumulus cannot, and is refused by name, unless its own
    entry says none."""
    intent = yaml.safe_load((ROOT / "intents" / "pod32.yaml").read_text(encoding="utf-8"))
    intent["underlay"]["load_balancing"] = {"dynamic": "flowlet"}
    refused = checked(tmp_path, intent)
    (finding,) = [f for f in refused.findings if f.code == "load-balancing-unsupported"]
    assert "SN5600" in finding.message and "adaptive_routing" in finding.message
    assert finding.hint.endswith("set underlay.load_balancing.by_platform.cumulus.dynamic to what it runs, or none")
    intent["underlay"]["load_balancing"]["by_platform"] = {"cumulus": {"dynamic": "none"}}
    result = checked(tmp_path, intent)
    assert result.plan is not None
    assert {sw.platform for sw in result.plan.switches if sw.load_balancing and sw.load_balancing.dynamic} == \
        {"eos", "nxos"}


@pytest.mark.parametrize("nic_model", [None, "ConnectX-7"])
def test_per_packet_dlb_needs_nics_that_reorder(tmp_path: Path, nic_model: str | None) -> None:
    result = checked(tmp_path, single_model("N9K-C9364D-GX2A", nic_model, by_platform={"nxos": {
        "dynamic": "per-packet"}}))
    assert result.plan is None
    (finding,) = [f for f in result.findings if f.code == "per-packet-needs-reordering-nics"]
    assert finding.path == ("underlay", "load_balancing", "by_platform", "nxos", "dynamic")
    assert "N9K-C9364D-GX2A" in finding.message and "use flowlet" in finding.hint
    ok = checked(tmp_path, single_model("N9K-C9364D-GX2A", "BlueField-3 SuperNIC", dynamic="per-packet"))
    assert ok.plan is not None


def test_eos_flow_set_size_is_rendered_on_a_line_of_its_own(tmp_path: Path) -> None:
    result = checked(tmp_path, single_model("DCS-7060X6-64PE", dynamic="flowlet", dlb_flow_set_size=5))
    assert result.plan is not None
    for config in configs(result.plan).values():
        assert "\nip hardware fib load-balance distribution dynamic\n" \
               "ip hardware fib load-balance distribution dynamic flow-set-size 5\n" in config


@pytest.mark.parametrize(("field", "value", "said"), [
    ("dlb_mac", "01:00:5e:00:00:01", "multicast"),
    ("dlb_mac", "00:00:00:00:00:00", "not an address"),
    ("dlb_mac", "00cc.cccc.cccc", "six colon-separated hex octets"),
    ("dlb_flow_set_size", 8, "less than or equal to 7"),
    ("dynamic", "off", "'none', 'flowlet' or 'per-packet'"),
    ("ecmp_hash", "qpn", "'five-tuple' or 'roce-qp'"),
])
def test_bad_values_are_refused_at_their_line(tmp_path: Path, field: str, value: object, said: str) -> None:
    from rocefab.models.loader import IntentLoadError, load_intent

    intent = single_model("DCS-7060X6-64PE", **{field: value})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    with pytest.raises(IntentLoadError) as caught:
        load_intent(path)
    (error,) = caught.value.errors
    text = str(error)
    line = next(i for i, row in enumerate(path.read_text().splitlines(), 1) if row.strip().startswith(f"{field}:"))
    assert text.startswith(f"{path}:{line}:") and f"underlay.load_balancing.{field}" in text and said in text, text


def test_the_prefer_global_map_goes_only_where_sessions_share_a_router(tmp_path: Path) -> None:
    """Cumulus 5.14 asks for it with adaptive routing and several peerings to one router: an SN5400 fabric with two
    uplinks per spine has two unnumbered sessions per neighbour, all mapped; the 3-tier example's super-spines peer
    with NX-OS spines over numbered /31s, one per link, so nothing is mapped; without adaptive routing neither is."""
    from rocefab.platforms.cumulus.config import PREFER_GLOBAL_MAP, nvue_document, parallel_peers

    ar = checked(tmp_path, single_model("SN5400", "ConnectX-8", adaptive_routing=True))
    assert ar.plan is not None
    for sw in ar.plan.switches:
        doc = nvue_document(ar.plan, sw)
        neighbors = doc["vrf"]["default"]["router"]["bgp"]["neighbor"]
        mapped = {k for k, n in neighbors.items() if "address-family" in n}
        # two uplinks per spine: a leaf's two sessions to spine1, the spine's two to each leaf; the MLAG peer session
        # is one session to its router, not mapped
        other_tier = "spine" if sw.role.value == "leaf" else "leaf"
        fabric = {n.interface for n in sw.bgp.neighbors if n.peer_device.startswith(other_tier)}
        assert mapped == fabric == set(parallel_peers(sw)), sw.name
        assert len(fabric) == (2 if sw.role.value == "leaf" else 4), sw.name
        assert PREFER_GLOBAL_MAP in doc["router"]["policy"]["route-map"]
    plain = checked(tmp_path, single_model("SN5400"))
    assert plain.plan is not None and not any(parallel_peers(sw) for sw in plain.plan.switches)
    intent = yaml.safe_load((ROOT / "intents" / "tor128-3tier.yaml").read_text(encoding="utf-8"))
    intent["underlay"]["load_balancing"] = {"adaptive_routing": True}
    intent["hosts"]["nic_model"] = "ConnectX-8"
    three = checked(tmp_path, intent)
    assert three.plan is not None
    supers = [sw for sw in three.plan.switches if sw.load_balancing and sw.load_balancing.adaptive_routing]
    assert supers and not any(parallel_peers(sw) for sw in supers)
    assert all("policy" not in nvue_document(three.plan, sw)["router"] for sw in supers)


def test_what_no_source_confirms_is_said_where_it_is_asked() -> None:
    """pod32 asks EOS for the queue-pair hash and DLB and NX-OS for DLB: each is rendered as the vendor sources show
    it, and validate warns once per feature and platform, at the field that asked, naming the models; a fabric that
    asks for nothing beyond the five-tuple hears nothing."""
    result = check_file(ROOT / "intents" / "pod32.yaml", "0.0.0-test")
    said = {f.path: f.message for f in result.findings if f.code == "load-balancing-unconfirmed"}
    lb = ("underlay", "load_balancing", "by_platform")
    assert set(said) == {(*lb, "eos", "ecmp_hash"), (*lb, "eos", "dynamic"), (*lb, "nxos", "dynamic")}
    assert said[(*lb, "eos", "ecmp_hash")].startswith("DCS-7060DX5-64S: ") and "ECMP hash" in said[(*lb, "eos",
                                                                                                      "ecmp_hash")]
    assert said[(*lb, "nxos", "dynamic")].startswith("N9K-C9364D-GX2A: ")
    plain = check_file(ROOT / "intents" / "lab.yaml", "0.0.0-test")
    assert not [f for f in plain.findings if f.code == "load-balancing-unconfirmed"]


def test_by_platform_takes_only_the_switch_platforms_rocefab_has(tmp_path: Path) -> None:
    from rocefab.models.loader import IntentLoadError, load_intent
    from rocefab.platforms import switch_specs

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(single_model("SN5600", by_platform={"sonic": {"dynamic": "flowlet"}}),
                                   sort_keys=False), encoding="utf-8")
    with pytest.raises(IntentLoadError) as caught:
        load_intent(path)
    (error,) = caught.value.errors
    known = ", ".join(sorted(switch_specs()))
    assert str(error).startswith(f"{path}:") and "underlay.load_balancing.by_platform" in str(error)
    assert f"'sonic' is not a switch platform; known: {known}" in str(error)
