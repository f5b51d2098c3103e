"""The gateway brings back an upstream server that went away, when a call needs it.

A client of ``toolscout serve`` cannot reconnect an upstream server, so the gateway does: a call
to a tool of a stdio server that was connected and then disconnected (it exited, crashed or
closed the connection) first reconnects that server, once, bounded by ``mcp.timeout``
(:meth:`Engine.reconnect <toolscout.core.engine.Engine.reconnect>` with ``wait``), then runs. A
call is never sent twice: one the crash cut off is reported as it ended, and only the next call
reconnects.

No storm: one attempt per server at a time (calls arriving meanwhile wait for that attempt), and
after a failed attempt none for :data:`RETRY_AFTER_S`; calls in between are answered at once with
an error that says the server is down and what the gateway tried, never advice the client cannot
follow. Servers that failed to start, invalid or unapproved entries and other transports are
left as they are (the executor's error says why).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ..engine import Engine
from ..models import ServerState, ServerStatus, ToolErrorKind, ToolResult
from ..names import split_mcp_name

#: Seconds after a failed reconnect attempt during which calls to that server's tools do not
#: trigger another one.
RETRY_AFTER_S = 30.0


class Reviver:
    """Reconnects upstream servers for the calls that need them (one gateway, every client).

    Args:
        engine: the gateway's engine.
        clock: seconds on a monotonic clock (tests pass a fake one).
        retry_after: :data:`RETRY_AFTER_S` unless told otherwise.
    """

    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.monotonic,
                 retry_after: float = RETRY_AFTER_S) -> None:
        self.engine = engine
        self.clock = clock
        self.retry_after = retry_after
        self._attempts: dict[str, asyncio.Future[ServerStatus]] = {}
        #: server → (clock time, reason) of its last failed attempt
        self._failed: dict[str, tuple[float, str]] = {}

    def _revivable(self, name: str) -> str | None:
        """The server of tool ``name`` when the gateway should bring it back first, else None."""
        split = split_mcp_name(name)
        server = self.engine.pool.find(split[0]) if split is not None else None
        status = self.engine.pool.status(server) if server is not None else None
        cfg = self.engine.server_config(server) if server is not None else None
        if server is None or status is None or cfg is None or cfg.transport != "stdio" \
                or not self.engine.can_reconnect(server):
            return None
        down = status.state is ServerState.DISCONNECTED
        return status.name if down or (status.state is ServerState.FAILED and status.name in self._failed) else None

    async def before_call(self, name: str) -> ToolResult | None:
        """Bring the server of tool ``name`` back if it went away (see the module docstring).

        Returns:
            None: go ahead with the call (the server is up, or nothing here applies). An error
            result: the server is down and the call was not sent.
        """
        server = self._revivable(name)
        if server is None:
            return None
        failed = self._failed.get(server)
        if failed is not None and (ago := self.clock() - failed[0]) < self.retry_after:
            return ToolResult.error(name, ToolErrorKind.SERVER_FAILED, (
                f"Server {server} is down, so {name} was not run: the gateway's attempt to reconnect it "
                f"{ago:.0f} s ago failed ({failed[1]}). It tries again on a call made after "
                f"{self.retry_after - ago:.0f} s more; if it stays down, tell the user."))
        attempt = self._attempts.get(server)
        if attempt is None:
            attempt = self._attempts[server] = asyncio.ensure_future(self._reconnect(server))
            attempt.add_done_callback(lambda _: self._attempts.pop(server, None))
        status = await asyncio.shield(attempt)  # one caller giving up does not stop the others' attempt
        if status.state is ServerState.CONNECTED:
            return None
        return ToolResult.error(name, ToolErrorKind.SERVER_FAILED, (
            f"Server {server} is down, so {name} was not run: it had disconnected, and the gateway tried to "
            f"reconnect it, which failed ({self._failed[server][1]}). It tries again on a call made after "
            f"{self.retry_after:g} s; if it stays down, tell the user."))

    async def _reconnect(self, server: str) -> ServerStatus:
        try:
            status = await self.engine.reconnect(server, wait=True)
        except (KeyError, RuntimeError) as exc:  # the pool stopped meanwhile
            status = ServerStatus(server, ServerState.FAILED, error=str(exc))
        if status.state is ServerState.CONNECTED:
            self._failed.pop(server, None)
        else:
            why = status.error or f"still {status.state.value} after {self.engine.pool.connect_timeout:g} s"
            self._failed[server] = (self.clock(), why)
        return status
