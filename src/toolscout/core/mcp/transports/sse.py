"""The SSE transport (MCP's HTTP+SSE of 2024-11-05): an event stream from ``config.url`` and
POSTs to the endpoint it announces (the SDK's ``sse_client``, its default timeouts)."""

from __future__ import annotations

from mcp.client import Transport
from mcp.client.sse import sse_client

from ..server_config import ServerConfig


def open_sse(config: ServerConfig) -> Transport:
    """Connect to ``config.url`` on entry, sending ``config.headers`` with every request.

    Returns:
        The SDK's ``sse_client`` context (see :func:`~toolscout.core.mcp.transports.open_transport`);
        entering it fails with the HTTP client's error when the endpoint cannot be reached.
    """
    return sse_client(config.url, headers=config.headers or None)
