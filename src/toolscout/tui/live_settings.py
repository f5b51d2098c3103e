"""Applying changed settings to a running engine and session (the settings screen's "live").

The core objects read most settings when they need them, but a few copy values at construction
(the prefetcher's floor and count, the session's provider). This module updates those copies so a
change takes effect on the next search, recommendation or model request without a restart.
"""

from __future__ import annotations

import logging
from typing import Any

from ..core.settings import Settings

log = logging.getLogger(__name__)


def apply_live(settings: Settings, engine: Any, session: Any = None) -> list[str]:
    """Point ``engine`` and ``session`` at ``settings``.

    Returns:
        Problems worth telling the person (e.g. a provider that cannot be created yet); the
        change is still saved.
    """
    problems: list[str] = []
    engine.settings = settings
    search = getattr(engine, "search", None)
    if search is not None and hasattr(search, "settings"):
        search.settings = settings
    catalog = getattr(engine, "catalog", None)
    if catalog is not None and hasattr(catalog, "set_always_load"):
        catalog.set_always_load(settings["toolSearch.alwaysLoad"])
    if session is None:
        return problems
    old = getattr(session, "settings", None)
    session.settings = settings
    prefetch = getattr(session, "prefetch", None)
    if prefetch is not None:
        prefetch.enabled = bool(settings["recommendations.enabled"])
        prefetch.min_score = float(settings["recommendations.minScore"])
        prefetch.max = int(settings["recommendations.max"])
        prefetch.on_first_message = bool(settings["recommendations.onFirstMessage"])
    if getattr(session, "projection", None) is None and hasattr(session, "strategy"):
        session.strategy = settings["session.strategy"]  # fixed once the first request is built
    changed_provider = old is None or any(
        old.get(k) != settings.get(k) for k in ("provider.name", "provider.model", "provider.baseUrl"))
    if changed_provider and hasattr(session, "provider"):
        try:
            from ..core.session.providers import create_provider

            session.provider = create_provider(settings)
        except Exception as exc:
            problems.append(str(exc))
    return problems
