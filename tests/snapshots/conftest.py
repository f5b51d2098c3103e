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
    """No embedding cache on disk; tool-call durations (wall-clock time) shown as a constant; a
    frozen (always visible) text cursor, so a slow machine does not catch it mid-blink."""
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    monkeypatch.setenv("HOME", str(hermetic_env))  # paths under the temp home show as ~/...
    monkeypatch.setattr("textual.app.App.NOTIFICATION_TIMEOUT", 600)  # toasts outlive a slow run
    monkeypatch.setattr("textual.widgets.Input._toggle_cursor", lambda self: None)
    monkeypatch.setattr("textual.widgets.TextArea._toggle_cursor_blink_visible", lambda self: None)
    monkeypatch.setattr("toolscout.tui.widgets.chat.format_duration", lambda ms: " · 12 ms" if ms else "")
    return hermetic_env
