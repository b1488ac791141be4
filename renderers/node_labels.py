"""Kubernetes node labels of the same tree Slurm gets (renderers/slurm_topology.py), for topology-aware schedulers
that read locality from labels (Kueue's topology-aware scheduling, NVIDIA KAI, Run:ai).

The keys are those NVIDIA Topograph writes, `fabric.topograph.run/tier-N`, tier 0 closest to the node
(https://docs.nvidia.com/topograph/v1.1.0/engines/kubernetes.md), so a scheduler set up for Topograph's labels
reads rocefab's unchanged: tier 0 is the node's leaf group (a ToR pair, a leaf or a rail block), then the pod of a
three-tier fabric, then the top tier.
"""

from __future__ import annotations

import re

from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.slurm_topology import SlurmTopologyError, slurm_switches
from rocefab.renderers.yamltext import dump_block

TIER_KEY = "fabric.topograph.run/tier-{n}"
# A label value: at most 63 characters, alphanumerics at both ends, `-`, `_` and `.` between (Kubernetes docs,
# "Labels and Selectors", syntax and character set)
_VALUE = re.compile(r"(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?")


def node_labels(plan: FabricPlan) -> dict[str, dict[str, str]]:
    """Each host's labels, tier 0 first."""
    tree = slurm_switches(plan)
    parent: dict[str, str] = {child: s.name for s in tree for child in s.switches}
    labels: dict[str, dict[str, str]] = {}
    for switch in tree:
        for node in switch.nodes:
            chain, name = [switch.name], switch.name
            while name in parent:
                name = parent[name]
                chain.append(name)
            for value in chain:
                if not _VALUE.fullmatch(value):
                    raise SlurmTopologyError(f"{value!r} is not a valid Kubernetes label value")
            labels[node] = {TIER_KEY.format(n=n): value for n, value in enumerate(chain)}
    return labels


def node_labels_yaml(plan: FabricPlan) -> str:
    source = plan.source
    head = (f"# Kubernetes node labels of fabric {source.fabric}, from {source.intent_file} (sha256 "
            f"{source.intent_sha256[:12]}), rocefab {source.rocefab_version}: Topograph's tier keys, tier 0 the\n"
            "# node's leaf group (ToR pair, leaf or rail block), the last the top tier. Apply each node's labels\n"
            "# with `kubectl label node NODE KEY=VALUE ...` or your node provisioning.\n")
    return head + dump_block({"nodes": node_labels(plan)})
