"""End-to-end agreement of switches and hosts, on the examples and on generated fabrics."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest
from conftest import EXAMPLES, example_files, example_plan, generated_plan
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from properties import check_fabric

from rocefab.models.catalogue import MODELS
from rocefab.renderers.render import render_fabric


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_agree_end_to_end(name: str) -> None:
    check_fabric(example_plan(name), example_files(name))


@st.composite
def fabrics(draw: st.DrawFn) -> dict:
    roce_priority = draw(st.integers(1, 7))
    cnp_priority = draw(st.integers(1, 7).filter(lambda p: p != roce_priority))
    roce_dscp = draw(st.integers(1, 63))
    cnp_dscp = draw(st.integers(1, 63).filter(lambda d: d != roce_dscp))
    names = sorted(MODELS)
    spine = draw(st.sampled_from(names))
    pairs = []
    for i in range(draw(st.integers(1, 3))):
        pairs.append({"name": f"rack{i + 1}", "model": draw(st.sampled_from(names)), "hosts": draw(st.integers(0, 4))})
    leaf_speeds = set.intersection(*(set(MODELS[p["model"]].speeds_gbps()) for p in pairs))
    assume(leaf_speeds)
    speed = draw(st.sampled_from(sorted(leaf_speeds)))
    # Extra classes, unmarked traffic (DSCP 0) among the candidates, on priorities neither RoCE nor CNP use.
    free = [p for p in range(8) if p not in (roce_priority, cnp_priority)]
    dscp_map = draw(st.dictionaries(st.integers(0, 63).filter(lambda d: d not in (roce_dscp, cnp_dscp)),
                                    st.sampled_from(free), max_size=3))
    bond_count = draw(st.integers(1, 2))
    bonds = [
        {"name": f"bond{b}", "members": [f"ens{b + 1}f0np0", f"ens{b + 1}f1np1"], "rdma_device": f"mlx5_bond_{b}",
         "speed_gbps": speed, "vlan": 101 + b}
        for b in range(bond_count)
    ]
    # RoCE load balancing per platform, among what every catalogue model of the platform can do (the refusals of
    # what a model cannot are tests/test_roce_load_balancing.py's); per-packet spraying with reordering NICs.
    by_platform = {"eos": {"ecmp_hash": draw(st.sampled_from(["five-tuple", "roce-qp"])),
                           "dynamic": draw(st.sampled_from(["none", "flowlet"]))},
                   "nxos": {"dynamic": draw(st.sampled_from(["none", "flowlet", "per-packet"]))}}
    adaptive_routing = draw(st.booleans())
    sprays = adaptive_routing or by_platform["nxos"]["dynamic"] == "per-packet"
    nic = draw(st.sampled_from(["ConnectX-8", "BlueField-3 SuperNIC"] if sprays else [None, "ConnectX-7"]))
    return {
        "fabric": {"name": "generated"},
        "qos": {
            "roce": {"dscp": roce_dscp, "priority": roce_priority},
            "cnp": {"dscp": cnp_dscp, "priority": cnp_priority},
            "dscp_map": dscp_map,
            "ets": {"roce_percent": (w := draw(st.integers(1, 99))), "default_percent": 100 - w},
            "pfc": {"watchdog": {"enabled": draw(st.booleans())}},
        },
        "mtu": {"host_bytes": draw(st.sampled_from([1500, 4200, 9000])), "switch_bytes": 9216},
        "vlans": [{"id": 101 + b, "name": f"train{b}", "subnet": str(IPv4Network(f"10.{101 + b}.0.0/16"))}
                  for b in range(bond_count)],
        "underlay": {
            "asn": {"spine": 65000, "leaf_first": 65101},
            "loopback_subnet": "10.0.0.0/24", "p2p_subnet": "10.0.64.0/20", "peer_link_subnet": "10.255.252.0/24",
            "unnumbered": draw(st.sampled_from(["auto", "never"])),
            "load_balancing": {"by_platform": by_platform, "adaptive_routing": adaptive_routing,
                               "dlb_mac": draw(st.sampled_from(["00:cc:cc:cc:cc:cc", "02:00:5E:10:00:01"]))},
        },
        "management": {"subnet": "192.168.100.0/24", "gateway": "192.168.100.1"},
        "topology": {"spines": {"model": spine, "count": draw(st.integers(1, 2))},
                     "leaf": {"uplinks_per_spine": draw(st.integers(1, 2))}, "leaf_pairs": pairs},
        "hosts": {"bonds": bonds, "nccl": {"socket_ifname": "eno1"}, **({"nic_model": nic} if nic else {})},
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(fabrics())
def test_generated_fabrics_agree_end_to_end(tmp_path_factory: pytest.TempPathFactory, intent: dict) -> None:
    plan = generated_plan(tmp_path_factory.mktemp("intent"), intent)
    check_fabric(plan, render_fabric(plan))
