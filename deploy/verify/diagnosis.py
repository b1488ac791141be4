"""One diagnosis, as doctor prints it: a code, where, the evidence, what the training job sees and the fix. Both the
per-row rules (doctor.py) and the fabric-wide ones (doctor_fabric.py) make these."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Diagnosis:
    code: str
    device: str
    port: str
    title: str
    evidence: tuple[str, ...]
    symptom: str
    fix: str
