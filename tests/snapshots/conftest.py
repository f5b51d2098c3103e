"""Snapshot fixtures: hermetic dirs, no disk caches, fixed durations, importable scenarios."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))


@pytest.fixture(autouse=True)
def snapshot_env(hermetic_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No embedding cache on disk; tool-call durations (wall-clock time) shown as a constant."""
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    monkeypatch.setattr("toolscout.tui.widgets.chat.format_duration", lambda ms: " · 12 ms" if ms else "")
    return hermetic_env
