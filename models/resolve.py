"""Resolve an intent, whichever shape it has, into one `ResolvedFabric`: tiers, every switch and server by
name with its model, ASN and place, the leaf groups hosts attach to, and the uplink figures.

An intent either lists its leaf pairs and spines (explicit) or gives a cluster's size and lets rocefab derive
the rest (sized, `models.sizing`). This is the one place that asks which: the checks and the planner read
the resolved fabric only. Every switch and server keeps the intent field that named it (`path`), so a
finding about it points at the right line in either shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction

from rocefab.models.catalogue import SwitchModel, lookup_model
from rocefab.models.findings import Finding, Path, Severity
from rocefab.models.intent import Clos, Intent, PortOverrides, Topology
from rocefab.models.naming import format_name
from rocefab.models.sizing import ClosSize, SizingError, ratio_text, size_clos
from rocefab.platforms.spec import Multihoming


class Role(StrEnum):
    SUPERSPINE = "superspine"
    SPINE = "spine"
    LEAF = "leaf"


@dataclass(frozen=True, slots=True)
class SwitchSlot:
    name: str
    role: Role
    model: SwitchModel
    asn: int
    path: Path  # the intent field that named it
    pair: str | None = None
    pod: int | None = None  # three tiers only
    rail: int | None = None


@dataclass(frozen=True, slots=True)
class HostSlot:
    name: str
    path: Path


@dataclass(frozen=True, slots=True)
class PairGroup:
    """A ToR leaf pair and its dual-homed servers; it uplinks to the spines of pod `pod`."""

    index: int  # the pair's position in the fabric: VLAN slices, MLAG domain and MAC follow it
    name: str
    path: Path  # where a finding about the pair points
    name_path: Path  # the field that named it
    leaves: tuple[SwitchSlot, SwitchSlot]
    pod: int
    multihoming: Multihoming
    hosts: tuple[HostSlot, ...]
    uplink_speed_gbps: int
    uplinks_per_spine: int
    peer_speed_gbps: int
    peer_links: int
    overrides: PortOverrides
    overrides_path: Path


@dataclass(frozen=True, slots=True)
class RailGroup:
    """The leaves (one per rail, rail r at index r) that serve the same block of servers of pod `pod`."""

    pod: int
    leaves: tuple[SwitchSlot, ...]
    hosts: tuple[HostSlot, ...]
    block: int = 0  # the leaves' place in their rails over all pods (pod x leaves per rail per pod + j)


@dataclass(frozen=True, slots=True)
class Uplinks:
    """How a tier connects to the one above: `count` ports of `speed_gbps` per switch, `per_upper` of
    them to each switch above."""

    speed_gbps: int
    count: int
    per_upper: int


@dataclass(frozen=True)
class ResolvedFabric:
    design: str  # tor-dual-homed | rail-optimized
    tiers: int
    # Switches in the order they are created (loopback and management addresses follow it).
    planes: tuple[tuple[SwitchSlot, ...], ...]  # three tiers: plane k holds the super-spines of spine k
    pods: tuple[tuple[SwitchSlot, ...], ...]  # the spines of each pod (two tiers: one pod)
    leaves: tuple[SwitchSlot, ...]
    pairs: tuple[PairGroup, ...]  # ToR designs
    rails: tuple[RailGroup, ...]  # rail-optimized designs
    spine_uplinks: Uplinks | None  # three tiers: spine -> super-spine
    leaf_uplinks: Uplinks | None  # rail leaves -> spines (pairs carry their own)
    nic_speed_gbps: int  # rail NICs
    size: ClosSize | None  # the sizing arithmetic, where rocefab sized the fabric
    uplink_path: Path  # where a finding about the leaves' uplinks points

    @property
    def switches(self) -> tuple[SwitchSlot, ...]:
        return (*(s for plane in self.planes for s in plane), *(s for pod in self.pods for s in pod), *self.leaves)

    @property
    def hosts(self) -> tuple[HostSlot, ...]:
        groups = self.pairs or self.rails
        return tuple(h for g in groups for h in g.hosts)

    @property
    def uses_vlans(self) -> bool:
        """ToR dual-homed designs carry training VLANs and peer links."""
        return self.design == "tor-dual-homed"

    @property
    def most_hosts_per_pair(self) -> int:
        return max((len(p.hosts) for p in self.pairs), default=0)


@dataclass(frozen=True)
class Resolution:
    design: str  # tor-dual-homed | rail-optimized, known even when the fabric does not resolve
    models: tuple[tuple[Path, SwitchModel], ...]  # every known model the intent names, with its path
    fabric: ResolvedFabric | None  # None when the intent cannot resolve (the findings say why)
    findings: list[Finding] = field(default_factory=list)


def _error(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.ERROR, path, message, hint)


def _warning(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.WARNING, path, message, hint)


def _info(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.INFO, path, message, hint)


def resolve(intent: Intent) -> Resolution:
    topo = intent.topology
    if isinstance(topo, Clos):
        return _sized(intent, topo)
    return _explicit(intent, topo)


# --- a sized fabric -----------------------------------------------------------------------------------------


def _sized(intent: Intent, topo: Clos) -> Resolution:
    named = [(("topology", "models", "leaf"), topo.models.leaf), (("topology", "models", "spine"), topo.models.spine)]
    if topo.models.superspine:
        named.append((("topology", "models", "superspine"), topo.models.superspine))
    models = tuple((path, m) for path, name in named if (m := lookup_model(name)) is not None)
    try:
        size = size_clos(intent)
    except SizingError as exc:
        failed = _error(exc.code, ("topology", *exc.field.split(".")), exc.message, exc.hint)
        return Resolution(topo.design, models, None, [failed])
    asn = intent.underlay.asn
    three = size.tiers == 3
    names = topo.names
    planes: list[tuple[SwitchSlot, ...]] = []
    if three:
        assert size.superspine is not None
        n = 0
        for _ in range(size.spines_per_pod):
            row = []
            for _ in range(size.superspines_per_plane):
                n += 1
                row.append(SwitchSlot(format_name(names.superspine, n), Role.SUPERSPINE, size.superspine,
                                      asn.superspine or 0, ("topology", "names", "superspine")))
            planes.append(tuple(row))
    pods = []
    n = 0
    for p in range(size.pods):
        row = []
        for _ in range(size.spines_per_pod):
            n += 1
            row.append(SwitchSlot(format_name(names.spine, n), Role.SPINE, size.spine,
                                  asn.spine + p if three else asn.spine, ("topology", "names", "spine"),
                                  pod=p if three else None))
        pods.append(tuple(row))
    spine_uplinks = Uplinks(size.uplink_speed_gbps, size.spine_uplinks, size.spine_links_per_superspine) \
        if three else None
    common = {"tiers": size.tiers, "planes": tuple(planes), "pods": tuple(pods), "spine_uplinks": spine_uplinks,
              "nic_speed_gbps": size.nic_speed_gbps, "size": size, "uplink_path": ("topology",)}
    if topo.design == "rail-optimized":
        leaves, rails = _rails(intent, topo, size)
        fabric = ResolvedFabric(design=topo.design, leaves=leaves, pairs=(), rails=rails,
                                leaf_uplinks=Uplinks(size.uplink_speed_gbps, size.uplinks_per_leaf,
                                                     size.leaf_links_per_spine), **common)  # type: ignore[arg-type]
    else:
        leaves, pairs = _sized_pairs(intent, topo, size)
        fabric = ResolvedFabric(design=topo.design, leaves=leaves, pairs=pairs, rails=(), leaf_uplinks=None,
                                **common)  # type: ignore[arg-type]
    return Resolution(topo.design, models, fabric, _design(intent, topo, size))


def _rails(intent: Intent, topo: Clos, size: ClosSize) -> tuple[tuple[SwitchSlot, ...], tuple[RailGroup, ...]]:
    three = size.tiers == 3
    per_rail = size.leaves_per_pod // size.rails
    leaves: list[SwitchSlot] = []
    grid: list[list[list[SwitchSlot]]] = []  # [pod][rail][j]
    for p in range(size.pods):
        by_rail = []
        for r in range(size.rails):
            row = []
            for _ in range(per_rail):
                leaf = SwitchSlot(format_name(topo.names.leaf, len(leaves) + 1), Role.LEAF, size.leaf,
                                  intent.underlay.asn.leaf_first + len(leaves), ("topology", "names", "leaf"),
                                  pod=p if three else None, rail=r)
                row.append(leaf)
                leaves.append(leaf)
            by_rail.append(row)
        grid.append(by_rail)
    blocks: dict[tuple[int, int], list[HostSlot]] = {}
    for k in range(topo.nodes):
        p, within = divmod(k, size.nodes_per_pod)
        j = within // size.nodes_per_leaf
        blocks.setdefault((p, j), []).append(HostSlot(format_name(intent.hosts.name_format, k + 1),
                                                      ("hosts", "name_format")))
    groups = tuple(RailGroup(p, tuple(grid[p][r][j] for r in range(size.rails)), tuple(hosts), p * per_rail + j)
                   for (p, j), hosts in blocks.items())
    return tuple(leaves), groups


def _sized_pairs(intent: Intent, topo: Clos, size: ClosSize) -> tuple[tuple[SwitchSlot, ...], tuple[PairGroup, ...]]:
    three = size.tiers == 3
    native = max(g.speed_gbps for g in size.leaf.cage_groups)
    pairs_per_pod = size.leaves_per_pod // 2
    leaves: list[SwitchSlot] = []
    pairs: list[PairGroup] = []
    for p in range(size.pods):
        # Pod p holds servers [p * nodes_per_pod, ...), filling its pairs in order.
        node = p * size.nodes_per_pod
        pod_end = min(topo.nodes, node + size.nodes_per_pod)
        for _ in range(pairs_per_pod):
            g = len(pairs)
            name = format_name(topo.names.pair, g + 1)
            sides = tuple(
                SwitchSlot(f"{name}-{side}", Role.LEAF, size.leaf, intent.underlay.asn.leaf_first + 2 * g + i,
                           ("topology", "names", "pair"), pair=name, pod=p if three else None)
                for i, side in enumerate("ab")
            )
            leaves += sides
            count = max(0, min(size.nodes_per_leaf, pod_end - node))
            hosts = tuple(HostSlot(format_name(intent.hosts.name_format, node + i + 1), ("hosts", "name_format"))
                          for i in range(count))
            node += count
            pairs.append(PairGroup(
                index=g, name=name, path=("topology",), name_path=("topology", "names", "pair"),
                leaves=(sides[0], sides[1]), pod=p,
                multihoming=size.leaf.spec.multihoming[0], hosts=hosts, uplink_speed_gbps=size.uplink_speed_gbps,
                uplinks_per_spine=size.leaf_links_per_spine, peer_speed_gbps=native, peer_links=2,
                overrides=PortOverrides(), overrides_path=("topology",),
            ))
    return tuple(leaves), tuple(pairs)




def _design(intent: Intent, topo: Clos, size: ClosSize) -> list[Finding]:
    """How the sized fabric compares with what was asked: oversubscription, balance, alignment, fill."""
    found: list[Finding] = []
    down, up = topo.ratio
    target = Fraction(down, up)
    if size.leaf_oversubscription > target:
        found.append(_warning(
            "oversubscription-above-target", ("topology", "oversubscription"),
            f"leaves run at {ratio_text(size.leaf_oversubscription)}, above the {topo.oversubscription} target",
        ))
    spine = size.spine_oversubscription
    if spine is not None and spine > target:
        found.append(_warning(
            "oversubscription-above-target", ("topology", "oversubscription"),
            f"spines run at {ratio_text(spine)}, above the {topo.oversubscription} target",
        ))
    if size.uplinks_per_leaf % size.spines_per_pod:
        found.append(_warning(
            "uplinks-unbalanced", ("topology",),
            f"{size.uplinks_per_leaf} uplinks do not split evenly over {size.spines_per_pod} spines",
            "ECMP hashes equally over the spines, so the extra links carry less than their share",
        ))
    if topo.pod_nodes is not None and topo.pod_nodes % size.nodes_per_leaf:
        rail = topo.design == "rail-optimized"
        found.append(_warning(
            "rails-not-aligned" if rail else "pairs-not-aligned", ("topology", "pod_nodes"),
            f"pods of {topo.pod_nodes} servers leave {'rail leaves' if rail else 'leaf pairs'} of "
            f"{size.nodes_per_leaf} servers part-filled",
            f"use a multiple of {size.nodes_per_leaf}",
        ))
    if topo.nodes % size.nodes_per_pod:
        found.append(_info(
            "pod-partly-filled", ("topology", "nodes"),
            f"{topo.nodes} servers leave the last pod with {topo.nodes % size.nodes_per_pod} of "
            f"{size.nodes_per_pod}; its switches and cables are planned in full for growth",
        ))
    return found


# --- an explicit fabric -------------------------------------------------------------------------------------


def _explicit(intent: Intent, topo: Topology) -> Resolution:
    known: list[tuple[Path, SwitchModel]] = []
    findings: list[Finding] = []
    from rocefab.models.catalogue import MODELS

    catalogue = ", ".join(MODELS)
    spine_model = lookup_model(topo.spines.model)
    if spine_model is None:
        findings.append(_error("unknown-switch-model", ("topology", "spines", "model"),
                               f"no switch model '{topo.spines.model}' in the catalogue", f"known models: {catalogue}"))
    else:
        known.append((("topology", "spines", "model"), spine_model))
    pair_models: list[SwitchModel | None] = []
    for i, pair in enumerate(topo.leaf_pairs):
        model = lookup_model(pair.model)
        pair_models.append(model)
        if model is None:
            findings.append(_error("unknown-switch-model", ("topology", "leaf_pairs", i, "model"),
                                   f"no switch model '{pair.model}' in the catalogue", f"known models: {catalogue}"))
            continue
        known.append((("topology", "leaf_pairs", i, "model"), model))
        if pair.multihoming is not None and pair.multihoming not in model.spec.multihoming:
            offered = ", ".join(m.value for m in model.spec.multihoming)
            findings.append(_error(
                "multihoming-unsupported", ("topology", "leaf_pairs", i, "multihoming"),
                f"{model.spec.display_name} leaf pairs cannot use {pair.multihoming.value}",
                f"supported here: {offered}",
            ))
    if topo.spines.names is not None and len(topo.spines.names) != topo.spines.count:
        findings.append(_error("spine-names-count", ("topology", "spines", "names"),
                               f"{len(topo.spines.names)} name(s) given for {topo.spines.count} spine(s)"))
    if spine_model is not None and topo.leaf.uplink_speed_gbps is None:
        mismatched = {m.name: m for m in pair_models if m is not None and not _common_speed(m, spine_model)}
        for model in mismatched.values():
            findings.append(_error("link-speed-mismatch", ("topology", "leaf", "uplinks_per_spine"),
                                   f"{model.name} and {spine_model.name} share no port speed for uplinks",
                                   "set topology.leaf.uplink_speed_gbps or choose compatible models"))
    if spine_model is None or None in pair_models or any(f.code == "link-speed-mismatch" for f in findings):
        return Resolution(topo.design, tuple(known), None, findings)
    spines = _explicit_spines(intent, topo, spine_model)
    leaves: list[SwitchSlot] = []
    pairs: list[PairGroup] = []
    n = 0  # generated host names count from 1 across pairs
    defaults = topo.leaf
    for p, (pair, model) in enumerate(zip(topo.leaf_pairs, pair_models, strict=True)):
        assert model is not None
        pair_path: Path = ("topology", "leaf_pairs", p)
        sides = tuple(
            SwitchSlot(name, Role.LEAF, model, intent.underlay.asn.leaf_first + 2 * p + side,
                       (*pair_path, "leaves", side) if pair.leaves else (*pair_path, "name"), pair=pair.name)
            for side, name in enumerate(pair.leaf_names)
        )
        leaves += sides
        if pair.host_names is not None:
            hosts = tuple(HostSlot(h, (*pair_path, "host_names", j)) for j, h in enumerate(pair.host_names))
        else:
            hosts = tuple(HostSlot(format_name(intent.hosts.name_format, n + j + 1), ("hosts", "name_format"))
                          for j in range(pair.hosts))
            n += pair.hosts
        pairs.append(PairGroup(
            index=p, name=pair.name, path=pair_path, name_path=(*pair_path, "name"), leaves=(sides[0], sides[1]),
            pod=0,
            multihoming=pair.multihoming or model.spec.multihoming[0], hosts=hosts,
            uplink_speed_gbps=defaults.uplink_speed_gbps or _common_speed(model, spine_model),
            uplinks_per_spine=defaults.uplinks_per_spine,
            peer_speed_gbps=defaults.peer_link_speed_gbps or max(g.speed_gbps for g in model.cage_groups),
            peer_links=defaults.peer_link_links,
            overrides=pair.ports or defaults.ports,
            overrides_path=(*pair_path, "ports") if pair.ports else ("topology", "leaf", "ports"),
        ))
    fabric = ResolvedFabric(
        design=topo.design, tiers=2, planes=(), pods=(spines,), leaves=tuple(leaves), pairs=tuple(pairs), rails=(),
        spine_uplinks=None, leaf_uplinks=None, nic_speed_gbps=0, size=None,
        uplink_path=("topology", "leaf", "uplinks_per_spine"),
    )
    return Resolution(topo.design, tuple(known), fabric, findings)


def _explicit_spines(intent: Intent, topo: Topology, model: SwitchModel) -> tuple[SwitchSlot, ...]:
    spines = topo.spines
    if spines.names is not None:
        return tuple(SwitchSlot(name, Role.SPINE, model, intent.underlay.asn.spine, ("topology", "spines", "names", k))
                     for k, name in enumerate(spines.names))
    return tuple(SwitchSlot(format_name(spines.name_format, n), Role.SPINE, model, intent.underlay.asn.spine,
                            ("topology", "spines", "name_format")) for n in range(1, spines.count + 1))


def _common_speed(leaf: SwitchModel, spine: SwitchModel) -> int:
    """The fastest speed both ends offer; 0 when none."""
    common = set(leaf.speeds_gbps()) & set(spine.speeds_gbps())
    return max(common) if common else 0
