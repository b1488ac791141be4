"""Clos sizing: from "N servers x M NICs at S Gb/s" to leaf, spine and super-spine counts.

Pure arithmetic on the intent and the catalogue, shared by the design checks (which explain what does not
fit and what would) and the planner (which then places every port).

Terms: a leaf gives `host_ports` ports to servers and `uplinks` to spines, split by the oversubscription
ratio of their bandwidth. In two tiers every leaf reaches every spine over `leaf_links_per_spine` links, so
one spine can serve at most as many leaves as it has ports. In three tiers the fabric is cut into pods:
each pod's spines reach every leaf of the pod, and spine k of every pod reaches the super-spines of
plane k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from rocefab.models.catalogue import SwitchModel, lookup_model
from rocefab.models.intent import Clos, Intent


class SizingError(ValueError):
    """The asked fabric cannot be built with these models; `code` and `hint` become a finding."""

    def __init__(self, code: str, field: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code, self.field, self.message, self.hint = code, field, message, hint


@dataclass(frozen=True, slots=True)
class ClosSize:
    design: str
    tiers: int
    nodes: int
    rails: int  # rail-optimized: NICs per server; ToR: 1
    bonds: int  # ToR: dual-port NICs per server; rail-optimized: 0
    nic_speed_gbps: int
    uplink_speed_gbps: int
    leaf: SwitchModel
    spine: SwitchModel
    superspine: SwitchModel | None
    host_ports_per_leaf: int
    nodes_per_leaf: int  # rail: servers per rail leaf; ToR: servers per leaf pair
    uplinks_per_leaf: int
    leaves: int
    pods: int
    nodes_per_pod: int
    leaves_per_pod: int
    spines_per_pod: int
    leaf_links_per_spine: int
    spine_uplinks: int  # per spine, towards the super-spines (three tiers)
    superspines_per_plane: int
    spine_links_per_superspine: int

    @property
    def leaf_oversubscription(self) -> Fraction:
        return Fraction(self.host_ports_per_leaf * self.nic_speed_gbps, self.uplinks_per_leaf * self.uplink_speed_gbps)

    @property
    def spine_oversubscription(self) -> Fraction | None:
        if self.tiers != 3:
            return None
        down = self.leaves_per_pod * self.leaf_links_per_spine
        return Fraction(down, self.spine_uplinks)



def ratio_text(value: Fraction) -> str:
    """An oversubscription as operators write it: 1:1, 3:2, 2:1."""
    return f"{value.numerator}:{value.denominator}"


def _model(name: str | None, field: str) -> SwitchModel:
    model = lookup_model(name or "")
    if model is None:
        raise SizingError("unknown-switch-model", field, f"no switch model '{name}' in the catalogue")
    return model


def _bandwidth(model: SwitchModel) -> int:
    return sum(g.count * g.speed_gbps for g in model.cage_groups)


def _smallest_divisor_fitting(total: int, per_group_limit: int, groups: int) -> int | None:
    """The smallest k dividing `total` with `groups * total / k <= per_group_limit` (fewest, fullest switches)."""
    for k in range(1, total + 1):
        if total % k == 0 and groups * (total // k) <= per_group_limit:
            return k
    return None


def _spine_count(topo: Clos, uplinks: int, downlinks: int, leaves: int, spine: str) -> int:
    """Spines per pod: the pinned count if it fits, else the fewest that do. Every leaf spreads its uplinks
    evenly (the count divides them) and every spine has a downlink for each of its links to the leaves."""
    fewest = _smallest_divisor_fitting(uplinks, downlinks, leaves)
    assert fewest is not None, "callers check that the pod fits its spines"
    pinned = topo.spines_per_pod
    if pinned is None:
        return fewest
    fitting = [k for k in range(fewest, uplinks + 1) if uplinks % k == 0]
    if uplinks % pinned or pinned < fewest:
        why = (f"{uplinks} uplinks per leaf do not spread evenly over {pinned} spines" if uplinks % pinned else
               f"{pinned} {spine} spines have {pinned * downlinks} downlinks for {leaves * uplinks} leaf uplinks")
        raise SizingError("spine-count-unfit", "spines_per_pod", why,
                          "counts that fit: " + ", ".join(map(str, fitting)))
    return pinned


def size_clos(intent: Intent) -> ClosSize:
    topo = intent.topology
    assert isinstance(topo, Clos)
    leaf = _model(topo.models.leaf, "models.leaf")
    spine = _model(topo.models.spine, "models.spine")
    superspine = _model(topo.models.superspine or topo.models.spine, "models.superspine")
    speed = topo.nic_speed_gbps
    uplink = topo.uplink_speed_gbps or speed
    down, up = topo.ratio
    for model, field in ((leaf, "models.leaf"),):
        if model.port_capacity(speed) == 0:
            raise SizingError("speed-unsupported", field,
                              f"{model.name} cannot run {speed}G host ports",
                              "speeds it offers: " + ", ".join(f"{s}G" for s in model.speeds_gbps()))
    for model, field in ((leaf, "models.leaf"), (spine, "models.spine")):
        if model.port_capacity(uplink) == 0:
            raise SizingError("speed-unsupported", field, f"{model.name} cannot run {uplink}G fabric ports",
                              "speeds it offers: " + ", ".join(f"{s}G" for s in model.speeds_gbps()))

    rail = topo.design == "rail-optimized"
    native = max(g.speed_gbps for g in leaf.cage_groups)
    usable = _bandwidth(leaf) - topo.spare_ports_per_leaf * speed - (0 if rail else 2 * native)
    host_ports = usable * down // (down + up) // speed
    if rail:
        nodes_per_leaf = host_ports
    else:
        nodes_per_leaf = host_ports // topo.nics_per_node
        host_ports = nodes_per_leaf * topo.nics_per_node
    if nodes_per_leaf < 1:
        raise SizingError("leaf-radix-too-small", "models.leaf",
                          f"a {leaf.name} leaf has no room for a server at {topo.oversubscription}",
                          "use a leaf with more ports or a higher oversubscription")
    uplinks = math.ceil(host_ports * speed * up / (down * uplink))
    if rail:
        leaves_per_rail = math.ceil(topo.nodes / nodes_per_leaf)
        leaves = topo.nics_per_node * leaves_per_rail
    else:
        leaves = 2 * math.ceil(topo.nodes / nodes_per_leaf)

    spine_ports = spine.port_capacity(uplink)
    fits_two = leaves <= spine_ports
    tiers = 2 if fits_two and topo.pod_nodes is None else 3
    if topo.tiers != "auto":
        tiers = topo.tiers
    if tiers == 2:
        if not fits_two:
            max_nodes = _max_nodes_two_tiers(spine_ports, nodes_per_leaf, topo.nics_per_node, rail)
            raise SizingError(
                "single-tier-too-large", "tiers",
                f"{leaves} leaves cannot all reach one spine layer: a {spine.name} has {spine_ports} "
                f"ports at {uplink}G",
                f"two tiers of {spine.name} connect at most {max_nodes} servers; use tiers: 3 (pods and "
                "super-spines) or a spine model with more ports",
            )
        k = _spine_count(topo, uplinks, spine_ports, leaves, spine.name)
        return ClosSize(topo.design, 2, topo.nodes, topo.nics_per_node if rail else 1,
                        0 if rail else topo.nics_per_node, speed, uplink, leaf, spine, None, host_ports,
                        nodes_per_leaf, uplinks, leaves, 1, topo.nodes, leaves, k, uplinks // k, 0, 0, 0)
    return _three_tiers(intent, topo, leaf, spine, superspine, speed, uplink, host_ports, nodes_per_leaf, uplinks)


def _max_nodes_two_tiers(spine_ports: int, nodes_per_leaf: int, nics: int, rail: bool) -> int:
    if rail:
        return (spine_ports // nics) * nodes_per_leaf
    return (spine_ports // 2) * nodes_per_leaf


def _three_tiers(intent: Intent, topo: Clos, leaf: SwitchModel, spine: SwitchModel, superspine: SwitchModel,
                 speed: int, uplink: int, host_ports: int, nodes_per_leaf: int, uplinks: int) -> ClosSize:
    rail = topo.design == "rail-optimized"
    down, up = topo.ratio
    spine_ports = spine.port_capacity(uplink)
    spine_down = spine_ports * down // (down + up)
    spine_up = spine_ports - spine_down
    group = topo.nics_per_node if rail else 2  # leaves that serve the same servers: a rail set or a pair
    # Without a pod size, a pod is as large as one link from each of its leaves to each pod spine allows.
    groups_per_pod = math.ceil(topo.pod_nodes / nodes_per_leaf) if topo.pod_nodes else spine_down // group
    if groups_per_pod < 1:
        raise SizingError("spine-radix-too-small", "models.spine",
                          f"a {spine.name} spine cannot connect even one {'rail set' if rail else 'leaf pair'} "
                          f"of {group} leaves", "use a spine model with more ports")
    leaves_per_pod = group * groups_per_pod
    if _smallest_divisor_fitting(uplinks, spine_down, leaves_per_pod) is None:
        raise SizingError(
            "spine-radix-too-small", "pod_nodes",
            f"a pod of {leaves_per_pod} leaves needs more than the {spine_down} downlinks a {spine.name} has",
            f"use pod_nodes of at most {spine_down // group * nodes_per_leaf}",
        )
    spines_per_pod = _spine_count(topo, uplinks, spine_down, leaves_per_pod, spine.name)
    # A pod holds what was asked (its last rail set or pair may be part-filled), else as much as fits.
    nodes_per_pod = topo.pod_nodes or groups_per_pod * nodes_per_leaf
    pods = math.ceil(topo.nodes / nodes_per_pod)
    superspine_ports = superspine.port_capacity(uplink)
    if superspine_ports == 0:
        raise SizingError("speed-unsupported", "models.superspine",
                          f"{superspine.name} cannot run {uplink}G fabric ports")
    per_plane = _smallest_divisor_fitting(spine_up, superspine_ports, pods)
    if per_plane is None:
        raise SizingError(
            "superspine-radix-too-small", "models.superspine",
            f"{pods} pods cannot all reach a super-spine plane: a {superspine.name} has {superspine_ports} "
            f"ports at {uplink}G",
            f"at most {superspine_ports * nodes_per_pod} servers fit; use larger pods (pod_nodes) or a "
            "super-spine model with more ports",
        )
    leaves = pods * leaves_per_pod
    return ClosSize(topo.design, 3, topo.nodes, topo.nics_per_node if rail else 1, 0 if rail else topo.nics_per_node,
                    speed, uplink, leaf, spine, superspine, host_ports, nodes_per_leaf, uplinks, leaves, pods,
                    nodes_per_pod, leaves_per_pod, spines_per_pod, uplinks // spines_per_pod, spine_up, per_plane,
                    spine_up // per_plane)
