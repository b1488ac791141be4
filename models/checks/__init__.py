"""Semantic checks on a schema-valid intent. Each returns findings; none raises."""

from __future__ import annotations

from rocefab.models.checks import addressing, clos, hosts, qos, topology
from rocefab.models.findings import Finding
from rocefab.models.intent import Intent

__all__ = ["check_intent"]


def check_intent(intent: Intent) -> list[Finding]:
    findings: list[Finding] = []
    # Topology first: the other checks skip models it has already reported as unknown.
    for module in (topology, clos, qos, addressing, hosts):
        findings.extend(module.check(intent))
    return findings
