"""The text of a new intent for `rocefab init`: a sized fabric (rocefab derives the switch counts) with address
pools and ASN ranges large enough for any size `init` accepts, so the file plans on the first try.

Pure: options in, YAML text out. The text is written by hand rather than dumped, so it can carry the comments a
first-time reader needs; every value in it is a number, a catalogue model name or a checked device name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Design = Literal["tor", "rail"]
DESIGNS: dict[str, str] = {"tor": "tor-dual-homed", "rail": "rail-optimized"}
SPEEDS_GBPS = (10, 25, 40, 50, 100, 200, 400, 800)  # models.types.SpeedGbps

# The largest fabric the pools below are sized for. Worst case per server: 8 dual-port NICs, so 16 leaf ports
# (ToR) or 8 (rail); 8,192 servers then give at most 131,072 host ports and about as many links per tier above.
MAX_NODES = 8192
MAX_NICS = 8
DEFAULT_NICS: dict[str, int] = {"tor": 2, "rail": 8}

# Private 4-byte ASNs (RFC 6996), so any number of leaves fits: one ASN per leaf counting up from LEAF_FIRST,
# spines of pod p at SPINE + p (three tiers), one ASN for the super-spines.
SUPERSPINE_ASN, SPINE_ASN, LEAF_FIRST_ASN = 4_200_000_000, 4_200_001_000, 4_200_010_000


@dataclass(frozen=True, slots=True)
class StarterOptions:
    name: str
    design: Design
    nodes: int
    nics: int
    speed_gbps: int
    leaf_model: str
    spine_model: str


def _host_section(options: StarterOptions) -> list[str]:
    if options.design == "rail":
        lines = [
            "hosts:",
            "  # One single-port NIC per rail, in rail order: NIC i of every server cables to a leaf of rail i.",
            "  # Replace the names with your servers' (`ip -br link`, `rdma link show`).",
            "  nics:",
        ]
        lines += [f"    - {{netdev: ens{i + 1}np0, rdma_device: mlx5_{i}}}" for i in range(options.nics)]
    else:
        lines = [
            "hosts:",
            "  # One bond per dual-port NIC, LACP across the server's leaf pair (member 0 to leaf a, 1 to leaf b).",
            "  # Replace the names with your servers' (`ip -br link`, `rdma link show`).",
            "  bonds:",
        ]
        lines += [
            f"    - {{name: bond{i}, members: [ens{i + 1}f0np0, ens{i + 1}f1np1], rdma_device: mlx5_bond_{i}, "
            f"speed_gbps: {options.speed_gbps}, vlan: {101 + i}}}"
            for i in range(options.nics)
        ]
    return [*lines, "  nccl:", "    socket_ifname: eno1     # the servers' out-of-band interface (NCCL bootstrap)"]


def _vlans(options: StarterOptions) -> list[str]:
    """ToR designs: one training VLAN per bond, each a /12 cut into a /24 per leaf pair (4,096 pairs)."""
    if options.design == "rail":
        return []
    lines = ["vlans:             # one training VLAN per bond; each leaf pair routes a /24 of it"]
    lines += [f"  - {{id: {101 + i}, name: train{i}, subnet: 10.{128 + 16 * i}.0.0/12, pair_prefix_length: 24}}"
              for i in range(options.nics)]
    return [*lines, ""]


def starter_intent(options: StarterOptions, schema_ref: str) -> str:
    """The intent `rocefab init` writes; `schema_ref` is the path the yaml-language-server line points at."""
    design = DESIGNS[options.design]
    what = ("dual-homed: each server bonds its dual-port NICs across a ToR leaf pair" if options.design == "tor"
            else "rail-optimized: NIC i of every server cables to a leaf of rail i")
    pools = ["  peer_link_subnet: 10.1.0.0/16    # a /31 per leaf pair for the MLAG/vPC peer link"]
    if options.design == "rail":
        pools = ["  host_subnet: 10.128.0.0/9       # a /31 per server NIC and its leaf port, one slice per rail"]
    servers = f"{options.nodes} GPU server{'s' if options.nodes != 1 else ''}"
    lines = [
        f"# yaml-language-server: $schema={schema_ref}",
        f"# {servers} x {options.nics} x {options.speed_gbps}G NICs, {what}.",
        "# Written by `rocefab init`; rocefab sizes leaves, spines and (when one spine layer cannot reach every",
        "# leaf) super-spines from these counts. `rocefab plan` shows the result, `rocefab render` writes configs.",
        "fabric:",
        f"  name: {options.name}",
        f"  description: {servers}, {design}, {options.speed_gbps}G",
        "",
        *_vlans(options),
        "underlay:",
        f"  asn: {{superspine: {SUPERSPINE_ASN}, spine: {SPINE_ASN}, leaf_first: {LEAF_FIRST_ASN}}}"
        "   # private 4-byte ASNs",
        "  loopback_subnet: 10.0.0.0/16     # a /32 per switch",
        "  p2p_subnet: 10.64.0.0/10         # a /31 per switch-to-switch link that is not BGP unnumbered",
        *pools,
        "",
        "management:         # out-of-band addresses of the switches (vPC keepalives, MLAG backup links)",
        "  subnet: 192.168.0.0/16",
        "  gateway: 192.168.0.1",
        "",
        "topology:",
        f"  design: {design}",
        f"  nodes: {options.nodes}",
        f"  nics_per_node: {options.nics}" + ("          # rails" if options.design == "rail" else
                                               "          # dual-port NICs, one bond each"),
        f"  nic_speed_gbps: {options.speed_gbps}",
        f"  models: {{leaf: {options.leaf_model}, spine: {options.spine_model}}}   # `rocefab schema` lists "
        "the catalogue",
        '  oversubscription: "1:1"   # host bandwidth : uplink bandwidth on every leaf and spine',
        "",
        *_host_section(options),
    ]
    return "\n".join(lines) + "\n"
