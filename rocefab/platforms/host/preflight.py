"""GPU host preflight: plan -> what the read-only `hosts/<host>.preflight.sh` compares the machine with.

The script looks below what the NIC/bond script sets: the IOMMU mode, ACS on the PCIe switch ports between GPUs and
NICs, each NIC's PCIe link against its capability, the GPUs' BAR1, the driver stack (MLNX_OFED/DOCA, NIC firmware,
nvidia_peermem), GPU-NIC affinity, and the RDMA side the fabric needs (port ACTIVE on the planned netdev, a RoCE v2
GID for the planned address, the planned MTU). Every expectation comes from here; the script only reads and
compares, and changes nothing on the host.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Literal

from rocefab.platforms.host import TARGET
from rocefab.platforms.host.library import PREFLIGHT
from rocefab.renderers.plan import FabricPlan, Host
from rocefab.renderers.record import record
from rocefab.renderers.templating import header_lines, render


@record
class PlannedNetdev:
    """One netdev the fabric plans on this host, and what the preflight expects of it."""

    name: str
    # "port": a NIC's own PCI function (its PCIe link and firmware are checked); "bond": the LACP bond over ports
    kind: Literal["port", "bond"]
    rdma_device: str  # the RDMA device whose GIDs belong to this netdev; "" for a bond's ports
    address: str  # the IPv4 address (no prefix) its RoCE v2 GID must carry; "" for a bond's ports


@record
class PreflightConfig:
    header: tuple[str, ...]
    host: str
    script_name: str
    roce_script: str  # the host's NIC/bond script, named in hints for what it sets
    mtu: int
    netdevs: tuple[PlannedNetdev, ...]


def script_name(host: Host) -> str:
    return f"{host.name}.preflight.sh"


def planned_netdevs(host: Host) -> tuple[PlannedNetdev, ...]:
    """Each bond, then its ports; then the rail NICs, which are ports with an RDMA device of their own."""
    out: list[PlannedNetdev] = []
    for bond in host.bonds:
        out.append(PlannedNetdev(bond.name, "bond", bond.rdma_device, bond.source))
        out += [PlannedNetdev(member.netdev, "port", "", "") for member in bond.members]
    out += [PlannedNetdev(nic.netdev, "port", nic.rdma_device, nic.source) for nic in host.nics]
    return tuple(out)


def build(plan: FabricPlan, host: Host, roce_script: str, target: str = TARGET) -> PreflightConfig:
    return PreflightConfig(
        header=tuple(header_lines(plan.source, target, host.name)),
        host=host.name,
        script_name=script_name(host),
        roce_script=roce_script,
        mtu=plan.host_profile.mtu_bytes,
        netdevs=planned_netdevs(host),
    )


def render_preflight(config: PreflightConfig, library: str | None = None) -> str:
    """The host's preflight: its plan, then the block that loads the checks from lib/ beside it, or `library`'s
    text there instead (the script as it was before the checks were shared)."""
    return render("host/preflight.sh.j2", **{f.name: getattr(config, f.name) for f in fields(config)},
                  library=PREFLIGHT.loader_block() if library is None else library)
