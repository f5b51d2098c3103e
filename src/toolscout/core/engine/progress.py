"""Encoding progress from the dense worker thread → :class:`~.events.VectorsProgress` events.

The search index reports ``(done, total)`` from its encoding thread after every ONNX batch
(~30 texts). :class:`ProgressRelay` turns that into at most a few events a second, each with
the time since the encoding round began (so listeners can show an ETA), and delivers them on
the engine's event loop (``call_soon_threadsafe``), or directly when no loop is attached.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable

from .events import Event, VectorsProgress

#: Least time between two progress events (s); the first and the last are always sent.
MIN_INTERVAL_S = 0.2


class ProgressRelay:
    """Callable ``relay(done, total)`` (thread-safe) that emits throttled :class:`VectorsProgress`.

    Args:
        emit: delivers an event to the engine's listeners.
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(self, emit: Callable[[Event], None], clock: Callable[[], float] = time.monotonic) -> None:
        self._emit = emit
        self._clock = clock
        self._lock = threading.Lock()
        self._started: float | None = None
        self._last_sent = 0.0
        #: The loop events are delivered on (set by ``Engine.start``); None: the caller's thread.
        self.loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        with self._lock:
            if self._started is None:
                self._started = now
                self._last_sent = 0.0
            finished = done >= total
            if not finished and self._last_sent and now - self._last_sent < MIN_INTERVAL_S:
                return
            self._last_sent = now
            event = VectorsProgress(done, total, now - self._started)
            if finished:
                self._started = None
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._emit, event)
                return
        self._emit(event)
