"""RoCE load balancing asked of switches that can do it, and per-packet spraying only towards NICs that reorder.

What each ASIC family can do is data in its platform unit (`PlatformSpec.load_balancing`, with sources). A request a
switch model cannot honour is an error naming the model and the field that asked, never a silent fallback to the
five-tuple hash: an operator who asked for queue-pair hashing and got the five-tuple would read the wrong cause
into every uneven link.
"""

from __future__ import annotations

from rocefab.models.catalogue import SwitchModel
from rocefab.models.checks.common import error, warning
from rocefab.models.findings import Finding, Path
from rocefab.models.intent import Intent, LoadBalancing
from rocefab.models.nic_catalogue import NIC_MODELS
from rocefab.models.resolve import Resolution

LB: Path = ("underlay", "load_balancing")


def field_path(lb: LoadBalancing, platform: str, name: str) -> Path:
    """Where the value a platform's switches take comes from: its by_platform entry if that sets it, else the
    fabric's."""
    own = lb.by_platform.get(platform)
    if own is not None and getattr(own, name) is not None:
        return (*LB, "by_platform", platform, name)
    return (*LB, name)


def _where(path: Path) -> str:
    return ".".join(str(p) for p in path)


def _supported_on(wanted: str) -> str:
    """The models of the catalogue that can do `wanted` ("roce-qp", "flowlet", "per-packet"), for a hint."""
    from rocefab.models.catalogue import MODELS

    able = []
    for model in MODELS.values():
        support = model.spec.load_balancing_of(model.asic)
        if support and (support.roce_qp_hash if wanted == "roce-qp" else wanted in support.dynamic):
            able.append(model.name)
    return ", ".join(able) or "no model of the catalogue"


def _capability(intent: Intent, resolution: Resolution) -> list[Finding]:
    lb = intent.underlay.load_balancing
    found: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for named_at, model in resolution.models:
        ecmp_hash, dynamic = lb.for_platform(model.platform)
        support = model.spec.load_balancing_of(model.asic)
        if ecmp_hash == "roce-qp" and not (support and support.roce_qp_hash) and ("hash", model.name) not in seen:
            seen.add(("hash", model.name))
            path = field_path(lb, model.platform, "ecmp_hash")
            found.append(error(
                "load-balancing-unsupported", path,
                f"{_where(path)} asks for roce-qp hashing, but {model.name} ({_where(named_at)}: {model.asic}, "
                f"{model.spec.display_name}) has no queue-pair hash rocefab can configure",
                f"models that have it: {_supported_on('roce-qp')}; set "
                f"{_where((*LB, 'by_platform', model.platform, 'ecmp_hash'))}: five-tuple"))
        if dynamic != "none" and not (support and dynamic in support.dynamic) and ("dyn", model.name) not in seen:
            seen.add(("dyn", model.name))
            path = field_path(lb, model.platform, "dynamic")
            runs = f"runs {' and '.join(support.dynamic)} only" if support and support.dynamic else \
                "has no dynamic load balancing rocefab can configure"
            spectrum = " (Spectrum-4 spreads RoCE per packet with adaptive_routing)" \
                if model.spec.adaptive_routing_asics else ""
            found.append(error(
                "load-balancing-unsupported", path,
                f"{_where(path)} asks for {dynamic} dynamic load balancing, but {model.name} ({_where(named_at)}: "
                f"{model.asic}, {model.spec.display_name}) {runs}{spectrum}",
                f"models that run {dynamic}: {_supported_on(dynamic)}; set "
                f"{_where((*LB, 'by_platform', model.platform, 'dynamic'))} to what it runs, or none"))
    return found


def _unconfirmed(intent: Intent, resolution: Resolution) -> list[Finding]:
    """What is asked and rendered, but not confirmed by a source rocefab read: said once per feature and platform,
    naming the models, so the operator checks it on the first switch."""
    lb = intent.underlay.load_balancing
    said: dict[Path, tuple[str, set[str]]] = {}
    for _, model in resolution.models:
        support = model.spec.load_balancing_of(model.asic)
        if support is None:
            continue
        ecmp_hash, dynamic = lb.for_platform(model.platform)
        asked = [("ecmp_hash", support.roce_qp_hash_unconfirmed) if ecmp_hash == "roce-qp" else ("", ""),
                 ("dynamic", support.dynamic_unconfirmed) if dynamic in support.dynamic else ("", "")]
        for name, caveat in asked:
            if caveat:
                path = field_path(lb, model.platform, name)
                said.setdefault(path, (caveat, set()))[1].add(model.name)
    return [warning("load-balancing-unconfirmed", path,
                    f"{', '.join(sorted(models))}: {caveat}",
                    "rocefab renders it as the vendor sources show it; check it on the first switch before the rest")
            for path, (caveat, models) in said.items()]


def _sprayers(intent: Intent, resolution: Resolution) -> list[tuple[Path, SwitchModel, str]]:
    """Where the fabric would send one RoCE flow's packets over several paths: (the field that asks, a model
    that would do it, how)."""
    lb = intent.underlay.load_balancing
    out: list[tuple[Path, SwitchModel, str]] = []
    for _, model in resolution.models:
        if lb.adaptive_routing and model.asic in model.spec.adaptive_routing_asics:
            out.append(((*LB, "adaptive_routing"), model, "adaptive routing"))
        support = model.spec.load_balancing_of(model.asic)
        if lb.for_platform(model.platform)[1] == "per-packet" and support and "per-packet" in support.dynamic:
            out.append((field_path(lb, model.platform, "dynamic"), model, "per-packet dynamic load balancing"))
    return out


def _reordering(intent: Intent, resolution: Resolution) -> list[Finding]:
    """Adaptive routing and per-packet DLB spray one RoCE flow's packets over every path: receivers that cannot
    place them out of order retransmit (go-back-N) instead, which costs more than hashing ever did."""
    sprayers = _sprayers(intent, resolution)
    if not sprayers:
        return []
    model = intent.hosts.nic_model
    nic = NIC_MODELS.get(model) if model else None
    if nic is not None and nic.places_out_of_order:
        return []
    able = ", ".join(m.name for m in NIC_MODELS.values() if m.places_out_of_order)
    said = f"hosts.nic_model {model} does not" if model else "hosts.nic_model is not set, so nothing says the NICs"
    found: list[Finding] = []
    for path in dict.fromkeys(p for p, _, _ in sprayers):
        how = next(h for p, _, h in sprayers if p == path)
        switches = sorted({m.name for p, m, _ in sprayers if p == path})
        code = "adaptive-routing-needs-reordering-nics" if path[-1] == "adaptive_routing" else \
            "per-packet-needs-reordering-nics"
        found.append(error(
            code, path,
            f"{how} ({', '.join(switches)}) sends each RoCE flow's packets over several paths, and {said} place "
            "out-of-order packets: they would fall back to go-back-N retransmission",
            f"set hosts.nic_model to a NIC NVIDIA supports for Spectrum-X adaptive routing ({able}; its firmware "
            f"needs ROCE_ADAPTIVE_ROUTING_EN=1), or turn {path[-1]} off" if path[-1] == "adaptive_routing" else
            f"set hosts.nic_model to a NIC that places out-of-order RoCE packets ({able}), or use flowlet"))
    return found


def check(intent: Intent, resolution: Resolution) -> list[Finding]:
    return _capability(intent, resolution) + _reordering(intent, resolution) + _unconfirmed(intent, resolution)
