"""Logging in to a remote MCP server and out again, when the person asks (``toolscout mcp login
NAME``, the app's ``/mcp login NAME``): the OAuth flow of :mod:`.oauth` run on one connection of
toolscout's own (:class:`~toolscout.core.mcp.connection.ServerConnection`), which ends connected
(the server's tools listed) or with the reason it did not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio

from ..models import ServerState, ServerStatus, ToolSpec
from .connection import ServerConnection
from .oauth import uses_oauth
from .oauth_redirect import LOGIN_WAIT_S
from .oauth_store import FileTokenStorage, forget
from .server_config import ServerConfig

__all__ = ["LoginError", "log_in", "log_out"]


class LoginError(ValueError):
    """This server cannot be logged in to (not a remote server, or one with a static header)."""


class _Quiet:
    """A connection listener that keeps the tools and says when the connect has settled."""

    def __init__(self) -> None:
        self.tools: list[ToolSpec] = []
        self.settled = anyio.Event()

    def server_status_changed(self, status: ServerStatus) -> None:
        if status.state is not ServerState.CONNECTING:
            self.settled.set()

    def server_tools_changed(self, name: str, tools: list[ToolSpec], instructions: str | None) -> None:
        self.tools = tools

    def server_warning(self, message: str, name: str) -> None:
        pass


async def log_in(
    config: ServerConfig, *, notify: Callable[[str], None] | None = None, wait: float = LOGIN_WAIT_S
) -> ServerStatus:
    """Log in to ``config``'s server: forget its stored tokens (its client registration is kept),
    connect with the interactive OAuth flow (the browser opens; its redirect comes back to a
    loopback listener), store the new tokens (:mod:`.oauth_store`), list the tools, disconnect.

    Args:
        config: a valid http/sse server without an ``Authorization`` header.
        notify: gets the lines to show the person (the URL opened, the host ...).
        wait: bound on the whole login, the person's time in the browser included (s).

    Returns:
        The connection's last status: ``connected`` with its tool count, or ``failed`` with the
        reason (``needs_login`` set when the server still refused).

    Raises:
        LoginError: the server is not one OAuth applies to (the message says why).
    """
    if config.error is not None:
        raise LoginError(f"server {config.name} has an invalid entry: {config.error}")
    if not uses_oauth(config):
        why = (
            "it sends its own Authorization header (remove it from the config to log in with OAuth)"
            if config.transport in ("http", "sse")
            else f"it is a {config.transport} server (only http and sse servers log in)"
        )
        raise LoginError(f"server {config.name} has no login: {why}")
    storage = FileTokenStorage(config.name, config.url)
    if storage.has_login():
        storage.drop_tokens()
    listener = _Quiet()
    connection = ServerConnection(config, connect_timeout=wait, call_timeout=wait, listener=listener)
    connection.interactive_login = True
    connection.login_notify = notify
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        with anyio.move_on_after(wait + 5):
            await listener.settled.wait()
        status = connection.status
        connection.request_stop()
        await connection.finished.wait()
    return status


def log_out(server: str) -> Path | None:
    """Forget ``server``'s login (tokens and client registration). Returns the removed file, or
    None when there was no login. Raises ``OSError`` when it cannot be removed."""
    return forget(server)
