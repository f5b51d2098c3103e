"""The gateway brings back an upstream server that went away, when a call needs it.

A client of ``toolscout serve`` cannot reconnect an upstream server, so the gateway does: a call
to a tool of a stdio server that was connected and then disconnected (it exited, crashed or
closed the connection) first reconnects that server, once, bounded by ``mcp.timeout``
(:meth:`Engine.reconnect <toolscout.core.engine.facade.Engine.reconnect>` with ``wait``), then runs. A
call is never sent twice: one the crash cut off is reported as it ended, and only the next call
reconnects. That next call may come the moment the crash is reported, before the disconnect has
reached the engine: the server's state is read as its connection knows it (a connection still
closing is waited for), never from the relayed status alone. A server that goes away after a call
was looked up and permitted (while the permission question was open) is brought back the same
way before the call is sent, through the executor's ``revive`` hook, which the gateway sets.

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

from ..engine.facade import Engine
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

    def __init__(
        self, engine: Engine, *, clock: Callable[[], float] = time.monotonic, retry_after: float = RETRY_AFTER_S
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.retry_after = retry_after
        self._attempts: dict[str, asyncio.Future[ServerStatus]] = {}
        #: server → (clock time, reason) of its last failed attempt
        self._failed: dict[str, tuple[float, str]] = {}

    def _server(self, name: str) -> str | None:
        """The server of tool ``name`` when it is one the gateway may bring back (a valid stdio
        entry), else None."""
        split = split_mcp_name(name)
        server = self.engine.pool.find(split[0]) if split is not None else None
        cfg = self.engine.server_config(server) if server is not None else None
        if server is None or cfg is None or cfg.transport != "stdio" or not self.engine.can_reconnect(server):
            return None
        return server

    async def before_call(self, name: str) -> ToolResult | None:
        """Bring the server of tool ``name`` back if it went away (see the module docstring).

        The server's state is read as the pool's connection knows it, not as last relayed
        (:meth:`ServerPool.caught_up <toolscout.core.mcp.pool.ServerPool.caught_up>`): a call
        made right after the server exited, while its connection is still closing, waits for
        that and then reconnects, instead of finding it "connected" here and "disconnected" at
        the call. A reconnect already in flight is joined; a server still connecting for another
        reason is left to the executor ("still connecting, try again in a moment").

        Returns:
            None: go ahead with the call (the server is up, or nothing here applies). An error
            result: the server is down and the call was not sent.
        """
        server = self._server(name)
        if server is None:
            return None
        status = await self.engine.pool.caught_up(server)
        if status is None:
            return None
        attempt = self._attempts.get(server)
        down = status.state is ServerState.DISCONNECTED
        if attempt is None and not down and not (status.state is ServerState.FAILED and server in self._failed):
            return None  # up, still connecting on its own, or failed at start-up (the executor says so)
        failed = self._failed.get(server)
        if attempt is None and failed is not None and (ago := self.clock() - failed[0]) < self.retry_after:
            return ToolResult.error(
                name,
                ToolErrorKind.SERVER_FAILED,
                (
                    f"Server {server} is down, so {name} was not run: the gateway's attempt to reconnect it "
                    f"{ago:.0f} s ago failed ({failed[1]}). It tries again on a call made after "
                    f"{self.retry_after - ago:.0f} s more; if it stays down, tell the user."
                ),
            )
        if attempt is None:
            attempt = self._attempts[server] = asyncio.ensure_future(self._reconnect(server))
            attempt.add_done_callback(lambda _: self._attempts.pop(server, None))
        status = await asyncio.shield(attempt)  # one caller giving up does not stop the others' attempt
        if status.state is ServerState.CONNECTED:
            return None
        return ToolResult.error(
            name,
            ToolErrorKind.SERVER_FAILED,
            (
                f"Server {server} is down, so {name} was not run: it had disconnected, and the gateway tried to "
                f"reconnect it, which failed ({self._failed[server][1]}). It tries again on a call made after "
                f"{self.retry_after:g} s; if it stays down, tell the user."
            ),
        )

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
