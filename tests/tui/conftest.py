"""Fixtures for the TUI tests: hermetic dirs (see ``tests/conftest.py``), no disk caches, the
fixture scenarios (:mod:`tui_scenarios`) importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))


@pytest.fixture(autouse=True)
def tui_env(hermetic_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No embedding cache on disk, no provider keys, temp config (``TOOLSCOUT_CONFIG_DIR``)."""
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    return hermetic_env
