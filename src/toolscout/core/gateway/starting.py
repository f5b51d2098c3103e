"""The gateway's engine start, kept off the handshake's path.

The gateway answers ``initialize`` / ``server/discover`` and its first ``tools/list`` without
waiting for anything the engine does at start: the upstream servers connect on their own (each
in its own lifetime task), and the search index (importing numpy, scipy and scikit-learn,
tokenizing, loading the dense model) is built afterwards in a daemon thread. Measured before
this (docs/gateway.md, *Start-up*): 7-12 s to the first answer with 10-30 configured servers on
a loaded 2-core machine, past Claude Code's stdio probe of a few seconds.

:class:`EngineStart` starts the engine once, when asked (:meth:`EngineStart.begin`); requests
that need servers wait for :meth:`EngineStart.wait`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

from ..engine.facade import Engine

log = logging.getLogger(__name__)

#: Most seconds :meth:`EngineStart.settle` waits for a start still under way before stopping.
SETTLE_S = 15.0


class EngineStart:
    """Starts ``engine`` in the background, once: catalogs and upstream servers
    (:meth:`Engine.start <toolscout.core.engine.facade.Engine.start>` without the index), then the
    search index in a daemon thread. Create it on the loop that serves."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        #: when (``time.time()``) the search index was built, None before (``/readyz``, metrics)
        self.indexed_at: float | None = None
        #: set once the search index has been built (or its build failed), see :mod:`.prebuilt`
        self.warmed = asyncio.Event()

    @property
    def begun(self) -> bool:
        """True once :meth:`begin` was called."""
        return self._task is not None

    def begin(self) -> None:
        """Start now unless already started (returns at once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="toolscout-gateway-start")

    async def wait(self) -> None:
        """Begin if needed, and wait until the servers have been started (not connected: they
        connect on their own; see :meth:`Engine.wait_for_servers`). The pool's start is bounded
        by its own supervisor wait."""
        self.begin()
        await self._started.wait()

    async def settle(self) -> None:
        """Before the engine stops: wait (at most :data:`SETTLE_S`) for a start under way, so the
        pool is never stopped half-started, and leave the index build to its thread."""
        if self._task is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._started.wait(), SETTLE_S)
        self._task.cancel()

    async def _run(self) -> None:
        try:
            await self.engine.start(warm_search=False)
        except Exception as exc:  # requests must not wait forever for a start that failed
            log.exception("engine start failed")
            self.engine.warn(f"toolscout serve could not start its servers: {type(exc).__name__}: {exc}")
        finally:
            self._started.set()
        try:  # a prebuilt index's vectors are seeded before the index is built
            if await in_daemon_thread(self.engine.warm_prebuilt):
                self.indexed_at = time.time()
        finally:
            self.warmed.set()


async def in_daemon_thread(work: Callable[[], None]) -> bool:
    """Run ``work`` in a daemon thread and wait for it; a failure is logged (the first search
    builds the index again). Cancelling the wait leaves the thread to finish on its own without
    holding up the process's exit (imports and tokenizing cannot be interrupted, and the gateway
    must exit promptly on a signal). Returns True when ``work`` succeeded."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def report(exc: BaseException | None) -> None:
        if done.done():
            return
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(None)

    def body() -> None:
        error: BaseException | None = None
        try:
            work()
        except BaseException as exc:  # reported to the waiter
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(report, error)

    threading.Thread(target=body, name="toolscout-gateway-warm", daemon=True).start()
    try:
        await done
    except Exception:
        log.exception("building the search index failed (the first search builds it again)")
        return False
    return True
