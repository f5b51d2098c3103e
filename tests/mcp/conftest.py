"""Fixtures for the MCP tests (helpers live in ``mcp_helpers``)."""

from __future__ import annotations

import pytest
from mcp_helpers import EventLog


@pytest.fixture
def events() -> EventLog:
    """A fresh event recorder (subscribe it to an engine)."""
    return EventLog()
