"""The streamable HTTP transport (MCP 2025-03-26 and later): JSON-RPC POSTed to ``config.url``,
answers as JSON or as an event stream (the SDK's ``streamable_http_client``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client

from ..server_config import ServerConfig

#: Bound on connecting and on each write (s), and on waiting for the next byte of an answer (s):
#: the SDK's defaults for MCP over HTTP (a tool call may stream for minutes).
TIMEOUT_S = 30.0
READ_TIMEOUT_S = 300.0


def open_streamable_http(config: ServerConfig) -> Transport:
    """An HTTP client sending ``config.headers`` with every request, and the SDK's transport over it;
    both are closed on exit (the SDK ends the MCP session with a DELETE first).

    Returns:
        An async context manager yielding ``(read_stream, write_stream)`` (see
        :func:`~toolscout.core.mcp.transports.open_transport`). Nothing is sent on entry:
        an unreachable endpoint fails the first request (``initialize``).
    """
    return _streamable_http(config.url, config.headers)


@asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    # Any: the SDK names the stream pair's type only in a private module (mcp.client._transport)
    timeout = httpx2.Timeout(TIMEOUT_S, read=READ_TIMEOUT_S)
    async with (httpx2.AsyncClient(headers=headers or None, timeout=timeout) as http,
                streamable_http_client(url, http_client=http) as streams):
        yield streams
