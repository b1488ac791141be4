"""Semantic checks on a schema-valid intent. Each returns findings; none raises."""

from __future__ import annotations

from rocefab.models.checks import addressing, hosts, load_balancing, qos, topology
from rocefab.models.findings import Finding
from rocefab.models.intent import Intent
from rocefab.models.resolve import Resolution, resolve

__all__ = ["check_intent"]


def check_intent(intent: Intent) -> tuple[Resolution, list[Finding]]:
    """Resolve the intent, then check it; the resolution's own findings (unknown models, a fabric that does
    not size) come first, and the checks read the resolved fabric wherever there is one."""
    resolution = resolve(intent)
    findings: list[Finding] = list(resolution.findings)
    for module in (topology, qos, addressing, hosts, load_balancing):
        findings.extend(module.check(intent, resolution))
    return resolution, findings
