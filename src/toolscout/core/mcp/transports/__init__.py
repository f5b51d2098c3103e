"""Opening an MCP server's transport: one module per kind, as the SDK has them
(``mcp.client.stdio``, ``.sse``, ``.streamable_http``), behind one :func:`open_transport`.

A transport is the SDK's: an async context manager that, on entry, starts the server's process
(:mod:`.stdio`) or its HTTP connection (:mod:`.sse`, :mod:`.streamable_http`) and yields the
``(read, write)`` pair of JSON-RPC message streams, and on exit closes them and stops the process.
It must be entered and exited by the same task (anyio cancel scopes), so
:class:`~toolscout.core.mcp.connection.ServerConnection` opens it inside its lifetime task, wraps
the read stream (:mod:`..wire`) and hands the pair to the SDK's ``Client``. Which command a stdio
server runs (directly, or through the shared-session launcher: :mod:`..shared_sessions`) is the
connection's choice; a transport runs the command its configuration names.

In-process servers (``transport="memory"``) have no transport: the SDK's ``Client`` takes the
server object itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from mcp.client import Transport

from ..oauth import ServerAuth
from ..server_config import ServerConfig
from .sse import open_sse
from .stdio import open_stdio
from .streamable_http import open_streamable_http

__all__ = ["open_transport"]


def open_transport(
    config: ServerConfig,
    *,
    errlog: IO[str] | None = None,
    on_session_gone: Callable[[], None] | None = None,
    auth: ServerAuth | None = None,
) -> Transport:
    """The SDK transport for ``config``, not yet entered (nothing starts before ``async with``).

    Args:
        config: a valid server configuration (``config.error`` is None) whose ``transport`` is
            ``stdio`` (``command``, ``args``, ``env``, ``cwd``), ``sse`` or ``http``
            (streamable HTTP: ``url``, ``headers``).
        errlog: where a stdio server's stderr goes (a text file; default: this process's
            stderr). Unused by sse and http.
        on_session_gone: http only: called when the server answers HTTP 404 to a request that
            carried the session id (the session is gone; see :mod:`.streamable_http`).
        auth: sse and http: the server's OAuth (:class:`~toolscout.core.mcp.oauth.ServerAuth`),
            or None to send only ``config.headers``.

    Returns:
        An async context manager yielding ``(read_stream, write_stream)``: the read stream
        carries the server's ``SessionMessage`` objects (or the ``Exception`` for a line the SDK
        could not parse), the write stream takes ours.

    Raises:
        ValueError: ``config.transport`` is ``memory`` or unknown (there is nothing to open).

    Entering the context raises what the transport raises: stdio, ``OSError`` when the command
    cannot be started; sse and http, the HTTP client's errors (``httpx2``, possibly inside an
    ``ExceptionGroup``) when the endpoint cannot be reached, at entry (sse) or with the first
    request (http, which connects lazily).
    """
    if config.transport == "stdio":
        return open_stdio(config, errlog=errlog)
    if config.transport == "sse":
        return open_sse(config, auth)
    if config.transport == "http":
        return open_streamable_http(config, on_session_gone, auth)
    raise ValueError(
        f"server {config.name}: transport {config.transport!r} has nothing to open "
        "(expected stdio, sse or http; an in-process server is passed to Client as is)"
    )
