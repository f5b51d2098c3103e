"""The person's side of a session: running a tool by hand, loading picked tools, offline search.

A mixin of :class:`~.session.Session` (kept apart so the conversation loop stays readable): each
action is recorded exactly as if the model had made the call (an assistant ``tool_use`` and its
``tool_result``), so resume, the discovered set and the prompt cache see no difference.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from ..models import ToolErrorKind, ToolResult
from .events import AssistantMessageDone, Recommendation, RecommendationsReady, TurnCancelled
from .projection import EXECUTE_TOOL, normalize_tool_use
from .tools import ToolRouter

CANCELLED_TEXT = "Cancelled: the user interrupted this tool call before it finished."


def tool_id() -> str:
    """A fresh ``tool_use`` id (``toolu_`` + 24 hex digits)."""
    return "toolu_" + uuid.uuid4().hex[:24]


class ManualDriver:
    """Tool calls the person makes (offline session, recommendation bar, argument form).

    Relies on the session's ``router``, ``projection``, ``emit``, ``_exclusive``, ``_append``,
    ``_append_user``, ``_repair`` and ``_loaded``.
    """

    router: ToolRouter
    projection: Any
    turn: int
    offline_recommendations: list[Recommendation]
    _loaded: set[str]
    emit: Callable[[Any], None]
    build_request: Callable[..., Any]
    _exclusive: Callable[[Any], Awaitable[Any]]
    _append: Callable[[dict[str, Any]], None]
    _append_user: Callable[[list[dict[str, Any]]], None]
    _repair: Callable[[str], None]

    async def run_tool(self, name: str, params: dict[str, Any]) -> ToolResult:
        """Run ``name`` with ``params`` as if the model had called it (offline driver, or a
        person running a tool by hand). Recorded as an assistant ``tool_use`` (ExecuteTool for
        deferred tools in execute-proxy mode) and a ``tool_result``.

        Raises:
            RuntimeError: a turn is already running.
        """
        result: ToolResult = await self._exclusive(self._manual_call(name, params))
        return result

    async def load_tools(self, names: list[str]) -> None:
        """Load deferred tools the person picked (the UI's recommendation bar) so the model has
        their full definitions with the next message. Recorded as a ToolSearch ``select:`` call,
        exactly as if the model had made it, so resume and the discovered set see it too.

        Raises:
            RuntimeError: a turn is already running.
        """
        wanted = [n for n in names if n not in self._loaded]
        if wanted:
            await self._exclusive(self._select_call(wanted))

    async def _select_call(self, names: list[str]) -> None:
        query = "select:" + ",".join(names)
        use = {"type": "tool_use", "id": tool_id(), "name": "ToolSearch", "input": {"query": query}}
        self._append({"role": "assistant", "content": [use]})
        try:
            block, _ = await self.router.run(use)
        except asyncio.CancelledError:
            self._repair(CANCELLED_TEXT)
            raise
        self._append_user([block])

    # -- offline driver -------------------------------------------------------------------
    async def _offline_search(self, text: str, turn: int) -> str:
        use = {"type": "tool_use", "id": tool_id(), "name": "ToolSearch", "input": {"query": text}}
        self._append({"role": "assistant", "content": [use]})
        self.emit(AssistantMessageDone("", 1, turn, "tool_use"))
        block, _ = await self.router.run(use)
        self._append_user([block])
        hits = self.router.last_search.hits if self.router.last_search is not None else []
        self.offline_recommendations = [
            Recommendation(h.tool.name, h.tool.server, float(h.score), h.tool.description, h.tool.input_schema)
            for h in hits
            if h.tool.name not in ("ToolSearch", EXECUTE_TOOL)
        ]
        if self.offline_recommendations:
            self.emit(RecommendationsReady(tuple(self.offline_recommendations), text, turn))
        return ""

    async def _manual_call(self, name: str, params: dict[str, Any]) -> ToolResult:
        self.build_request()  # fixes the projection, so the block uses a name the array defines
        assert self.projection is not None
        self._loaded.add(name)  # the person saw the schema: no self-healing round trip
        use = {"type": "tool_use", "id": tool_id(), "name": name, "input": dict(params)}
        use = normalize_tool_use(use, set(self.projection.names))
        self._append({"role": "assistant", "content": [use]})
        self.emit(AssistantMessageDone("", 1, self.turn, "tool_use"))
        try:
            block, result = await self.router.run(use)
        except asyncio.CancelledError:
            self._repair(CANCELLED_TEXT)
            self.emit(TurnCancelled(self.turn))
            return ToolResult.error(name, ToolErrorKind.CANCELLED, CANCELLED_TEXT)
        self._append_user([block])
        return result or ToolResult.ok(name, str(block["content"]))
