"""Fixtures for session tests: a real Engine with built-ins, extra deferred tools, fake model APIs.

Every wait is bounded; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from session_helpers import make_engine  # noqa: E402 - needs the path above


@pytest.fixture
def engine(tmp_path: Path) -> Any:
    """A real Engine with every built-in plus the test's deferred tools, cwd ``tmp_path``."""
    return make_engine(tmp_path)
