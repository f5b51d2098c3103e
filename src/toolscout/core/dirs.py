"""Where toolscout keeps its data: one answer for the session transcripts
(:mod:`toolscout.core.session.transcript`) and the saved full tool results
(:mod:`toolscout.core.calls.result_cap`), kept below both so the engine's side never imports the
session's; and one for its caches (the tool vectors, :mod:`toolscout.core.search.vector_cache`,
and the last known server sizes, :mod:`toolscout.core.engine.server_sizes`)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """The user data directory (``TOOLSCOUT_DATA_DIR`` overrides the platform default)."""
    override = os.environ.get("TOOLSCOUT_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("toolscout"))


#: ``TOOLSCOUT_CACHE_DIR`` values (stripped, any case) that switch the disk caches off.
CACHE_OFF = ("", "0", "off", "none", "false", "no")


def cache_dir() -> Path | None:
    """The folder of toolscout's disk caches, or None when they are off (memory only).

    ``TOOLSCOUT_CACHE_DIR`` unset: the platform's user cache folder. Set to one of
    :data:`CACHE_OFF` (``""``, ``0``, ``off`` …): None. Set to a folder: that folder (``~``
    expanded). A relative path is refused (None): a cache written relative to the current
    folder would scatter ``server-sizes.json`` over every project the app is started in.
    """
    override = os.environ.get("TOOLSCOUT_CACHE_DIR")
    if override is None:
        return Path(platformdirs.user_cache_dir("toolscout"))
    if override.strip().lower() in CACHE_OFF:
        return None
    path = Path(override).expanduser()
    return path if path.is_absolute() else None
