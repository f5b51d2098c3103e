"""Graceful drain of ``toolscout serve --http`` on SIGTERM (and SIGINT), for replicas behind a
load balancer: a replica being stopped loses no request it accepted.

1. The signal marks the gateway draining: ``/readyz`` answers 503 at once (:mod:`.ops_http`),
   while every request is still accepted and served, for ``--drain-delay`` seconds (default
   2): time for the balancer's health check to see it and send new requests elsewhere.
2. Then the listening socket closes (new connections are refused: a balancer retries them on
   another replica, as it never sent them) and idle keep-alive connections are closed; requests
   in flight finish, for up to ``--drain-timeout`` seconds (default 20). Past it they are
   cancelled (uvicorn logs how many).
3. The engine stops (upstream servers first) and the process exits 0.

A second signal during the delay skips the rest of it; another during the wait for in-flight
requests on SIGINT ends them at once (uvicorn's force exit).

uvicorn (0.54) does steps 2-3 on its own for a signal, without the delay, and then raises the
signal again once it has stopped (exit status 143, not 0). And sse-starlette (the SDK's event
streams) ends *every* open event stream within 0.5 s of uvicorn's shutdown starting, the answer
stream of a ``tools/call`` still running included: the client got "SSE stream ended without a
response". :class:`DrainingServer` adds the delay, turns that off and ends the event streams
only once no request other than a ``GET`` (a session's standalone stream, which never ends on
its own) is in flight, and keeps the exit clean.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

#: Signals that start a drain.
DRAIN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class DrainingServer(uvicorn.Server):
    """uvicorn's server with the drain of the module docstring.

    Args:
        config: its ``timeout_graceful_shutdown`` is the drain timeout.
        delay: seconds between the signal and closing the listener.
        on_drain: called (from the signal handler: set flags only) when the drain starts.
    """

    def __init__(
        self, config: uvicorn.Config, *, delay: float, on_drain: Callable[[], None], in_flight: Callable[[], int]
    ) -> None:
        from sse_starlette.sse import AppStatus

        super().__init__(config)
        self.delay = delay
        self.on_drain = on_drain
        self.in_flight = in_flight
        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]  # process-wide: the gateway's own process
        #: ``time.monotonic()`` of the signal that started the drain, None before
        self.drain_started: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """A signal: start draining (the first), or cut the delay short (a later one)."""
        if self.drain_started is None and sig in DRAIN_SIGNALS:
            self.drain_started = time.monotonic()
            self.on_drain()
            if self.delay > 0:
                return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        """uvicorn's tick (every 0.1 s); ends the main loop once the drain delay is over."""
        if self.drain_started is not None and time.monotonic() - self.drain_started >= self.delay:
            self.should_exit = True
        return await super().on_tick(counter)

    async def shutdown(self, sockets: Any = None) -> None:
        """uvicorn's shutdown (listener closed, in-flight requests awaited up to the timeout,
        lifespan ended); then forget the captured signals, so that uvicorn does not raise them
        again: a drained gateway exits 0."""
        streams = asyncio.get_running_loop().create_task(self._end_streams_when_idle())
        errors = logging.getLogger("uvicorn.error")
        errors.addFilter(_cut_off_quietly)
        try:
            await super().shutdown(sockets=sockets)
        finally:
            errors.removeFilter(_cut_off_quietly)
            streams.cancel()
            if self.drain_started is not None:
                self._captured_signals.clear()

    async def _end_streams_when_idle(self) -> None:
        """Once no request but ``GET`` streams is in flight, let sse-starlette end the streams
        left (sessions' standalone streams), so that the drain does not wait for them."""
        from sse_starlette.sse import AppStatus

        while self.in_flight() > 0:
            await asyncio.sleep(0.05)
        AppStatus.should_exit = True


def _cut_off_quietly(record: logging.LogRecord) -> bool:
    """Drop uvicorn's "Exception in ASGI application" traceback of a request it cancelled at the
    drain timeout: its "Cancel N running task(s), timeout graceful shutdown exceeded" line has
    said so already, and the request's own log line says ``error``. Other errors pass."""
    exc = record.exc_info[1] if record.exc_info else None
    return not (isinstance(exc, asyncio.CancelledError) and str(record.msg).startswith("Exception in ASGI"))
