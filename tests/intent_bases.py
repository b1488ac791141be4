"""Two small valid intents that between them give every field of the schema a place: an explicit one
(intents/lab.yaml with every optional list and section filled in) and a sized rail-optimized one. Tests that
try a value in every field (found by tests/schema_walk.py) start from these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from conftest import INTENTS
from schema_walk import ENTRY, Leaf, can_set

from rocefab.models.intent import EXPLICIT_TAG, SIZED_TAG
from rocefab.renderers.pipeline import check_file


def _explicit_base() -> dict[str, Any]:
    """intents/lab.yaml with every optional list and section present, so each string field has a place."""
    doc = yaml.safe_load((INTENTS / "lab.yaml").read_text(encoding="utf-8"))
    doc["topology"]["spines"]["names"] = ["spine1"]
    doc["topology"]["leaf_pairs"][0] = {"name": "leaf1", "model": "DCS-7060X6-64PE",
                                        "host_names": ["gpu001"], "leaves": ["leaf1-a", "leaf1-b"]}
    ports = {"host_cages_from": 1, "uplink_cages": [61, 62], "peer_link_cages": [63, 64]}
    doc["topology"]["leaf"]["ports"] = ports
    doc["topology"]["leaf_pairs"][0]["ports"] = dict(ports)
    doc["qos"] = {"pfc": {"priorities": [3]}, "dscp_map": {10: 1}}
    doc["hosts"]["nccl"]["extra_env"] = {"NCCL_DEBUG": "WARN"}
    doc["management"] = {"subnet": "192.168.0.0/24", "gateway": "192.168.0.1"}
    doc["cabling"] = {"measured": [{"device": "spine1", "port": "swp1", "length_m": 20}]}
    roles = ("leaf", "spine", "superspine")
    doc["services"] = {
        "ntp": {"servers": ["192.0.2.1"]}, "syslog": {"servers": ["192.0.2.2"]},
        "dns": {"servers": ["192.0.2.3"], "domain": "example.net", "search": ["example.net"]},
        "snmp": {"location": "row 1", "contact": "noc"},
        "aaa": {"tacacs_servers": ["192.0.2.4"], "radius_servers": ["192.0.2.5"]},
        "banner": ["Authorised use only."],
        "raw": {"eos": {r: ["clock timezone UTC"] for r in roles},
                "nxos": {r: ["clock timezone UTC 0 0"] for r in roles},
                "cumulus": {r: ['nv set system message post-login "hi"'] for r in roles}},
    }
    return doc


def _sized_base() -> dict[str, Any]:
    return {
        "fabric": {"name": "rail", "description": "two-node rail fabric"},
        "underlay": {"asn": {"spine": 65000, "leaf_first": 65100, "superspine": 64900},
                     "loopback_subnet": "10.0.0.0/24", "p2p_subnet": "10.1.0.0/22", "host_subnet": "10.2.0.0/22"},
        "topology": {"design": "rail-optimized", "nodes": 2, "nics_per_node": 2, "nic_speed_gbps": 400,
                     "models": {"leaf": "SN5600", "spine": "SN5600", "superspine": "SN5600"},
                     "names": {"leaf": "leaf{n}", "spine": "spine{n}", "superspine": "super{n}", "pair": "pair{n}"}},
        "hosts": {"nics": [{"netdev": "enp1s0np0", "rdma_device": "mlx5_0"},
                           {"netdev": "enp2s0np0", "rdma_device": "mlx5_1"}],
                  "nccl": {"socket_ifname": "eno1", "extra_env": {"NCCL_DEBUG": "WARN"}}},
    }


BASES: dict[str, dict[str, Any]] = {EXPLICIT_TAG: _explicit_base(), SIZED_TAG: _sized_base()}


def shape_for(leaf: Leaf) -> str:
    for shape, doc in BASES.items():
        if leaf.shape in (None, shape) and can_set(doc, leaf.path):
            return shape
    raise AssertionError(f"no base intent has a place for {leaf.path}; extend _explicit_base or _sized_base")


def check_bases_plan(tmp_path: Path) -> None:
    """Both bases are valid on their own, so a refusal of a changed one is the change's doing."""
    for name, doc in BASES.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        checked = check_file(path, "test")
        assert checked.plan is not None, [str(f) for f in checked.findings]


# A real key for each free-form mapping of the schema, for paths that go through one of its entries.
ENTRY_KEYS: dict[str, str | int] = {"extra_env": "NCCL_DEBUG", "dscp_map": 10, "by_platform": "eos"}


def concrete_path(leaf: Leaf) -> tuple[str | int, ...]:
    path = leaf.path
    return tuple(ENTRY_KEYS[str(path[i - 1])] if part == ENTRY else part for i, part in enumerate(path))
