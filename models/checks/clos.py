"""Design checks of a sized fabric: does it fit, is it non-blocking, are uplinks balanced, rails aligned."""

from __future__ import annotations

from fractions import Fraction

from rocefab.models.checks.common import error, info, warning
from rocefab.models.findings import Finding
from rocefab.models.intent import Clos, Intent
from rocefab.models.sizing import SizingError, ratio_text, size_clos


def check(intent: Intent) -> list[Finding]:
    topo = intent.topology
    if not isinstance(topo, Clos):
        return []
    try:
        size = size_clos(intent)
    except SizingError as exc:
        return [error(exc.code, ("topology", *exc.field.split(".")), exc.message, exc.hint)]
    found: list[Finding] = []
    down, up = topo.ratio
    target = Fraction(down, up)
    if size.leaf_oversubscription > target:
        found.append(warning(
            "oversubscription-above-target", ("topology", "oversubscription"),
            f"leaves run at {ratio_text(size.leaf_oversubscription)}, above the {topo.oversubscription} target",
        ))
    spine = size.spine_oversubscription
    if spine is not None and spine > target:
        found.append(warning(
            "oversubscription-above-target", ("topology", "oversubscription"),
            f"spines run at {ratio_text(spine)}, above the {topo.oversubscription} target",
        ))
    if size.uplinks_per_leaf % size.spines_per_pod:
        found.append(warning(
            "uplinks-unbalanced", ("topology",),
            f"{size.uplinks_per_leaf} uplinks do not split evenly over {size.spines_per_pod} spines",
            "ECMP hashes equally over the spines, so the extra links carry less than their share",
        ))
    if size.uplinks_per_leaf > intent.underlay.ecmp_max_paths:
        found.append(warning(
            "ecmp-narrower-than-uplinks", ("underlay", "ecmp_max_paths"),
            f"each leaf has {size.uplinks_per_leaf} uplinks but ECMP uses at most {intent.underlay.ecmp_max_paths}",
        ))
    if topo.pod_nodes is not None and topo.pod_nodes % size.nodes_per_leaf:
        rail = topo.design == "rail-optimized"
        found.append(warning(
            "rails-not-aligned" if rail else "pairs-not-aligned", ("topology", "pod_nodes"),
            f"pods of {topo.pod_nodes} servers leave {'rail leaves' if rail else 'leaf pairs'} of "
            f"{size.nodes_per_leaf} servers part-filled",
            f"use a multiple of {size.nodes_per_leaf}",
        ))
    if topo.nodes % size.nodes_per_pod:
        found.append(info(
            "pod-partly-filled", ("topology", "nodes"),
            f"{topo.nodes} servers leave the last pod with {topo.nodes % size.nodes_per_pod} of "
            f"{size.nodes_per_pod}; its switches and cables are planned in full for growth",
        ))
    return found
