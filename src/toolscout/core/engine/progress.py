"""Progress → events: the dense encoding's (:class:`~.events.VectorsProgress`) and each MCP tool
call's (:class:`~.events.ToolCallProgress`, :class:`CallProgressRelay`).

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

from ..mcp.progress import Progress, ProgressRoute, Report
from .events import Event, ToolCallProgress, VectorsProgress

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


#: Least time between two :class:`ToolCallProgress` events of one call (s).
CALL_INTERVAL_S = 0.1


class CallProgressRelay:
    """One call's progress reports → :class:`ToolCallProgress` events, at most one per
    :data:`CALL_INTERVAL_S`: the first at once, later ones when the interval is over (the newest
    report then; those in between are skipped). Runs on the engine's loop.

    Args:
        emit: delivers an event to the engine's listeners.
        call_id: the caller's id of the call. tool_name: the tool as the caller named it.
        forward: also given every report, unthrottled (the caller's own use), or None.
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(
        self,
        emit: Callable[[Event], None],
        call_id: str | None,
        tool_name: str,
        forward: Report | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self.call_id = call_id
        self.tool_name = tool_name
        self._forward = forward
        self._clock = clock
        self._last = float("-inf")
        self._pending: Progress | None = None
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, report: Progress) -> None:
        if self._forward is not None:
            self._forward(report)
        if self.call_id is None:
            return
        if self._timer is not None:  # one is waiting for its interval: the newest takes its place
            self._pending = report
            return
        wait = self._last + CALL_INTERVAL_S - self._clock()
        if wait <= 0:
            self._send(report)
            return
        self._pending = report
        self._timer = asyncio.get_running_loop().call_later(wait, self._flush)

    def _flush(self) -> None:
        self._timer = None
        pending, self._pending = self._pending, None
        if pending is not None:
            self._send(pending)

    def _send(self, report: Progress) -> None:
        assert self.call_id is not None
        self._last = self._clock()
        self._emit(ToolCallProgress(self.call_id, self.tool_name, report.progress, report.total, report.message))

    def close(self) -> None:
        """The call has returned: a report still waiting for its interval is dropped."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = None

    def route(self) -> ProgressRoute:
        """The connection-side callback that feeds this relay (closing it closes the relay)."""
        return ProgressRoute(self, on_close=self.close)
