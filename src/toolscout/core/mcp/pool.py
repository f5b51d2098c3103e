"""All configured MCP servers: started together, each in its own lifetime task, stopped together.

:meth:`ServerPool.start` returns as soon as a supervisor task is running; every server connects
concurrently under it, so nothing ever waits for the slowest server. The supervisor and every
connection run on the pool's own event loop, on a thread (:mod:`.loop_thread`), so connecting 47
servers never stalls the loop of the caller (the UI's). The public methods are called on the
caller's loop (the one that called :meth:`ServerPool.start`) and hop to the pool loop; what the
connections report reaches the listener on the caller's loop, in order, one callback per state
change or listing. Statuses read from the pool (:meth:`ServerPool.statuses`) are those the
listener has been told, so they always agree with the catalog the listener maintains.

Between the two loops sits one relay thread: it prepares each listing (the listener's
``prepare_tools``: schema projection, token counts and search terms, the CPU-heavy part of adding
a server, done off the caller's loop) and posts reports in the order they happened. A server
that re-lists faster than that is coalesced: a listing not yet prepared is replaced by the newer
one (never across a state change), so a ``list_changed`` storm costs one catalog update per
listing the relay gets to.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from ..models import ServerState, ServerStatus, ToolSpec
from ..names import normalise_server_name
from ..sanitize import escape_all
from .loop_thread import LoopThread, RemoteConnection, post
from .server_config import PROJECT_CONFIG, ServerConfig
from .shared_sessions import ServerLauncher, choose_sessions

if TYPE_CHECKING:  # .connection imports the MCP SDK (~1 s): loaded when the first server launches
    from typing import Protocol

    from .connection import ConnectionListener, ServerConnection

    class PoolListener(ConnectionListener, Protocol):
        """What the pool reports to (the engine): a connection's reports, and the preparation of
        a listing on the relay thread."""

        def prepare_tools(self, name: str, tools: list[ToolSpec]) -> list[ToolSpec]:
            """``tools`` with their CPU-heavy derived data computed (called off every event loop)."""


log = logging.getLogger(__name__)

#: Bound on a graceful pool shut-down before remaining sessions are cancelled (s). The SDK's
#: stdio shut-down itself is bounded (2 s grace, then SIGTERM, then SIGKILL).
STOP_TIMEOUT_S = 8.0
#: Beyond the connect timeout, how long :meth:`ServerPool.reconnect` with ``settle`` waits for the
#: new connection's outcome to reach the listener (s): the connect itself is bounded already.
SETTLE_GRACE_S = 2.0


class ServerPool:
    """Connections to every configured server, with their states.

    Args:
        configs: servers in display order; entries with ``error`` are reported failed and
            never started.
        connect_timeout: per-server connect bound (s), setting ``mcp.timeout``.
        call_timeout: per-request bound (s), setting ``mcp.callTimeout``.
        listener: receives every state change, tool listing and warning.
    """

    def __init__(
        self, configs: Iterable[ServerConfig], *, connect_timeout: float, call_timeout: float, listener: PoolListener
    ) -> None:
        self.configs: dict[str, ServerConfig] = {c.name: c for c in configs}
        self.connect_timeout = connect_timeout
        #: servers started from now on run at a lower CPU priority (setting ``mcp.serverPriority``)
        self.low_priority = False
        #: "shared", "separate" or "auto" (setting ``mcp.serverSessions``; read when the pool starts)
        self.server_sessions = "separate"
        #: what the pool chose at start: "shared" or "separate" (see :func:`.shared_sessions.choose`)
        self.sessions_in_use = "separate"
        self._launcher = ServerLauncher()
        #: connections started from now on forward their servers' questions during a call to
        #: the call's :class:`~.elicitation.Elicitor` and declare elicitation (``toolscout serve``)
        self.forward_elicitation = False
        #: ``fn(server, notification)`` on the caller's loop for each resource or prompt change a server sends
        self.notification_listeners: list[Callable[[str, Any], None]] = []
        self.call_timeout = call_timeout
        self._listener = listener
        self._connections: dict[str, ServerConnection] = {}
        #: What the listener has been told (read and written on the caller's loop only).
        self._statuses: dict[str, ServerStatus] = {}
        for cfg in self.configs.values():
            transport = cfg.transport if cfg.error is None else "stdio"
            state = ServerState.FAILED if cfg.error else ServerState.CONNECTING
            error = cfg.error
            if cfg.not_approved and not cfg.error:
                state, error = ServerState.NOT_APPROVED, not_approved_message(cfg)
            self._statuses[cfg.name] = ServerStatus(cfg.name, state, error=error, transport=transport)
        self._changed: asyncio.Event | None = None  # caller's loop; created on first wait
        self._home: asyncio.AbstractEventLoop | None = None
        self._runner = LoopThread()
        #: The relay thread (see :meth:`_relay`); created by :meth:`start`.
        self._executor: ThreadPoolExecutor | None = None
        # pool-loop state (created on the pool loop by ``_start_remote``)
        self._tg: anyio.abc.TaskGroup | None = None
        self._task: asyncio.Future[None] | None = None
        self._ready: anyio.Event | None = None
        self._stopping: anyio.Event | None = None
        self._done: anyio.Event | None = None
        # listings not yet delivered, by server: ``[tools, instructions]`` slots that a newer
        # listing overwrites in place (see the module docstring)
        self._slots: dict[str, list[Any]] = {}
        self._slots_lock = threading.Lock()
        #: Listings the pool received from connections, and those it delivered (coalescing).
        self.listings_received = 0
        self.listings_delivered = 0

    # -- listener (called by connections in their lifetime tasks, on the pool loop) ----------
    def server_status_changed(self, status: ServerStatus) -> None:
        """Forward a state change to the caller's loop (wakes :meth:`wait_settled` there)."""
        conn = self._connections.get(status.name)
        if conn is not None and conn.status is not status:
            return  # a superseded connection (before a reconnect) reporting late
        with self._slots_lock:
            self._slots.pop(status.name, None)  # later listings must not overtake this change
        self._relay(post, self._home, self._deliver_status, status)

    def server_tools_changed(self, name: str, tools: list[ToolSpec], instructions: str | None) -> None:
        """Forward a tool listing; replaces one of the same server not yet prepared."""
        with self._slots_lock:
            self.listings_received += 1
            slot = self._slots.get(name)
            if slot is not None:
                slot[0], slot[1] = tools, instructions
                return
            slot = self._slots[name] = [tools, instructions]
        self._relay(self._prepare_and_post, name, slot)

    def server_warning(self, message: str, name: str) -> None:
        """Forward a warning."""
        self._relay(post, self._home, self._listener.server_warning, message, name)

    def _forward_notification(self, server: str, notification: Any) -> None:
        if self.notification_listeners:
            self._relay(post, self._home, self._deliver_notification, server, notification)

    def _deliver_notification(self, server: str, notification: Any) -> None:
        for listener in list(self.notification_listeners):
            listener(server, notification)  # the gateway's never raises

    # -- the relay thread: prepares listings, keeps every report in order --------------------
    def _relay(self, fn: Any, *args: Any) -> None:
        """Run ``fn(*args)`` on the relay thread (one worker: reports keep their order)."""
        executor = self._executor
        if executor is None:
            fn(*args)
            return
        with contextlib.suppress(RuntimeError):  # shut down: the caller's loop is going away
            executor.submit(fn, *args)

    async def _flush_relay(self) -> None:
        """Return once every report queued so far has been handled on this (the caller's) loop."""
        executor, loop = self._executor, asyncio.get_running_loop()
        handled = loop.create_future()
        try:
            if executor is None:
                raise RuntimeError("no relay")
            executor.submit(post, loop, _resolve, handled)  # behind every queued report
        except RuntimeError:
            loop.call_soon(_resolve, handled)  # reports already posted to this loop run first
        await handled

    def _prepare_and_post(self, name: str, slot: list[Any]) -> None:
        with self._slots_lock:
            if self._slots.get(name) is slot:
                del self._slots[name]  # a newer listing now gets a slot of its own
            tools, instructions = slot
        try:
            tools = self._listener.prepare_tools(name, tools)
        except Exception:  # preparing is an optimisation: deliver the listing as it came
            log.debug("preparing the tools of %s failed", name, exc_info=True)
        post(self._home, self._deliver_tools, name, tools, instructions)

    # -- deliveries (on the caller's loop) --------------------------------------------------
    def _deliver_status(self, status: ServerStatus) -> None:
        self._statuses[status.name] = status
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        self._listener.server_status_changed(status)

    def _deliver_tools(self, name: str, tools: list[ToolSpec], instructions: str | None) -> None:
        self.listings_delivered += 1
        self._listener.server_tools_changed(name, tools, instructions)

    # -- queries ----------------------------------------------------------------------------
    def statuses(self) -> list[ServerStatus]:
        """Every configured server's status, in configuration order."""
        return list(self._statuses.values())

    def status(self, name: str) -> ServerStatus | None:
        """The status of ``name`` (configuration name), or None."""
        return self._statuses.get(name)

    async def caught_up(self, name: str) -> ServerStatus | None:
        """The status of ``name`` (as :meth:`status`) once the listener has been told everything
        its connection already knows. Call on the caller's loop.

        Statuses reach the caller's loop through the relay, so right after a server exits (a
        request just failed with "connection closed") :meth:`status` can still say ``connected``.
        Here a session that has ended but not yet reported it (:attr:`ServerConnection.ending`)
        is waited for (bounded by :data:`STOP_TIMEOUT_S`; the SDK's stdio shut-down is bounded
        too) and every report queued so far is delivered first. When nothing is pending this
        returns without leaving the caller's loop.

        Returns:
            The status as the listener now knows it; None for an unknown name.
        """
        conn = self._connections.get(name)
        if conn is not None and self._runner.running and (conn.ending or self._statuses.get(name) is not conn.status):
            with contextlib.suppress(RuntimeError):  # the pool loop stopped meanwhile
                await self._runner.run(self._finish_remote(conn))
            await self._flush_relay()
        return self._statuses.get(name)

    async def _finish_remote(self, conn: ServerConnection) -> None:
        if conn.ending:
            with anyio.move_on_after(STOP_TIMEOUT_S):
                await conn.finished.wait()

    def connection(self, name: str) -> RemoteConnection | None:
        """The current connection of ``name`` (its requests run on the pool loop), or None."""
        conn = self._connections.get(name)
        return RemoteConnection(conn, self._runner) if conn is not None else None

    def find(self, server_part: str) -> str | None:
        """The configured server ``server_part`` names: its canonical name (as in
        ``mcp__<server>__...``), its configured spelling, or that spelling normalised; or None."""
        if server_part in self.configs:
            return server_part
        for name, cfg in self.configs.items():
            if server_part == cfg.configured_name:
                return name
        wanted = normalise_server_name(server_part)
        return wanted if wanted in self.configs else None

    async def approve(self) -> list[str]:
        """The folder was approved: start its project servers (now if the pool is running, else
        on :meth:`start`). Call on the caller's loop. Returns their names."""
        names = [n for n, c in self.configs.items() if c.not_approved]
        for name in names:
            cfg = self.configs[name] = replace(self.configs[name], not_approved=False)
            if cfg.error is None:
                self._deliver_status(ServerStatus(name, ServerState.CONNECTING, transport=cfg.transport))
        if self._tg is not None and self._runner.running:
            for name in names:
                if self.configs[name].error is None:
                    await self.reconnect(name)
        return names

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the pool loop thread, the supervisor and every valid server; returns at once.

        The calling loop becomes the one every listener callback runs on.
        """
        if self._task is not None:
            return
        self._home = asyncio.get_running_loop()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="toolscout-mcp-relay")
        self._runner.start()
        await self._runner.run(self._start_remote())

    async def _start_remote(self) -> None:
        self._ready, self._stopping, self._done = anyio.Event(), anyio.Event(), anyio.Event()
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name="toolscout-mcp-pool")
        with anyio.fail_after(10):
            await self._ready.wait()

    async def _supervise(self) -> None:
        assert self._ready is not None and self._stopping is not None and self._done is not None
        try:
            await self._start_launcher()
            async with anyio.create_task_group() as tg:
                self._tg = tg
                for cfg in self.configs.values():
                    if cfg.error is None and not cfg.not_approved:
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

    async def _start_launcher(self) -> None:
        """Start the launcher of the shared server session (:mod:`.shared_sessions`) if stdio
        servers will start; if it cannot start, they start directly (logged)."""
        stdio = any(c.transport == "stdio" and c.error is None for c in self.configs.values())
        self.sessions_in_use = choose_sessions(self.server_sessions)
        if self.sessions_in_use == "shared" and stdio and not await anyio.to_thread.run_sync(self._launcher.start):
            log.info("%s", self._launcher.error)
            self.sessions_in_use = "separate"

    def _launch(self, cfg: ServerConfig) -> ServerConnection:
        from .connection import ServerConnection

        assert self._tg is not None
        conn = ServerConnection(
            cfg, connect_timeout=self.connect_timeout, call_timeout=self.call_timeout, listener=self
        )
        conn.low_priority = self.low_priority and cfg.transport == "stdio"
        if self.forward_elicitation:
            from .elicitation import ElicitationRoutes

            conn.elicitation = ElicitationRoutes(cfg.name)
        conn.on_notification = self._forward_notification
        conn.launcher = self._launcher if self.sessions_in_use == "shared" and cfg.transport == "stdio" else None
        self._connections[cfg.name] = conn
        self._statuses[cfg.name] = conn.status
        self._tg.start_soon(conn.run, name=f"mcp:{cfg.name}")
        return conn

    async def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until no server is connecting; True if settled, False on ``timeout`` (s)."""
        with anyio.move_on_after(math_inf(timeout)):
            while any(s.state is ServerState.CONNECTING for s in self._statuses.values()):
                await self._next_change()
            return True
        return False

    async def disconnect(self, name: str) -> None:
        """Close one server's session and wait for its lifetime task to end (bounded)."""
        if name in self._connections and self._runner.running:
            await self._runner.run(self._disconnect_remote(name))
            await self._flush_relay()  # its last state has reached the listener when this returns

    async def _disconnect_remote(self, name: str) -> None:
        conn = self._connections.get(name)
        if conn is None:
            return
        conn.request_stop()
        with anyio.move_on_after(STOP_TIMEOUT_S):
            await conn.finished.wait()

    async def reconnect(self, name: str, *, settle: bool = False) -> RemoteConnection:
        """Close ``name`` if open and start a fresh connection; returns at once (see its status),
        or with ``settle`` once the listener has been told the new connection connected or failed
        (bounded by the connect timeout plus :data:`SETTLE_GRACE_S`).

        Raises:
            KeyError: ``name`` is not configured. RuntimeError: the pool is not running, or the
            entry cannot start (invalid, or a project server not approved).
        """
        cfg = self.configs[name]
        if self._tg is None or not self._runner.running:
            raise RuntimeError("the MCP server pool is not running")
        conn = await self._runner.run(self._reconnect_remote(cfg))
        if settle:
            with anyio.move_on_after(self.connect_timeout + SETTLE_GRACE_S):
                while not (conn.status.state is not ServerState.CONNECTING and self._statuses.get(name) is conn.status):
                    await self._next_change()
        return RemoteConnection(conn, self._runner)

    async def _next_change(self) -> None:
        """Wait for the next status the listener is told (on the caller's loop)."""
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    async def _reconnect_remote(self, cfg: ServerConfig) -> ServerConnection:
        await self._disconnect_remote(cfg.name)
        if cfg.not_approved:
            raise RuntimeError(f"server {cfg.name} cannot start: {not_approved_message(cfg)}")
        if cfg.error is not None:
            raise RuntimeError(f"server {cfg.name} cannot start: {cfg.error}")
        if self._tg is None:
            raise RuntimeError("the MCP server pool is not running")
        return self._launch(cfg)

    async def stop(self) -> None:
        """Close every session, end every lifetime task and the pool loop; safe to call twice."""
        if self._task is None:
            return
        if self._runner.running:
            with contextlib.suppress(Exception):
                await self._runner.run(self._stop_remote())
        await self._runner.close()
        await asyncio.to_thread(self._launcher.stop)  # no-op unless the pool loop could not stop it
        await self._flush_relay()  # the last states have reached the listener
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None
        self._task = None

    async def _stop_remote(self) -> None:
        assert self._stopping is not None and self._done is not None and self._task is not None
        self._stopping.set()
        with anyio.move_on_after(STOP_TIMEOUT_S):
            await self._done.wait()
        if not self._done.is_set() and self._tg is not None:
            self._tg.cancel_scope.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
        await anyio.to_thread.run_sync(self._launcher.stop)


