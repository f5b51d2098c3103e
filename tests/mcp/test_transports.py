"""What :func:`toolscout.core.mcp.transports.open_transport` opens and refuses (the transports
themselves run against real servers: stdio in test_connection.py, HTTP and SSE in test_http.py)."""

from __future__ import annotations

import mcp.client.stdio as sdk_stdio
import pytest
from mcp_helpers import fixture_module

from toolscout.core.mcp import connection  # noqa: F401  (the connection's import sets the SDK's grace)
from toolscout.core.mcp.server_config import ServerConfig
from toolscout.core.mcp.transports import open_transport
from toolscout.core.mcp.transports.stdio import STOP_GRACE_S


def test_in_process_and_unknown_servers_have_no_transport():
    memory = ServerConfig.memory("inproc", fixture_module("normal").build("inproc"))
    with pytest.raises(ValueError, match=r"server inproc: transport 'memory' has nothing to open"):
        open_transport(memory)
    with pytest.raises(ValueError, match=r"transport 'carrier-pigeon'"):
        open_transport(ServerConfig("odd", transport="carrier-pigeon"))


def test_stdio_servers_stop_within_the_short_grace():
    """The SDK waits 2 s for a server to exit after stdin closes and 2 s after SIGTERM; a
    connection shortens both to :data:`STOP_GRACE_S` (issue 12: quit < 2 s with 47 servers)."""
    assert STOP_GRACE_S < 1
    assert sdk_stdio.PROCESS_TERMINATION_TIMEOUT == STOP_GRACE_S
    assert sdk_stdio.FORCE_KILL_TIMEOUT == STOP_GRACE_S
