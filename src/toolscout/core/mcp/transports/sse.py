"""The SSE transport (MCP's HTTP+SSE of 2024-11-05): an event stream from ``config.url`` and
POSTs to the endpoint it announces (the SDK's ``sse_client``, its default timeouts)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.client import Transport
from mcp.client.sse import sse_client

from ..oauth import ServerAuth
from ..server_config import ServerConfig


def open_sse(config: ServerConfig, auth: ServerAuth | None = None) -> Transport:
    """Connect to ``config.url`` on entry, sending ``config.headers`` with every request, and
    the OAuth token of ``auth`` (:mod:`..oauth`) when given.

    Returns:
        The SDK's ``sse_client`` context (see :func:`~toolscout.core.mcp.transports.open_transport`);
        entering it fails with the HTTP client's error when the endpoint cannot be reached.
    """
    if auth is None:
        return sse_client(config.url, headers=config.headers or None)
    return _with_auth(config, auth)


@asynccontextmanager
async def _with_auth(config: ServerConfig, auth: ServerAuth) -> AsyncIterator[Any]:
    async with (
        auth.opened() as httpx_auth,
        sse_client(config.url, headers=config.headers or None, auth=httpx_auth) as s,
    ):
        yield s
