"""The streamable HTTP transport (MCP 2025-03-26 and later): JSON-RPC POSTed to ``config.url``,
answers as JSON or as an event stream (the SDK's ``streamable_http_client``).

A server that restarted (or expired the session) answers HTTP 404 to a request carrying the old
``Mcp-Session-Id``; the SDK turns that into a JSON-RPC error for the request, which does not say
it was a 404. The transport tells its opener instead (``on_session_gone``), so the connection can
start a new session and send the request once more (MCP spec, basic/transports, "Session
Management": the client MUST then start a new session with a new ``InitializeRequest``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client import Transport
from mcp.client.streamable_http import MCP_SESSION_ID, streamable_http_client

from ..oauth import ServerAuth
from ..server_config import ServerConfig

#: Bound on connecting and on each write (s), and on waiting for the next byte of an answer (s):
#: the SDK's defaults for MCP over HTTP (a tool call may stream for minutes).
TIMEOUT_S = 30.0
READ_TIMEOUT_S = 300.0


def open_streamable_http(
    config: ServerConfig, on_session_gone: Callable[[], None] | None = None, auth: ServerAuth | None = None
) -> Transport:
    """An HTTP client sending ``config.headers`` with every request, and the SDK's transport over it;
    both are closed on exit (the SDK ends the MCP session with a DELETE first).

    Args:
        config: a valid ``http`` server configuration (``url``, ``headers``).
        on_session_gone: called (on the transport's event loop, before the SDK reports the
            request's error) each time the server answers HTTP 404 to a POST (a JSON-RPC message)
            that carried an ``Mcp-Session-Id``: the session is gone.
        auth: the server's OAuth (:mod:`..oauth`), or None for none (a static header, or none needed).

    Returns:
        An async context manager yielding ``(read_stream, write_stream)`` (see
        :func:`~toolscout.core.mcp.transports.open_transport`). Nothing is sent on entry:
        an unreachable endpoint fails the first request (``initialize``).
    """
    return _streamable_http(config.url, config.headers, on_session_gone, auth)


@asynccontextmanager
async def _streamable_http(
    url: str, headers: dict[str, str], on_session_gone: Callable[[], None] | None, auth: ServerAuth | None
) -> AsyncIterator[Any]:
    # Any: the SDK names the stream pair's type only in a private module (mcp.client._transport)
    timeout = httpx2.Timeout(TIMEOUT_S, read=READ_TIMEOUT_S)

    async def watch(response: httpx2.Response) -> None:
        # A POST only: a 404 to the optional GET event stream (which some servers give instead of
        # the spec's 405) or to the closing DELETE says nothing about the requests of the session.
        request = response.request
        if (
            response.status_code == 404
            and request.method == "POST"
            and MCP_SESSION_ID in request.headers
            and on_session_gone is not None
        ):
            on_session_gone()

    async with (
        contextlib.AsyncExitStack() as stack,
        httpx2.AsyncClient(
            headers=headers or None,
            timeout=timeout,
            event_hooks={"response": [watch]},
            auth=None if auth is None else await stack.enter_async_context(auth.opened()),
        ) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
