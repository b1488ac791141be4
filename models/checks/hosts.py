"""Hosts: bonds, NIC speeds and NCCL settings."""

from __future__ import annotations

from collections import Counter

from rocefab.models.checks.common import error, warning
from rocefab.models.findings import Finding
from rocefab.models.intent import Intent
from rocefab.models.resolve import Resolution

# Variables rocefab derives from the QoS and bond settings; setting them by hand would let hosts and
# switches disagree again.
DERIVED_NCCL_VARIABLES = {
    "NCCL_IB_HCA", "NCCL_IB_TC", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME",
    "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT",
}
MIN_RECOMMENDED_NIC_GBPS = 200


def _design(intent: Intent, resolution: Resolution) -> list[Finding]:
    """Dual-homed servers bond NIC pairs into VLANs; rail-optimized servers route one NIC per rail."""
    h = intent.hosts
    fabric = resolution.fabric
    size = fabric.size if fabric else None
    found: list[Finding] = []
    if resolution.design == "rail-optimized":
        rails = size.rails if size else len(h.nics)
        if h.bonds:
            found.append(error("bonds-in-rail-design", ("hosts", "bonds"),
                               "rail-optimized servers cable each NIC to its own rail leaf; they have no bonds",
                               "list the NICs under hosts.nics, one per rail"))
        if len(h.nics) != rails:
            found.append(error("nic-count-mismatch", ("hosts", "nics"),
                               f"hosts.nics lists {len(h.nics)} NICs but topology.nics_per_node is {rails}",
                               "name every rail's NIC, in rail order"))
        hosts = len(fabric.hosts) if fabric else 0
        if intent.underlay.host_subnet is None:
            found.append(error("missing-address-pool", ("underlay", "host_subnet"),
                               "rail-optimized servers need underlay.host_subnet for their NICs' /31s"))
        elif rails and intent.underlay.host_subnet.num_addresses < 2 * hosts * rails:
            found.append(error("address-pool-too-small", ("underlay", "host_subnet"),
                               f"{intent.underlay.host_subnet} cannot give {hosts * rails} NICs a /31 each"))
        for i, nic in enumerate(h.nics):
            if [n.netdev for n in h.nics].count(nic.netdev) > 1:
                found.append(error("duplicate-nic", ("hosts", "nics", i, "netdev"), f"{nic.netdev} is listed twice"))
            if [n.rdma_device for n in h.nics].count(nic.rdma_device) > 1:
                found.append(error("duplicate-rdma-device", ("hosts", "nics", i, "rdma_device"),
                                   f"{nic.rdma_device} is listed twice"))
        return found
    if h.nics:
        found.append(error("nics-in-tor-design", ("hosts", "nics"),
                           "dual-homed servers bond dual-port NICs across their leaf pair",
                           "describe them under hosts.bonds"))
    if not h.bonds:
        found.append(error("missing-bonds", ("hosts", "bonds"), "dual-homed servers need at least one bond"))
    if size is not None and h.bonds and len(h.bonds) != size.bonds:
        found.append(error("nic-count-mismatch", ("hosts", "bonds"),
                           f"hosts.bonds lists {len(h.bonds)} bonds but topology.nics_per_node is {size.bonds}"))
    if not intent.vlans:
        found.append(error("missing-vlans", ("vlans",), "dual-homed servers need at least one training VLAN"))
    return found


def check(intent: Intent, resolution: Resolution) -> list[Finding]:
    h = intent.hosts
    found: list[Finding] = _design(intent, resolution)
    vlan_ids = {v.id for v in intent.vlans}

    names = Counter(b.name for b in h.bonds)
    netdevs = Counter(m for b in h.bonds for m in b.members)
    rdma = Counter(b.rdma_device for b in h.bonds)
    reported: set[str] = set()
    for i, bond in enumerate(h.bonds):
        path = ("hosts", "bonds", i)
        if names[bond.name] > 1:
            found.append(error("duplicate-bond", (*path, "name"), f"bond name '{bond.name}' is used twice"))
        if bond.name in netdevs:
            found.append(error("duplicate-bond", (*path, "name"),
                               f"bond name '{bond.name}' is also a member interface"))
        for member in bond.members:
            if netdevs[member] > 1 and member not in reported:
                reported.add(member)
                found.append(error(
                    "duplicate-bond-member", (*path, "members"),
                    f"interface '{member}' is a member of more than one bond",
                ))
        if rdma[bond.rdma_device] > 1:
            found.append(error(
                "duplicate-rdma-device", (*path, "rdma_device"),
                f"RDMA device '{bond.rdma_device}' is given to more than one bond",
            ))
        if bond.vlan not in vlan_ids:
            found.append(error(
                "unknown-vlan", (*path, "vlan"), f"bond {bond.name} uses VLAN {bond.vlan}, which vlans does not define",
                "defined: " + (", ".join(str(v) for v in sorted(vlan_ids)) or "none"),
            ))
        if bond.speed_gbps < MIN_RECOMMENDED_NIC_GBPS:
            found.append(warning(
                "nic-speed-low", (*path, "speed_gbps"),
                f"{bond.speed_gbps}G NIC ports are below the {MIN_RECOMMENDED_NIC_GBPS}G recommended per 8-GPU node",
                "all-reduce across nodes will be network-bound",
            ))

    for key in sorted(h.nccl.extra_env):
        if key in DERIVED_NCCL_VARIABLES:
            found.append(error(
                "nccl-env-conflict", ("hosts", "nccl", "extra_env", key),
                f"{key} is derived by rocefab from the intent and cannot be set in extra_env",
                "set it through qos / hosts.bonds / hosts.nccl instead",
            ))
    named = set(h.nccl.socket_ifname.lstrip("=").split(","))
    if not h.nccl.socket_ifname.startswith("^") and named & set(netdevs):
        found.append(warning(
            "nccl-socket-on-rdma-port", ("hosts", "nccl", "socket_ifname"),
            f"NCCL_SOCKET_IFNAME '{h.nccl.socket_ifname}' is a bond member; bond members carry no address",
            "use the management/front-end interface or the bond itself",
        ))
    return found
