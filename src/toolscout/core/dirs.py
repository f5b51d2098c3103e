"""Where toolscout keeps its data: one answer for the session transcripts
(:mod:`toolscout.core.session.transcript`) and the saved full tool results
(:mod:`toolscout.core.calls.result_cap`), kept below both so the engine's side never imports the session's."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """The user data directory (``TOOLSCOUT_DATA_DIR`` overrides the platform default)."""
    override = os.environ.get("TOOLSCOUT_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("toolscout"))
