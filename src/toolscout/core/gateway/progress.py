"""A client's ``tools/call`` with a progress token: the upstream server's progress, forwarded.

A client asks for progress by putting ``_meta.progressToken`` in its request (MCP spec,
basic/utilities/progress). When it does, the gateway asks the upstream server for progress too
(the SDK's client puts a token of its own upstream: the upstream request id) and sends each
report it gets back to the client as ``notifications/progress`` with *the client's* token
(``ServerSession.report_progress`` of the request), in order, ``progress``, ``total`` and
``message`` as the upstream sent them. No token, no progress asked for upstream.

Cancellation needs nothing here: the SDK's server cancels the request's handler when its client
sends ``notifications/cancelled``, and cancelling the upstream call has the SDK's client send
``notifications/cancelled`` for it to the upstream server.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server import ServerRequestContext

from ..mcp.progress import Progress, Report

log = logging.getLogger(__name__)

#: Longest the reports still queued when a call ends may hold back its result (s).
DRAIN_S = 5.0


def progress_token(ctx: ServerRequestContext[Any, Any]) -> str | int | None:
    """The client's ``_meta.progressToken`` of the request behind ``ctx``, or None."""
    token = (ctx.meta or {}).get("progress_token")
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


@asynccontextmanager
async def forwarded_progress(ctx: ServerRequestContext[Any, Any]) -> AsyncIterator[Report | None]:
    """While the block runs, a :data:`~toolscout.core.mcp.progress.Report` that sends each
    report to the client of ``ctx`` (None when its request carried no progress token). Reports
    are sent in the order given, by a task of their own (a slow client does not hold up the
    call); when the block ends those not sent yet are sent before the result, for at most
    :data:`DRAIN_S` seconds (a client that reads nothing does not hold the result back for ever)."""
    if progress_token(ctx) is None:
        yield None
        return
    send, receive = anyio.create_memory_object_stream[Progress](math.inf)

    async def forward() -> None:
        async with receive:
            async for report in receive:
                try:
                    await ctx.session.report_progress(report.progress, report.total, report.message)
                except Exception as exc:  # a lost notification must not fail the call
                    log.debug("could not forward progress: %s", exc)

    def report(update: Progress) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):  # the call has ended
            send.send_nowait(update)

    async with anyio.create_task_group() as tg:
        tg.start_soon(forward)
        try:
            yield report
        finally:
            send.close()  # the forwarder ends once it has sent what is queued
            tg.cancel_scope.deadline = anyio.current_time() + DRAIN_S
