"""Shared base for every intent model: frozen, strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class IntentModel(BaseModel):
    """Base of all intent sections.

    Frozen so a loaded intent cannot drift between checks and planning; unknown keys are rejected
    because a misspelt key that is silently ignored is exactly how a fabric ends up half-lossless.
    """

    # No string field needs more than a kilobyte; a bound here keeps a hostile value from costing memory
    # in every message and copy that carries it.
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True, str_max_length=1024)
