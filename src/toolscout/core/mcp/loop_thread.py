"""The MCP connections' own event loop, on a daemon thread, and the hand-offs to and from it.

Why a thread: at 47 servers, launching processes, reading their pipes, validating ~1,700 tool
definitions with pydantic and importing the SDK itself (~1 s) take seconds of CPU. On the UI's
event loop that work delays every keystroke (issue 12: echo 1.5–2.7 s while servers connect).
On a loop of their own, the UI loop only receives finished results (one callback per state
change or listing, see :class:`ServerPool`), and the interpreter's switch interval (5 ms) bounds
how long the connection thread can keep the UI thread waiting for the GIL.

Hand-offs:

* engine → pool: :meth:`LoopThread.run` awaits a coroutine on the pool loop from the caller's
  loop (cancelling the caller cancels the remote task);
* pool → engine: callbacks are posted with ``call_soon_threadsafe`` to the loop that started the
  pool (order preserved).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Bound on waiting for the loop thread to end after its loop was stopped (s).
JOIN_TIMEOUT_S = 2.0


class LoopThread:
    """An asyncio event loop running forever on a daemon thread until :meth:`close`.

    Args:
        name: the thread's name (shows in ``py-spy`` and thread dumps).
    """

    def __init__(self, name: str = "toolscout-mcp") -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()

    def start(self) -> None:
        """Start the thread and its loop; returns once the loop runs (idempotent)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
        self._thread.start()
        self._started.wait(10)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.loop = loop
        loop.call_soon(self._started.set)
        try:
            loop.run_forever()
        finally:
            try:
                tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in tasks:
                    task.cancel()
                if tasks:
                    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            except Exception:  # a last resort at shut-down: log, never raise from the thread
                log.debug("MCP loop shut-down", exc_info=True)
            finally:
                loop.close()

    @property
    def running(self) -> bool:
        """True while the loop thread is alive and its loop open."""
        return (
            self._thread is not None and self._thread.is_alive() and self.loop is not None and not self.loop.is_closed()
        )

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the pool loop and return its result on the calling loop.

        Raises:
            RuntimeError: the loop thread is not running (``coro`` is closed unrun).
            Exception: whatever ``coro`` raises. Cancelling the caller cancels the remote task.
        """
        if not self.running:
            coro.close()
            raise RuntimeError("the MCP connection loop is not running")
        assert self.loop is not None
        if asyncio.get_running_loop() is self.loop:  # already on the pool loop
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Schedule ``fn(*args)`` on the pool loop (dropped once the loop has closed)."""
        if self.loop is not None:
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(fn, *args)

    async def close(self) -> None:
        """Stop the loop (remaining tasks are cancelled) and wait for the thread (bounded)."""
        thread, loop = self._thread, self.loop
        if thread is None or loop is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        deadline = asyncio.get_running_loop().time() + JOIN_TIMEOUT_S
        while thread.is_alive() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)  # polling a thread's end: no awaitable exists for it
        self._thread = None


def post(loop: asyncio.AbstractEventLoop | None, fn: Callable[..., Any], *args: Any) -> None:
    """``fn(*args)`` on ``loop`` from any thread, directly when already on it; dropped once the
    loop has closed (the app is gone: nobody is left to tell)."""
    if loop is None:
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
        return
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


class RemoteConnection:
    """A :class:`~.connection.ServerConnection` seen from the engine's loop: requests run on the
    pool loop (where the SDK client lives); attributes (``status``, ``relists`` …) read through.

    Args:
        conn: the connection (lives on the pool loop).
        runner: the pool's loop thread.
    """

    def __init__(self, conn: Any, runner: LoopThread) -> None:
        self._conn = conn
        self._runner = runner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], timeout: float, elicitor: Any = None, progress: Any = None
    ) -> Any:
        """``tools/call`` on the pool loop (raises like ``ServerConnection.call_tool``; ``elicitor``
        and ``progress`` as there: an :class:`~.elicitation.Elicitor`, whose ``ask`` runs on its
        own loop, and a :class:`~.progress.ProgressRoute`, which reports on its own loop)."""
        return await self._runner.run(self._conn.call_tool(tool, arguments, timeout, elicitor, progress))

    async def list_resources(self, timeout: float) -> Any:
        """``resources/list`` + templates on the pool loop."""
        return await self._runner.run(self._conn.list_resources(timeout))

    async def request(self, send: Callable[[Any], Awaitable[Any]], timeout: float) -> Any:
        """Any request (``ServerConnection.request``) on the pool loop."""
        return await self._runner.run(self._conn.request(send, timeout))

    async def read_resource(self, uri: str, timeout: float) -> Any:
        """``resources/read`` on the pool loop."""
        return await self._runner.run(self._conn.read_resource(uri, timeout))
