"""Fixtures for the TUI tests: hermetic dirs (see ``tests/conftest.py``), no disk caches, the
fixture scenarios (:mod:`tui_scenarios`) importable."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))


@pytest.fixture(autouse=True)
def tui_env(hermetic_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No embedding cache on disk, no provider keys, temp config (``TOOLSCOUT_CONFIG_DIR``)."""
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    return hermetic_env


@pytest.fixture(autouse=True)
def search_clock(fake_clock: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The scoring panel's search timer on a fake clock on which a search takes no time unless
    the test advances it: whether a keystroke's echo waits for its ranking (searches under
    ``HOLD_ECHO_S``) never depends on how busy the machine is."""
    from toolscout.tui.widgets.scoring import ScoringPanel

    clock = type(fake_clock)(tick=0.0)
    monkeypatch.setattr(ScoringPanel, "clock", staticmethod(clock))
    return clock
