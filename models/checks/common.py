"""Helpers shared by the check modules."""

from __future__ import annotations

from rocefab.models.catalogue import SwitchModel
from rocefab.models.findings import Finding, Path, Severity
from rocefab.models.resolve import Resolution


def leaf_models_in_use(resolution: Resolution) -> list[SwitchModel]:
    """The models the intent names for leaves (known ones only)."""
    return [m for path, m in resolution.models if path[1] == "leaf_pairs" or path[-1] == "leaf"]


def error(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.ERROR, path, message, hint)


def warning(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.WARNING, path, message, hint)


def info(code: str, path: Path, message: str, hint: str = "") -> Finding:
    return Finding(code, Severity.INFO, path, message, hint)
