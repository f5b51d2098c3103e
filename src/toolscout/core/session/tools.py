"""Carrying out the tool calls of one assistant message: ToolSearch, ExecuteTool and direct calls.

ToolSearch is answered here (``Engine.search_tools`` + ``render_for_model``), with a trailer that
names the tools whose schemas were delivered (so the discovered set can be rebuilt from
history). ExecuteTool and direct calls go to ``Engine.call_tool``; events always carry the real
tool name and arguments. A direct call of a tool the answered request carried with its full
schema (:attr:`ToolRouter.sent_full`) runs; the self-healing gate is only for tools that request
deferred (a stub in the ``stub`` strategy) and no search has loaded. Text from tools and servers is untrusted and is only ever passed on as
a ``tool_result``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models import ToolErrorKind, ToolResult
from ..policy.permissions import Asker
from ..search.render import render_for_model
from ..search.results import SearchResult
from .events import SearchResultsReady, ToolCallFinished, ToolCallStarted
from .native import references
from .projection import EXECUTE_TOOL, TOOL_SEARCH
from .reminders import loaded_trailer

if TYPE_CHECKING:
    from ..engine.facade import Engine

DEFAULT_SEARCH_LIMIT = 5


class ToolRouter:
    """Runs one ``tool_use`` block and returns its ``tool_result`` block.

    Args:
        engine: the :class:`~toolscout.core.engine.facade.Engine` (``search_tools``, ``call_tool``, ``catalog``).
        emit: delivers session events.
        asker: ``async asker(tool, params) -> "allow_once" | "always" | "deny"`` or None (headless:
            tools that need permission are refused with a message naming the rule to add).
        loaded: the session's loaded (discovered) names; the self-healing gate adds to it.
        search_limit: default ``max_results`` of ToolSearch (``toolSearch.maxResults``).
    """

    def __init__(
        self,
        engine: Engine,
        emit: Callable[[Any], None],
        asker: Asker | None,
        loaded: set[str],
        search_limit: int = DEFAULT_SEARCH_LIMIT,
    ) -> None:
        self.engine = engine
        self.emit = emit
        self.asker = asker
        self.loaded = loaded
        self.search_limit = search_limit
        self.last_search: SearchResult | None = None
        #: The names the newest ToolSearch delivered (empty for a refused query).
        self.last_search_names: tuple[str, ...] = ()
        #: Tool-loading texts (ToolSearch results, gate definitions) in the order they were made.
        self.load_texts: list[str] = []
        #: ``(call_id, text) -> text`` applied to every result before the model (and the
        #: transcript) sees it: :func:`toolscout.core.calls.result_cap.cap_result`; None keeps it whole.
        self.result_cap: Callable[[str, str], str] | None = None
        #: Tool name → calls started (each ``ToolCallStarted``), for the token report's suggestions.
        self.calls: dict[str, int] = {}
        #: Provider-native deferral (:mod:`.native`): ToolSearch and the self-healing gate load
        #: tools with ``tool_reference`` blocks; set by the session with its projection.
        self.native = False
        #: Native on Anthropic's API: the self-healing gate answers with a ``tool_reference``.
        self.gate_by_reference = False
        #: Text for the user message that carries this step's results, beside them (native: a
        #: ``tool_result`` with references may hold nothing else); the session takes and clears it.
        self.sibling_notes: list[str] = []
        #: Names the request the model is answering carried with their full schema (the
        #: session sets it from its projection before each model request): a direct call of one
        #: of them runs, the self-healing gate holds back only tools that request deferred.
        #: None (no request sent yet): the catalog's deferral stands in.
        self.sent_full: frozenset[str] | None = None
        #: ``(call_id, result)`` of each ToolSearch answered: the session writes it to the
        #: transcript (a resumed session shows the search as it was shown live); None: nothing.
        self.record_search: Callable[[str, SearchResult], None] | None = None

    async def run(self, block: dict[str, Any]) -> tuple[dict[str, Any], ToolResult | None]:
        """Carry out ``block`` (a ``tool_use``).

        Returns:
            The matching ``tool_result`` block, and the :class:`ToolResult` (None for ToolSearch).
        """
        call_id, name, args = block["id"], block["name"], block.get("input") or {}
        result: ToolResult | None = None
        if name == TOOL_SEARCH:
            text, is_error = self.search(call_id, args)
            loaded = list(self.last_search_names) if not is_error else []
            if self.native and loaded:  # the API expands the references into the full definitions
                self.sibling_notes.append("Tools loaded: " + ", ".join(loaded) + ".")
                found = self.last_search.already_loaded if self.last_search is not None else []
                if found:  # in the tool list already (no reference: the API defers none of them)
                    self.sibling_notes.append("Already loaded, call directly (no search needed): " + ", ".join(found))
                return {"type": "tool_result", "tool_use_id": call_id, "content": references(loaded)}, None
        elif name == EXECUTE_TOOL:
            # params may be a JSON string (some models send that); the executor parses it.
            target, params = args.get("tool_name"), args.get("params", {})
            if not isinstance(target, str) or not target:
                result = self._refused(
                    call_id,
                    args,
                    ToolResult.error(
                        EXECUTE_TOOL,
                        ToolErrorKind.INVALID_PARAMS,
                        "ExecuteTool needs tool_name (the exact tool name) and params (an object).",
                    ),
                )
            elif target in (TOOL_SEARCH, EXECUTE_TOOL):
                result = self._refused(
                    call_id,
                    args,
                    ToolResult.error(target, ToolErrorKind.INVALID_PARAMS, self._not_through_proxy(target)),
                )
            else:
                result = await self.call(call_id, target, params, via=EXECUTE_TOOL)
            text, is_error = self._result_text(result), result.is_error
        else:
            result = await self.call(call_id, name, args, via="direct")
            if self.gate_by_reference and result.error_kind is ToolErrorKind.NOT_LOADED:
                self.sibling_notes.append(
                    f"{result.tool_name} was called before it was loaded, so the call was "
                    "not sent. It is loaded now: call it again."
                )
                return {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": references([result.tool_name]),
                }, result
            text, is_error = self._result_text(result), result.is_error
        if self.result_cap is not None:
            text = self.result_cap(call_id, text)
        return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}, result

    def _not_through_proxy(self, target: str) -> str:
        """Why ExecuteTool refuses ``target`` (ToolSearch or itself). A request without
        ToolSearch (tool search off, or ``auto`` below its threshold: every tool inline) gets
        there when the model called ToolSearch anyway (the invented name became an ExecuteTool
        call): it is told there is nothing to search, not to call a tool it does not have."""
        if target == TOOL_SEARCH and self.sent_full is not None and TOOL_SEARCH not in self.sent_full:
            return (
                "ToolSearch is not available in this session: nothing is deferred, every tool is already "
                "in your tool list with its full schema. Call the tool you need directly by name."
            )
        return f"Call {target} directly, not through ExecuteTool."

    def _refused(self, call_id: str, args: Any, result: ToolResult) -> ToolResult:
        """An ExecuteTool call refused before any tool was looked up: still reported as a call
        (started and finished events), so transcripts and ``-p --output-format json`` list it."""
        shown = args if isinstance(args, dict) else {"_raw": args}
        self._started(ToolCallStarted(call_id, result.tool_name, shown, EXECUTE_TOOL))
        self.emit(ToolCallFinished(call_id, result.tool_name, shown, result, EXECUTE_TOOL))
        return result

    def _started(self, event: ToolCallStarted) -> None:
        self.calls[event.tool_name] = self.calls.get(event.tool_name, 0) + 1
        self.emit(event)

    def search(self, call_id: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Answer a ToolSearch call; returns (tool_result text, is_error). The hits' names are
        :attr:`last_search_names`."""
        self.last_search_names = ()
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return 'ToolSearch needs a non-empty query: "select:NAME" or keywords.', True
        limit = args.get("max_results")
        limit = limit if isinstance(limit, int) and 1 <= limit <= 50 else self.search_limit
        result = self.engine.search_tools(query, limit)
        text = render_for_model(result, self.engine.catalog)
        loaded = set(result.already_loaded)  # in the tool list already: no definition delivered
        names = tuple(h.tool.name for h in result.hits if h.tool.name not in loaded)
        self.last_search_names = names
        self.loaded.update(names)
        if names:
            text = f"{text}\n{loaded_trailer(names)}"
        self.last_search = result
        self.load_texts.append(text)
        if self.record_search is not None:
            self.record_search(call_id, result)
        self.emit(SearchResultsReady(call_id, query, result, text, names))
        return text, False

    async def call(self, call_id: str, name: str, params: Any, *, via: str) -> ToolResult:
        """Run a tool through the engine's executor, emitting started/finished events."""
        shown = params if isinstance(params, dict) else {"_raw": params}
        self._started(ToolCallStarted(call_id, name, shown, via))
        direct = via == "direct" and name not in self.loaded
        try:
            result = await self.engine.call_tool(
                name,
                params,
                asker=self.asker,
                direct=direct,
                loaded=self.loaded,
                sent_full=self.sent_full,
                call_id=call_id,  # the server's progress: ToolCallProgress events with the call's id
            )
        except BaseException as exc:
            cancelled = ToolResult.error(name, ToolErrorKind.CANCELLED, "The call was cancelled by the user.")
            self.emit(ToolCallFinished(call_id, name, shown, cancelled, via))
            raise exc
        if not result.is_error:
            self.loaded.add(result.tool_name or name)
        self.emit(ToolCallFinished(call_id, result.tool_name or name, shown, result, via))
        return result

    def _result_text(self, result: ToolResult) -> str:
        text = result.text() or ("(no output)" if not result.is_error else "(error without a message)")
        if result.error_kind is ToolErrorKind.NOT_LOADED:  # the gate delivered the definition
            text = f"{text}\n{loaded_trailer([result.tool_name])}"
            self.load_texts.append(text)
        return text
