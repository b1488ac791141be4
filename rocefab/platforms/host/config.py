"""GPU host: plan -> structured config (`HostConfig`) -> NIC/bond script (with --check), NCCL environment and the
systemd unit that re-runs the script at boot; plus the read-only preflight script (preflight.py)."""

from __future__ import annotations

from dataclasses import fields

from rocefab.platforms.host import TARGET, library, preflight
from rocefab.platforms.unit import UnitFile
from rocefab.renderers.plan import FabricPlan, Host, HostBond, HostNic, Qos
from rocefab.renderers.record import record
from rocefab.renderers.templating import header_lines, render


@record
class HostConfig:
    """Everything the host's two files print; `build` decides it from the plan."""

    header: tuple[str, ...]
    host: str
    script_name: str
    bonds: tuple[HostBond, ...]
    attachment: str
    nics: tuple[HostNic, ...]
    mtu: int
    rx_ring: int
    tx_ring: int
    pfc_flags: str
    dscp_map: str  # "d:p" for all 64 DSCPs: the fabric's map, which the NIC's must equal
    pfc_priorities: str
    ecn_priorities: tuple[int, ...]
    cnp_dscp: int
    cnp_priority: int
    roce_dscp: int
    roce_priority: int
    roce_tos: int
    gid_index: str | None
    nccl_env: tuple[tuple[str, str], ...]
    unit_name: str
    installed_script: str
    installed_path: str


UNIT_NAME = "rocefab-roce.service"
INSTALLED_SCRIPT = "rocefab-roce.sh"
INSTALLED_PATH = f"/usr/local/sbin/{INSTALLED_SCRIPT}"  # the script's $SBIN default


def script_name(host: Host) -> str:
    return f"{host.name}.roce.sh"


def _attachment(host: Host) -> list[str]:
    parts = []
    if host.bonds:
        parts.append("LACP bonds to the leaf pair")
    if host.nics:
        parts.append("one routed /31 per NIC to the leaf of its rail")
    return parts


@record
class _FabricTexts:
    """What every host of a fabric prints alike from its QoS, made once per QoS record (the view every host of a
    plan is rendered from holds one): the 64-entry DSCP map, 12,288 times over at 98,304 GPUs, was a fifth of a
    host's building."""

    qos: Qos
    pfc_flags: str
    dscp_map: str
    pfc_priorities: str


_last: list[_FabricTexts] = []


def _fabric_texts(q: Qos) -> _FabricTexts:
    if _last and _last[0].qos is q:
        return _last[0]
    made = _FabricTexts(q, ",".join(map(str, q.pfc_vector)), ",".join(f"{d}:{p}" for d, p in enumerate(q.dscp_classes)),
                        ",".join(map(str, q.lossless_priorities)))
    _last[:] = [made]
    return made


def build(plan: FabricPlan, host: Host, target: str = TARGET) -> HostConfig:
    q = plan.qos
    texts = _fabric_texts(q)
    profile = plan.host_profile
    return HostConfig(
        header=tuple(header_lines(plan.source, target, host.name)),
        host=host.name,
        script_name=script_name(host),
        bonds=host.bonds,
        attachment="; ".join(_attachment(host)),
        nics=host.nics,
        mtu=profile.mtu_bytes,
        rx_ring=profile.rx_ring,
        tx_ring=profile.tx_ring,
        pfc_flags=texts.pfc_flags,
        dscp_map=texts.dscp_map,
        pfc_priorities=texts.pfc_priorities,
        ecn_priorities=q.lossless_priorities,
        cnp_dscp=q.cnp_dscp,
        cnp_priority=q.cnp_priority,
        roce_dscp=q.roce_dscp,
        roce_priority=q.roce_priority,
        roce_tos=q.roce_tos,
        gid_index=dict(profile.nccl_env).get("NCCL_IB_GID_INDEX"),
        nccl_env=profile.nccl_env,
        unit_name=UNIT_NAME,
        installed_script=INSTALLED_SCRIPT,
        installed_path=INSTALLED_PATH,
    )


_FIELDS = tuple(f.name for f in fields(HostConfig))


def _render(template: str, config: HostConfig, **extra: str) -> str:
    return render(template, **{name: getattr(config, name) for name in _FIELDS}, **extra)


def _script(config: HostConfig, unit: str) -> str:
    """The script, carrying its boot unit (installed from it) as a heredoc, and the block that loads the host
    library in the library's place (rocefab/platforms/host/library.py)."""
    return _render("host/roce-setup.sh.j2", config, unit_text=unit.rstrip("\n"), library=library.loader_block())


def _unit(config: HostConfig) -> str:
    return _render("host/roce.service.j2", config)


def render_unit(plan: FabricPlan, host: Host) -> str:
    """The boot unit the script installs (it carries the unit's text; no file of its own is rendered)."""
    return _unit(build(plan, host))


def render_host(plan: FabricPlan, host: Host, target: str) -> list[UnitFile]:
    """The host's files: its NIC/bond script (the deploy candidate, which carries and installs its boot unit), its
    NCCL environment, and the read-only preflight that checks what the script cannot set (PCIe, BIOS, drivers).
    The unit is not a file of its own: 12,288 copies at 98,304 GPUs of what each script already shows."""
    config = build(plan, host, target)
    unit = _unit(config)
    checks = preflight.build(plan, host, config.script_name, target)
    return [UnitFile(".roce.sh", "host-script", _script(config, unit), executable=True),
            UnitFile(".nccl.env", "nccl-env", _render("host/nccl.env.j2", config)),
            UnitFile(".preflight.sh", "host-preflight", preflight.render_preflight(checks), executable=True)]
