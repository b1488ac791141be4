"""The intent schema, its loader and its semantic checks. Imports nothing else of rocefab's."""

from rocefab.models.checks import check_intent
from rocefab.models.findings import Finding, Severity
from rocefab.models.intent import Intent
from rocefab.models.loader import IntentLoadError, LoadedIntent, load_intent

__all__ = ["Finding", "Intent", "IntentLoadError", "LoadedIntent", "Severity", "check_intent", "load_intent"]
