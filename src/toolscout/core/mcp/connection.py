"""One MCP server connection, owned from open to close by a single lifetime task.

Why one task: the SDK's ``Client`` enters anyio task groups and cancel scopes when it opens, and
anyio requires a cancel scope to be exited by the task that entered it. Opening a client in one
task and closing it in another fails with "cancel scope in a different task". So
:meth:`ServerConnection.run` opens the client, lists tools, serves until asked to stop (or the
server goes away), and closes the client, all in the same task. Other tasks only *use* the open
client (``tools/call``, ``resources/read``), which the SDK supports from any task. The transport
under the client (stdio, SSE, streamable HTTP) comes from :func:`.transports.open_transport`; the
connection chooses only the command a stdio server runs (through the shared-session launcher or
not: :mod:`.shared_sessions`).

The handshake is the ``initialize`` one (``mode="legacy"``): the servers in the wild negotiate
2024-11-05 … 2025-11-25, ``instructions`` come from ``initialize``, and tool changes arrive as
``notifications/tools/list_changed`` (the 2026-07-28 ``subscriptions/listen`` replacement is not
used here).

A streamable HTTP server that restarted (or expired the session) answers HTTP 404 to the session's
requests: the session is gone. The request that met the 404 has the lifetime task start one new
session (``initialize`` again, re-list) and is sent once more; a second 404 right after is an
error, never a loop (MCP spec, basic/transports, "Session Management").
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import IO, Any, Protocol, TypeVar

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from toolscout import __version__

from ..models import ServerState, ServerStatus, ToolSpec
from .elicitation import ElicitationRoutes, Elicitor
from .listing import ListingError, list_tools_leniently
from .oauth import ServerAuth, uses_oauth
from .priority import LOW_NICE, lower_new_children
from .progress import ProgressRoute
from .server_config import ServerConfig
from .shared_sessions import ServerLauncher
from .transports import open_transport
from .transports.stdio_lines import MessageTooLong
from .wire import GuardedStream, quiet_sdk_parse_errors

log = logging.getLogger(__name__)
quiet_sdk_parse_errors()  # unparsable server output is reported once per server (see .wire)

#: Quiet period that ends a burst of ``list_changed`` notifications (s).
DEBOUNCE_S = 0.05
#: Longest a burst may postpone the re-list (s).
DEBOUNCE_MAX_S = 1.0
#: Server notifications a connection hands to :attr:`ServerConnection.on_notification`.
PASSED_NOTIFICATIONS = (
    types.ResourceUpdatedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
)
CLIENT_INFO = types.Implementation(name="toolscout", version=__version__)
#: What starting a new session after an HTTP 404 is called in errors.
RENEWAL = "initialize of a new session (the server answered HTTP 404 for the old one: it restarted or expired it)"
#: Beyond the connect timeout, how long a request waits for a new session to start (closing the
#: old one first) (s); the lifetime task's own bounds end the wait sooner.
RENEW_GRACE_S = 5.0
_T = TypeVar("_T")


class ConnectionListener(Protocol):
    """What a connection reports to (the pool implements it and forwards to the engine)."""

    def server_status_changed(self, status: ServerStatus) -> None:
        """The connection's state changed."""

    def server_tools_changed(self, name: str, tools: list[ToolSpec], instructions: str | None) -> None:
        """A fresh, complete tool listing (on connect and after each ``list_changed``)."""

    def server_warning(self, message: str, name: str) -> None:
        """Something went wrong that did not stop the connection (a pagination loop ...)."""


class ServerUnavailable(Exception):
    """The server cannot take a request now; ``status`` says why (connecting, failed ...)."""

    def __init__(self, status: ServerStatus) -> None:
        super().__init__(f"server {status.name} is {status.state.value}")
        self.status = status


@asynccontextmanager
async def _guarded(inner: AbstractAsyncContextManager[Any], owner: ServerConnection) -> AsyncIterator[Any]:
    session = owner.sessions
    async with inner as (read, write):
        if owner.low_priority and not owner.shared_session:  # the process has just started (mcp.serverPriority)
            lower_new_children()
        owner.guard = GuardedStream(read, lambda: owner._on_eof(session), owner._on_noise)
        yield owner.guard, write


