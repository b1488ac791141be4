"""Host side: per-host NIC/bond script (with --check) and NCCL environment file."""

from __future__ import annotations

from rocefab.platforms.host import TARGET
from rocefab.platforms.unit import UnitFile
from rocefab.renderers.plan import FabricPlan, Host, HostNic
from rocefab.renderers.templating import header_lines, render


def script_name(host: Host) -> str:
    return f"{host.name}.roce.sh"


def _context(plan: FabricPlan, host: Host) -> dict[str, object]:
    q = plan.qos
    profile = plan.host_profile
    return {
        "header": header_lines(plan.source, TARGET, host.name),
        "host": host.name,
        "script_name": script_name(host),
        "bonds": host.bonds,
        "attachment": "; ".join(_attachment(host)),
        "nics": [_nic_view(nic) for nic in host.nics],
        "mtu": profile.mtu_bytes,
        "rx_ring": profile.rx_ring,
        "tx_ring": profile.tx_ring,
        "pfc_flags": ",".join(map(str, q.pfc_vector)),
        "pfc_priorities": ",".join(map(str, q.lossless_priorities)),
        "ecn_priorities": q.lossless_priorities,
        "cnp_dscp": q.cnp_dscp,
        "cnp_priority": q.cnp_priority,
        "roce_dscp": q.roce_dscp,
        "roce_priority": q.roce_priority,
        "roce_tos": q.roce_tos,
        "gid_index": dict(profile.nccl_env).get("NCCL_IB_GID_INDEX"),
        "nccl_env": profile.nccl_env,
    }


def _attachment(host: Host) -> list[str]:
    parts = []
    if host.bonds:
        parts.append("LACP bonds to the leaf pair")
    if host.nics:
        parts.append("one routed /31 per NIC to the leaf of its rail")
    return parts


def _nic_view(nic: HostNic) -> dict[str, object]:
    view = {name: getattr(nic, name) for name in nic.__dataclass_fields__}
    view["source"] = nic.ipv4.split("/")[0]
    return view


def render_script(plan: FabricPlan, host: Host) -> str:
    return render("host/roce-setup.sh.j2", **_context(plan, host))


def render_nccl_env(plan: FabricPlan, host: Host) -> str:
    return render("host/nccl.env.j2", **_context(plan, host))


def render_host(plan: FabricPlan, host: Host, target: str) -> list[UnitFile]:
    """The host's files: its NIC/bond script (the deploy candidate) and its NCCL environment."""
    return [UnitFile(".roce.sh", "host-script", render_script(plan, host), executable=True),
            UnitFile(".nccl.env", "nccl-env", render_nccl_env(plan, host))]
