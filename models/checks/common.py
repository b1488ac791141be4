"""Helpers shared by the check modules."""

from __future__ import annotations

from dataclasses import dataclass

from rocefab.models.catalogue import SwitchModel, lookup_model
from rocefab.models.findings import Finding, Path, Severity
from rocefab.models.intent import Clos, Intent
from rocefab.models.sizing import SizingError, size_clos


def models_in_use(intent: Intent) -> list[tuple[Path, SwitchModel]]:
    """Every catalogue model the intent names, with the path naming it; unknown names are skipped."""
    topo = intent.topology
    named: list[tuple[Path, str]]
    if isinstance(topo, Clos):
        named = [(("topology", "models", "leaf"), topo.models.leaf),
                 (("topology", "models", "spine"), topo.models.spine)]
        if topo.models.superspine:
            named.append((("topology", "models", "superspine"), topo.models.superspine))
    else:
        named = [(("topology", "spines", "model"), topo.spines.model)]
        named += [(("topology", "leaf_pairs", i, "model"), p.model) for i, p in enumerate(topo.leaf_pairs)]
    found: list[tuple[Path, SwitchModel]] = []
    for path, name in named:
        model = lookup_model(name)
        if model is not None:
            found.append((path, model))
    return found


def leaf_models_in_use(intent: Intent) -> list[SwitchModel]:
    return [m for path, m in models_in_use(intent) if path[1] == "leaf_pairs" or path[-1] == "leaf"]


@dataclass(frozen=True)
class Counts:
    switches: int
    leaf_pairs: int
    uses_vlans: bool  # ToR dual-homed designs carry training VLANs and peer links


def fabric_counts(intent: Intent) -> Counts | None:
    """How many switches and leaf pairs the intent asks for; None when a sized fabric does not size."""
    topo = intent.topology
    if isinstance(topo, Clos):
        try:
            size = size_clos(intent)
        except SizingError:
            return None
        return Counts(size.leaves + size.spines + size.superspines, size.pairs, topo.design == "tor-dual-homed")
    return Counts(topo.spines.count + 2 * len(topo.leaf_pairs), len(topo.leaf_pairs), True)


def error(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.ERROR, path, message, hint)


def warning(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.WARNING, path, message, hint)


def info(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.INFO, path, message, hint)
