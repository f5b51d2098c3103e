"""Progress of an upstream ``tools/call`` (``notifications/progress``), routed to whoever made the call.

The SDK's client asks for progress when ``call_tool`` is given a ``progress_callback`` (it puts a
``progressToken`` in the request's ``_meta``, the request id) and awaits the callback for each
notification the server sends for that token (MCP spec, basic/utilities/progress). The callback
runs on the pool loop (:mod:`.loop_thread`); the caller listens on its own loop. A
:class:`ProgressRoute` is that callback for one call: it hands each report to the caller's loop,
in order; only a server that floods reports faster than that loop takes them loses some in
between (a progress value only grows, so the newest says all the older ones did).

Values are passed on as the server sent them: ``progress`` and ``total`` are numbers (float),
``message`` is the server's text (untrusted: whoever shows it shows it literally).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .loop_thread import post


@dataclass(frozen=True)
class Progress:
    """One progress notification of a call.

    Attributes:
        progress: how far the work is (a number that grows with each notification; any unit).
        total: the value ``progress`` reaches at the end, or None when the server does not know.
        message: the server's description of the current step, or None (untrusted text).
    """

    progress: float
    total: float | None = None
    message: str | None = None

    @property
    def fraction(self) -> float | None:
        """:func:`fraction` of this report."""
        return fraction(self.progress, self.total)


def fraction(progress: float, total: float | None) -> float | None:
    """``progress / total`` clamped to 0..1, or None when the total is unknown (or not > 0)."""
    if total is None or not total > 0:
        return None
    return min(1.0, max(0.0, progress / total))


#: Most reports waiting for the caller's loop at once (beyond: the newest replaces the last).
MAX_WAITING = 64

#: Receives a call's progress on the caller's loop (must not block).
Report = Callable[[Progress], None]


class ProgressRoute:
    """The SDK's ``progress_callback`` for one call: reports go to ``report`` on ``loop``.

    Args:
        report: called with each :class:`Progress`, on ``loop``; not called after :meth:`close`.
        loop: the loop ``report`` runs on (default: the one creating the route).
        on_close: called once by :meth:`close` (the caller's own clean-up, a pending timer).

    Reports are handed over in order, all those waiting in one turn of ``loop``; beyond
    :data:`MAX_WAITING` waiting, the newest replaces the last one waiting (a server that floods
    notifications faster than the caller takes them loses some in between, never the newest).
    A report whose ``progress`` is below one already taken is dropped: the SDK runs each callback
    as a task of its own, so a later notification can overtake an earlier one, and progress
    only grows (MCP spec: it "MUST increase with each notification").
    """

    def __init__(
        self,
        report: Report,
        loop: asyncio.AbstractEventLoop | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.report = report
        self._on_close = on_close
        self.loop = loop if loop is not None else asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._waiting: list[Progress] = []
        self._closed = False
        self._newest = float("-inf")
        #: notifications received from the server (before any are dropped)
        self.received = 0

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        """One notification (the SDK's ``ProgressFnT``; runs on the connection's loop)."""
        with self._lock:
            if self._closed:
                return
            self.received += 1
            if progress < self._newest:  # overtaken: the SDK runs each callback as its own task
                return
            self._newest = progress
            posted = bool(self._waiting)
            if len(self._waiting) >= MAX_WAITING:
                self._waiting.pop()
            self._waiting.append(Progress(progress, total, message))
        if not posted:
            post(self.loop, self._deliver)

    def _deliver(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for update in waiting:
            if self._closed:
                return
            self.report(update)

    def close(self) -> None:
        """The call has ended: reports still on their way are dropped (call on ``loop``)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._waiting = []
        if self._on_close is not None:
            self._on_close()
