"""The intent schema, its loader and its semantic checks. Imports nothing else of rocefab's."""

from models.checks import check_intent
from models.findings import Finding, Severity
from models.intent import Intent
from models.loader import IntentLoadError, LoadedIntent, load_intent

__all__ = ["Finding", "Intent", "IntentLoadError", "LoadedIntent", "Severity", "check_intent", "load_intent"]