class ServerConnection:
    """One configured server: its lifetime task, state, tools and request methods.

    Args:
        config: the server configuration (must be valid: ``config.error`` is None).
        connect_timeout: bound on start + ``initialize`` + the first full ``tools/list`` (s).
        call_timeout: bound on each re-list after ``list_changed`` (s).
        listener: receives state changes, tool listings and warnings.
    """

    def __init__(
        self, config: ServerConfig, *, connect_timeout: float, call_timeout: float, listener: ConnectionListener
    ) -> None:
        self.config = config
        self.name = config.name
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self._listener = listener
        self.status = ServerStatus(config.name, ServerState.CONNECTING, transport=config.transport)
        self.finished = anyio.Event()
        self.relists = 0
        #: run a stdio server at a lower CPU priority than the app (setting ``mcp.serverPriority``)
        self.low_priority = False
        #: the pool's launcher: a stdio server starts in its session (setting ``mcp.serverSessions``)
        self.launcher: ServerLauncher | None = None
        #: True once the server process was started through :attr:`launcher`
        self.shared_session = False
        #: the read-stream guard of the open transport (counts stray output lines), or None
        self.guard: GuardedStream | None = None
        self._client: Client | None = None
        self._scope: anyio.CancelScope | None = None
        self._wake = anyio.Event()
        self._dirty = anyio.Event()
        self._stop_requested = False
        self._eof = False
        self._stage = "start-up"
        self._noise: str | None = None
        self._listing_warned: set[str] = set()
        #: sessions opened so far (the current one's number); a new one follows an HTTP 404
        self.sessions = 0
        #: the sessions the server answered HTTP 404 for (gone)
        self._gone: set[int] = set()
        #: set while a new session is being started; set (and dropped) when that has ended
        self._renewing: anyio.Event | None = None
        self._connected = False  # a session was open once
        #: where the server's questions during a call go (``toolscout serve``); None: not asked
        self.elicitation: ElicitationRoutes | None = None
        #: a login the person asked for: a 401 starts the OAuth flow (:mod:`.oauth`); the
        #: lines to show them go to :attr:`login_notify`
        self.interactive_login = False
        self.login_notify: Callable[[str], None] | None = None
        #: the current session's OAuth (http/sse without an Authorization header), or None
        self.auth: ServerAuth | None = None
        #: ``on_notification(server, notification)`` for the resource and prompt change
        #: notifications the server sends (``toolscout serve`` passes them on); None: dropped
        self.on_notification: Callable[[str, Any], None] | None = None

    # -- lifetime ---------------------------------------------------------------------------
    async def run(self) -> None:
        """The lifetime task: connect, list, serve until stopped or gone, close. Never raises
        (except for the caller's own cancellation); the outcome is in :attr:`status`."""
        self._set_status(ServerState.CONNECTING)
        errlog: IO[str] | None = None
        try:
            if self.config.transport == "stdio":
                # the server's stderr, kept for failure reasons; closed in ``finally``
                errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._stop_requested:
                    scope.cancel()
                scope.deadline = anyio.current_time() + self.connect_timeout
                self._stage = "initialize"
                while True:
                    await self._session(errlog)
                    if self._renewing is None or self._stop_requested or self._eof:
                        break
                    self._wake = anyio.Event()  # a new session after an HTTP 404 (see :meth:`_renew`)
                    scope.deadline = anyio.current_time() + self.connect_timeout
                    self._stage = RENEWAL
            self._client = None
            if self._stop_requested:
                self._set_status(ServerState.DISCONNECTED, error=None, tool_count=0)
            elif self._eof and self._connected:
                self._set_status(
                    ServerState.DISCONNECTED,
                    tool_count=0,
                    error=self._with_stderr("the server closed the connection", errlog),
                )
            elif scope.cancelled_caught and self.auth is not None and self.auth.describe():
                self._set_status(ServerState.FAILED, tool_count=0, error=self.auth.unfinished(self.connect_timeout))
            elif scope.cancelled_caught:
                noise = f"; it wrote non-MCP output instead, first line: {self._noise}" if self._noise else ""
                self._set_status(
                    ServerState.FAILED,
                    tool_count=0,
                    error=self._with_stderr(
                        f"no answer to {self._stage} within {self.connect_timeout:g} s{noise} "
                        "(raise mcp.timeout or TOOLSCOUT_MCP_TIMEOUT)",
                        errlog,
                    ),
                )
        except Exception as exc:  # every failure becomes the server's state
            self._client = None
            state = ServerState.DISCONNECTED if self._connected else ServerState.FAILED
            if self._stop_requested:
                self._set_status(ServerState.DISCONNECTED, error=None, tool_count=0)
            else:
                self._set_status(state, tool_count=0, error=self._with_stderr(self._describe(exc), errlog))
        finally:
            self._client = None
            self._end_renewal()
            if errlog is not None:
                errlog.close()
            self.finished.set()

    async def _session(self, errlog: IO[str] | None) -> None:
        """Open one session (the client), list, serve until woken (stop, EOF or a renewal), close."""
        async with self._client_for(errlog) as client:
            instructions = client.instructions
            tools = await self._list_tools(client)
            has_resources = await self._probe_resources(client)
            assert self._scope is not None
            self._scope.deadline = math.inf  # connected: only stop() ends the session now
            self._stage = "the session"
            self._client = client
            self._connected = True
            self._listener.server_tools_changed(self.name, tools, instructions)
            self._set_status(
                ServerState.CONNECTED, instructions=instructions, tool_count=len(tools), has_resources=has_resources
            )
            self._end_renewal()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._relist_loop, client)
                await self._wake.wait()
                tg.cancel_scope.cancel()
            self._client = None

    def _end_renewal(self) -> None:
        renewing, self._renewing = self._renewing, None
        if renewing is not None:
            renewing.set()

    def request_stop(self) -> None:
        """Ask the lifetime task to close the session and end (returns at once; see ``finished``).

        A connected session is closed gracefully (stdio: stdin closed, then the SDK's bounded
        terminate/kill escalation); a connect still in progress is cancelled.
        """
        self._stop_requested = True
        self._wake.set()
        if self._scope is not None and self._client is None:
            self._scope.cancel()

    @property
    def ending(self) -> bool:
        """True while the session has ended or is ending (the server exited or closed the
        connection, or a stop was asked) and :attr:`status` does not say so yet: it is still
        ``connected`` until the lifetime task has closed the client (wait for :attr:`finished`).
        A request made now fails with :class:`ServerUnavailable`. Exact on the pool loop; read
        from another thread it sees every change made before what that thread last received
        from the pool loop (the failed request that saw the connection close, for one)."""
        return (
            self.status.state is ServerState.CONNECTED
            and self._renewing is None
            and (self._eof or self._stop_requested or self._client is None)
        )

    def _on_eof(self, session: int) -> None:
        if session == self.sessions and self._renewing is None:  # not the old session a renewal closes
            self._eof = True
            self._wake.set()

    def _client_for(self, errlog: IO[str] | None) -> Client:
        cfg = self.config
        common: dict[str, Any] = {"mode": "legacy", "message_handler": self._on_message, "client_info": CLIENT_INFO}
        if self.elicitation is not None:  # declares the capability upstream
            common["elicitation_callback"] = self.elicitation.answer
        if cfg.transport == "memory":
            return Client(cfg.inproc, **common)
        if cfg.transport == "stdio":
            wrapped = (
                None
                if self.launcher is None
                else self.launcher.wrap(cfg.command, list(cfg.args), cfg.env, LOW_NICE if self.low_priority else 0)
            )
            self.shared_session = wrapped is not None
            if wrapped is not None:  # the shim that has the launcher start the configured command
                cfg = replace(cfg, command=wrapped[0], args=tuple(wrapped[1]))
        self.sessions += 1
        session = self.sessions
        self.auth = (
            ServerAuth(cfg, interactive=self.interactive_login, notify=self.login_notify, on_failure=self._login_failed)
            if uses_oauth(cfg)
            else None
        )
        transport = open_transport(cfg, errlog=errlog, on_session_gone=lambda: self._gone.add(session), auth=self.auth)
        return Client(_guarded(transport, self), **common)

    def _login_failed(self) -> None:
        if self._scope is not None and self._client is None:  # still connecting: stop waiting
            self._scope.cancel()

    def _on_noise(self, first_line: str) -> None:
        self._noise = first_line
        self._listener.server_warning(
            f"wrote output that is not MCP (JSON-RPC) during {self._stage}, ignored from now on; "
            f"first line: {first_line}",
            self.name,
        )

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._dirty.set()
        elif isinstance(message, PASSED_NOTIFICATIONS) and self.on_notification is not None:
            self.on_notification(self.name, message)
        elif isinstance(message, Exception):
            log.debug("server %s: transport error: %s", self.name, message)

    # -- listing ----------------------------------------------------------------------------
    async def _list_tools(self, client: Client) -> list[ToolSpec]:
        """Every page of ``tools/list``, read leniently (:mod:`.listing`); its warnings (dropped
        tools, pagination loops) go to the listener, naming the server, once per connection (a
        re-list after ``list_changed`` repeats only what is new)."""
        self._stage = "tools/list"
        listing = await list_tools_leniently(client.session)
        for warning in listing.warnings:
            if warning not in self._listing_warned:
                self._listing_warned.add(warning)
                self._listener.server_warning(warning, self.name)
        hints = self.config.search_hints
        if not hints:
            return listing.tools
        return [
            replace(t, search_hint=hints[t.name]) if t.name in hints and not t.search_hint else t for t in listing.tools
        ]

    async def _probe_resources(self, client: Client) -> bool:
        """True when the server declares resources *and* lists any (the SDK's high-level server
        declares the capability whether or not it has resources)."""
        if client.server_capabilities.resources is None:
            return False
        self._stage = "resources/list"
        try:
            if (await client.list_resources(cache_mode="bypass")).resources:
                return True
            return bool((await client.list_resource_templates(cache_mode="bypass")).resource_templates)
        except (MCPError, ValidationError):
            return False

    async def _relist_loop(self, client: Client) -> None:
        """Re-list after ``list_changed``; a burst of notifications makes one refresh."""
        while True:
            await self._dirty.wait()
            deadline = anyio.current_time() + DEBOUNCE_MAX_S
            while True:
                self._dirty = anyio.Event()
                with anyio.move_on_after(min(DEBOUNCE_S, max(0.0, deadline - anyio.current_time()))) as quiet:
                    await self._dirty.wait()
                if quiet.cancelled_caught or anyio.current_time() >= deadline:
                    break
            try:
                with anyio.fail_after(self.call_timeout):
                    tools = await self._list_tools(client)
            except Exception as exc:  # keep the old listing, report, keep serving
                self._listener.server_warning(
                    f"re-listing tools after list_changed failed: {self._describe(exc)}", self.name
                )
                continue
            finally:
                self._stage = "the session"
            self.relists += 1
            self._listener.server_tools_changed(self.name, tools, self.status.instructions)
            self._set_status(ServerState.CONNECTED, tool_count=len(tools))

    # -- requests (from any task) -----------------------------------------------------------
    async def _require_client(self) -> tuple[Client, int]:
        """The open client and its session number; a new session being started is waited for."""
        if self._renewing is not None:
            with anyio.move_on_after(self.connect_timeout + RENEW_GRACE_S):
                await self._renewing.wait()
        client = self._client
        if client is None or self.status.state is not ServerState.CONNECTED:
            raise ServerUnavailable(self.status)
        return client, self.sessions

    async def _renew(self, gone: int) -> tuple[Client, int]:
        """A client on a new session, session ``gone`` having met an HTTP 404: the first caller
        asks the lifetime task for it; callers whose session was already replaced get the new one."""
        if gone == self.sessions and self._renewing is None and self._client is not None:
            log.info("server %s: HTTP 404 for the session; starting a new one", self.name)
            self._renewing = anyio.Event()
            self._wake.set()
        return await self._require_client()

    async def _request(
        self, send: Callable[[Client], Awaitable[_T]], timeout: float, elicitor: Elicitor | None = None
    ) -> _T:
        """``send`` on the open client within ``timeout`` s (the server's questions meanwhile go to
        ``elicitor``: :mod:`.elicitation`); once more on a new session when the server answered
        HTTP 404 for this one (the request was not run: the session was unknown)."""
        client, session = await self._require_client()
        routes = self.elicitation or ElicitationRoutes(self.name)
        refusals = self.auth.challenges if self.auth is not None else 0
        try:
            with anyio.fail_after(timeout) as scope, routes.during(elicitor, scope):
                return await send(client)
        except MCPError as exc:
            if self.auth is not None and self.auth.challenges != refusals and (text := self.auth.describe()):
                raise MCPError(exc.error.code, text) from exc  # the server refused the token
            if session not in self._gone:
                raise
        client, session = await self._renew(session)
        try:
            with anyio.fail_after(timeout) as scope, routes.during(elicitor, scope):
                return await send(client)
        except MCPError as exc:
            if session not in self._gone:
                raise
            raise MCPError(
                types.INVALID_REQUEST,
                "the server answered HTTP 404 (session not found) again right "
                f"after a new session was started, so the request was not run: {exc.error.message}",
            ) from exc

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        timeout: float,
        elicitor: Elicitor | None = None,
        progress: ProgressRoute | None = None,
    ) -> types.CallToolResult:
        """``tools/call`` with the server's own tool name (sent once more on a new session after
        an HTTP 404 for the session: see the module docstring); questions the server asks
        meanwhile go to ``elicitor`` when the connection forwards them (:attr:`elicitation`).
        With ``progress`` the request asks for progress (a ``progressToken``) and the server's
        ``notifications/progress`` for it go there (:mod:`.progress`). Cancelling the caller
        sends the server ``notifications/cancelled`` (the SDK does).

        Raises:
            ServerUnavailable: the server is not connected (or a new session could not start).
            TimeoutError: no result within ``timeout`` seconds.
            MCPError: the server answered with a JSON-RPC error, or the connection closed, or it
                answered HTTP 404 for the new session too.
        """
        return await self._request(
            lambda client: client.call_tool(tool, arguments, progress_callback=progress), timeout, elicitor
        )

    async def list_resources(self, timeout: float) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
        """All resources and resource templates (first page of each; raises like :meth:`call_tool`)."""

        async def both(client: Client) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
            resources = (await client.list_resources(cache_mode="bypass")).resources
            try:
                templates = (await client.list_resource_templates(cache_mode="bypass")).resource_templates
            except MCPError:
                templates = []
            return list(resources), list(templates)

        return await self._request(both, timeout)

    @property
    def capabilities(self) -> types.ServerCapabilities | None:
        """What the server declared in ``initialize``, or None while no session is open."""
        return self._client.server_capabilities if self._client is not None else None

    async def request(self, send: Callable[[Client], Awaitable[_T]], timeout: float) -> _T:
        """Any request: ``send(client)`` on the open client within ``timeout`` s (prompts,
        completion, subscriptions: :mod:`toolscout.core.gateway.passthrough`; raises like
        :meth:`call_tool`)."""
        return await self._request(send, timeout)

    async def read_resource(self, uri: str, timeout: float) -> types.ReadResourceResult:
        """``resources/read`` (raises like :meth:`call_tool`)."""
        return await self._request(lambda client: client.read_resource(uri, cache_mode="bypass"), timeout)

    # -- helpers ----------------------------------------------------------------------------
    def _set_status(self, state: ServerState, **changes: Any) -> None:
        auth = self.auth
        changes.setdefault("needs_login", state is ServerState.FAILED and auth is not None and auth.needs_login)
        self.status = replace(self.status, state=state, **changes)
        self._listener.server_status_changed(self.status)

    def _describe(self, exc: BaseException) -> str:
        if self.auth is not None and (refused := self.auth.describe()):
            return refused
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, OSError) and self.config.transport == "stdio" and self._stage == "initialize":
            return f"cannot start {self.config.command!r}: {leaf.strerror or leaf}"
        if isinstance(leaf, MCPError):
            if leaf.error.code == types.CONNECTION_CLOSED:
                return f"the server exited or closed the connection during {self._stage}"
            return f"{leaf.error.message} during {self._stage}"
        if isinstance(leaf, MessageTooLong):
            return str(leaf)
        if isinstance(leaf, ListingError):
            return f"{leaf} (during {self._stage})"
        if isinstance(leaf, ValidationError):
            first: dict[str, Any] = dict(leaf.errors()[0]) if leaf.errors() else {}
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"the {self._stage} result was rejected by the MCP SDK ({where}: {first.get('msg', leaf)})"
        if isinstance(leaf, TimeoutError):
            return f"timed out during {self._stage}"
        return f"{type(leaf).__name__} during {self._stage}: {leaf}"

    @staticmethod
    def _with_stderr(reason: str, errlog: IO[str] | None) -> str:
        if errlog is None:
            return reason
        try:
            errlog.seek(0)
            lines = [ln for ln in errlog.read().splitlines() if ln.strip()]
        except (OSError, ValueError):
            return reason
        if not lines:
            return reason
        tail = " | ".join(lines[-3:])
        return f"{reason}; stderr: {tail[-400:]}"
