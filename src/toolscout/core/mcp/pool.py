"""All configured MCP servers: started together, each in its own lifetime task, stopped together.

:meth:`ServerPool.start` returns as soon as a supervisor task is running; every server connects
concurrently under it, so nothing ever waits for the slowest server. The supervisor is an
asyncio task (the CLI's ``asyncio.run`` and Textual both run asyncio) that holds one anyio task
group; :meth:`ServerPool.stop` may therefore be awaited from any task, not only the one that
called ``start``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import anyio

from ..models import ServerState, ServerStatus, ToolSpec
from ..names import sanitize
from .config import ServerConfig

if TYPE_CHECKING:  # .connection imports the MCP SDK (~1 s): loaded when the first server launches
    from .connection import ConnectionListener, ServerConnection

log = logging.getLogger(__name__)

#: Bound on a graceful pool shut-down before remaining sessions are cancelled (s). The SDK's
#: stdio shut-down itself is bounded (2 s grace, then SIGTERM, then SIGKILL).
STOP_TIMEOUT_S = 8.0


class ServerPool:
    """Connections to every configured server, with their states.

    Args:
        configs: servers in display order; entries with ``error`` are reported failed and
            never started.
        connect_timeout: per-server connect bound (s), setting ``mcp.timeout``.
        call_timeout: per-request bound (s), setting ``mcp.callTimeout``.
        listener: receives every state change, tool listing and warning.
    """

    def __init__(self, configs: Iterable[ServerConfig], *, connect_timeout: float, call_timeout: float,
                 listener: ConnectionListener) -> None:
        self.configs: dict[str, ServerConfig] = {c.name: c for c in configs}
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self._listener = listener
        self._connections: dict[str, ServerConnection] = {}
        self._statuses: dict[str, ServerStatus] = {}
        for cfg in self.configs.values():
            transport = cfg.transport if cfg.error is None else "stdio"
            state = ServerState.FAILED if cfg.error else ServerState.CONNECTING
            self._statuses[cfg.name] = ServerStatus(cfg.name, state, error=cfg.error, transport=transport)
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = anyio.Event()
        self._stopping = anyio.Event()
        self._done = anyio.Event()

    # -- listener (called by connections in their lifetime tasks) ---------------------------
    def server_status_changed(self, status: ServerStatus) -> None:
        """Record and forward a state change (wakes :meth:`wait_settled`)."""
        conn = self._connections.get(status.name)
        if conn is not None and conn.status is not status:
            return  # a superseded connection (before a reconnect) reporting late
        self._statuses[status.name] = status
        self._changed.set()
        self._changed = anyio.Event()
        self._listener.server_status_changed(status)

    def server_tools_changed(self, name: str, tools: list[ToolSpec], instructions: str | None) -> None:
        """Forward a tool listing."""
        self._listener.server_tools_changed(name, tools, instructions)

    def server_warning(self, message: str, name: str) -> None:
        """Forward a warning."""
        self._listener.server_warning(message, name)

    # -- queries ----------------------------------------------------------------------------
    def statuses(self) -> list[ServerStatus]:
        """Every configured server's status, in configuration order."""
        return list(self._statuses.values())

    def status(self, name: str) -> ServerStatus | None:
        """The status of ``name`` (configuration name), or None."""
        return self._statuses.get(name)

    def connection(self, name: str) -> ServerConnection | None:
        """The current connection of ``name``, or None."""
        return self._connections.get(name)

    def find(self, server_part: str) -> str | None:
        """The configured server whose name is ``server_part`` as written or as sanitised in
        canonical tool names (``mcp__<server>__...``), or None."""
        if server_part in self.configs:
            return server_part
        for name in self.configs:
            if sanitize(name) == server_part:
                return name
        return None

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the supervisor and every valid server in the background; returns at once."""
        if self._task is not None:
            return
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name="toolscout-mcp-pool")
        with anyio.fail_after(10):
            await self._ready.wait()

    async def _supervise(self) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                for cfg in self.configs.values():
                    if cfg.error is None:
                        self._launch(cfg)
                self._ready.set()
                await self._stopping.wait()
                for conn in list(self._connections.values()):
                    conn.request_stop()
        except Exception:  # lifetime tasks never raise; this is a last resort
            log.exception("MCP pool supervisor failed")
        finally:
            self._tg = None
            self._ready.set()
            self._done.set()

    def _launch(self, cfg: ServerConfig) -> ServerConnection:
        from .connection import ServerConnection

        assert self._tg is not None
        conn = ServerConnection(cfg, connect_timeout=self.connect_timeout, call_timeout=self.call_timeout,
                                listener=self)
        self._connections[cfg.name] = conn
        self._statuses[cfg.name] = conn.status
        self._tg.start_soon(conn.run, name=f"mcp:{cfg.name}")
        return conn

    async def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until no server is connecting; True if settled, False on ``timeout`` (s)."""
        with anyio.move_on_after(math_inf(timeout)):
            while any(s.state is ServerState.CONNECTING for s in self._statuses.values()):
                await self._changed.wait()
            return True
        return False

    async def disconnect(self, name: str) -> None:
        """Close one server's session and wait for its lifetime task to end (bounded)."""
        conn = self._connections.get(name)
        if conn is None:
            return
        conn.request_stop()
        with anyio.move_on_after(STOP_TIMEOUT_S):
            await conn.finished.wait()

    async def reconnect(self, name: str) -> ServerConnection:
        """Close ``name`` if open and start a fresh connection; returns at once (see its status).

        Raises:
            KeyError: ``name`` is not configured. RuntimeError: the pool is not running.
        """
        cfg = self.configs[name]
        if self._tg is None:
            raise RuntimeError("the MCP server pool is not running")
        await self.disconnect(name)
        if cfg.error is not None:
            raise RuntimeError(f"server {name} cannot start: {cfg.error}")
        return self._launch(cfg)

    async def stop(self) -> None:
        """Close every session and end every lifetime task; safe to call twice."""
        if self._task is None:
            return
        self._stopping.set()
        with anyio.move_on_after(STOP_TIMEOUT_S):
            await self._done.wait()
        if not self._done.is_set() and self._tg is not None:
            self._tg.cancel_scope.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
        self._task = None


def math_inf(timeout: float | None) -> float:
    """``timeout`` or infinity for None (anyio's ``move_on_after`` wants a number)."""
    return float("inf") if timeout is None else timeout
