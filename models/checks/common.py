"""Helpers shared by the check modules."""

from __future__ import annotations

from models.catalogue import SwitchModel, lookup_model
from models.findings import Finding, Path, Severity
from models.intent import Intent


def models_in_use(intent: Intent) -> list[tuple[Path, SwitchModel]]:
    """Every catalogue model the intent names, with the path naming it; unknown names are skipped."""
    found: list[tuple[Path, SwitchModel]] = []
    named: list[tuple[Path, str]] = [(("topology", "spines", "model"), intent.topology.spines.model)]
    named += [(("topology", "leaf_pairs", i, "model"), p.model) for i, p in enumerate(intent.topology.leaf_pairs)]
    for path, name in named:
        model = lookup_model(name)
        if model is not None:
            found.append((path, model))
    return found


def error(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.ERROR, path, message, hint)


def warning(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.WARNING, path, message, hint)


def info(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.INFO, path, message, hint)
