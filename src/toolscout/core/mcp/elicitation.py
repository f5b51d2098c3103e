"""Questions an upstream server asks during a call (``elicitation/create``), routed to whoever
made the call: the gateway forwards them to its own client (:mod:`toolscout.core.gateway.asking`).

A connection forwards only when its pool was told to (:attr:`ServerPool.forward_elicitation`, set
by ``toolscout serve``); only then does it declare the elicitation capability upstream. The app
and the CLI declare nothing, so servers that check the capability keep their fallbacks there.

MCP does not say which request a server-to-client request belongs to (over stdio there is no
such link at all), so the question goes to the caller of the calls in flight on that server: each
call passes an :class:`Elicitor` naming its ``owner`` (the gateway's client). Calls of one owner
share it; calls of several owners in flight at once make the question ambiguous, and it is
refused rather than shown to the wrong person. While a question waits for its answer, the
call's ``mcp.callTimeout`` is paused (a person reading a form is not the server being slow).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types

#: ``async ask(server name, params) -> answer``: the answer goes upstream as it is (an
#: ``ErrorData`` is a refusal the server's ``elicit`` raises).
Ask = Callable[[str, types.ElicitRequestParams], Awaitable[types.ElicitResult | types.ErrorData]]


@dataclass(frozen=True, eq=False)
class Elicitor:
    """Who answers the questions of the server a call goes to.

    Attributes:
        owner: who the call is for (the gateway's client state); compared by identity.
        ask: answers one question; runs on ``loop``.
        loop: the event loop ``ask`` must run on (default: the one creating the elicitor).
    """

    owner: object
    ask: Ask
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.get_running_loop)


def refusal(message: str) -> types.ErrorData:
    """An answer that refuses the question, saying why (the server's ``elicit`` raises it)."""
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


class ElicitationRoutes:
    """The calls in flight on one connection that can answer its server's questions.

    Args:
        server: the server's name (passed to :attr:`Elicitor.ask`).
    """

    def __init__(self, server: str) -> None:
        self.server = server
        self._calls: list[tuple[Elicitor, anyio.CancelScope]] = []
        #: timeout scopes paused by questions waiting for answers: id → (questions, seconds left)
        self._paused: dict[int, tuple[int, float]] = {}

    @contextmanager
    def during(self, elicitor: Elicitor | None, scope: anyio.CancelScope) -> Iterator[None]:
        """Route questions to ``elicitor`` while the block runs (one call); ``scope`` is the
        call's timeout scope, paused while a question waits for its answer."""
        if elicitor is None:
            yield
            return
        entry = (elicitor, scope)
        self._calls.append(entry)
        try:
            yield
        finally:
            self._calls.remove(entry)

    async def answer(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        """The SDK client's ``elicitation_callback``: ask the owner of the calls in flight."""
        owners = {id(e.owner) for e, _ in self._calls}
        if not owners:
            return refusal(f"toolscout has no one to ask: no call to server {self.server} is waiting for an answer")
        if len(owners) > 1:
            return refusal(
                f"calls of several clients of toolscout are in flight on server {self.server}, so "
                "toolscout cannot tell whose question this is; it was not shown to anyone"
            )
        elicitor = self._calls[-1][0]
        scopes = [s for e, s in self._calls if e.owner is elicitor.owner]
        self._pause(scopes)
        try:
            answer: types.ElicitResult | types.ErrorData = await _on_loop(
                elicitor.loop, elicitor.ask(self.server, params)
            )
            return answer
        except Exception as exc:  # a broken exchange refuses, never answers for the person
            return refusal(f"the question could not be asked ({type(exc).__name__}: {exc})")
        finally:
            self._resume(scopes)

    def _pause(self, scopes: list[anyio.CancelScope]) -> None:
        now = anyio.current_time()
        for scope in scopes:
            count, left = self._paused.get(id(scope), (0, scope.deadline - now))
            self._paused[id(scope)] = (count + 1, left)
            scope.deadline = math.inf

    def _resume(self, scopes: list[anyio.CancelScope]) -> None:
        now = anyio.current_time()
        for scope in scopes:
            count, left = self._paused.pop(id(scope), (1, 0.0))
            if count > 1:
                self._paused[id(scope)] = (count - 1, left)
            else:
                scope.deadline = now + left


async def _on_loop(loop: asyncio.AbstractEventLoop, coro: Awaitable[Any]) -> Any:
    """Await ``coro`` on ``loop`` (this one, or another thread's); cancelling cancels it there."""
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))  # type: ignore[arg-type]