def not_approved_message(cfg: ServerConfig) -> str:
    """Why a project server is not started, with what starting it would do as its config file
    writes it (``${VAR}`` unexpanded): the command (or URL), working dir, environment and headers
    (:meth:`ServerConfig.launch_details`: control characters shown escaped, never sent to the
    terminal), and which of the person's environment variables it reads
    (:meth:`ServerConfig.reads_env`: names only); then how to approve the folder (run the app in
    it once, with the server's ``--mcp-config`` file when it comes from one, or pass
    ``--trust-project``): a client of ``toolscout serve`` sees this text and cannot answer a prompt."""
    (what, shown), *rest = cfg.launch_details()
    parts = [f"{label} {text}" for label, text in rest]
    if cfg.reads_env():
        parts.append(cfg.reads_env())
    more = f" ({'; '.join(parts)})" if parts else ""
    if cfg.scope == PROJECT_CONFIG:
        where, run = f"--mcp-config file {escape_all(cfg.source)}", f"toolscout --mcp-config {shlex.quote(cfg.source)}"
    else:
        where, run = ".mcp.json", "toolscout"
    return (
        f"not approved: this folder's {where} {what} {shown}{more}; to start it, approve the folder: run "
        f"`{escape_all(run)}` in it once and answer its trust prompt, or pass --trust-project"
    )


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def math_inf(timeout: float | None) -> float:
    """``timeout`` or infinity for None (anyio's ``move_on_after`` wants a number)."""
    return float("inf") if timeout is None else timeout
