"""Fixtures for the TUI tests: hermetic dirs (see ``tests/conftest.py``), no disk caches, the
fixture scenarios importable, and a plain-text screen dump for assertions."""

from __future__ import annotations

import io
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


def screen_text(app: Any) -> str:
    """The current screen (with the screens under a modal) as plain text, one line per row."""
    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text(styles=False)
