"""The gateway's MCP server: the served tools, per-client state, and the stdio transport.

Built on the MCP SDK's lowlevel :class:`mcp.server.Server` (the high-level ``MCPServer`` derives
tool schemas from Python signatures; the gateway serves upstream schemas as they are and needs
per-client tool lists and ``list_changed`` control). Every handler answers: a failing upstream
server, a bad argument or a refused permission is an ``isError`` tool result, never a crash.

Per client (a stdio connection, or one streamable-HTTP session) the gateway keeps a
:class:`ClientState`: the search tool's description as first listed (kept byte-stable), the tools
exposed so far (``dynamic`` exposure; the list only grows by appending) and tools the person
allowed "for the session".
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolscout import __version__

from ..calls.result_cap import DEFAULT_MAX_RESULT_TOKENS
from ..engine.facade import Engine
from ..mcp.elicitation import Elicitor
from ..models import ToolErrorKind, ToolResult, ToolSpec
from ..serialize import dumps
from ..tokens import default_counter
from . import resources
from .asking import ElicitingAsker, can_elicit, forward_question
from .clients import principal_of, request_state_boundary, session_id_of
from .results import (
    RESULTS_URI,
    CappedResults,
    cap_answer,
    error_result,
    json_result,
    to_call_result,
)
from .revive import Reviver
from .served import (
    CALL_TOOL,
    MAX_RESULTS,
    SEARCH_TOOL,
    announcement,
    call_tool,
    exposed_tool,
    search_answer,
    search_tool,
)

log = logging.getLogger(__name__)

EXPOSE_MODES = ("static", "dynamic")
#: Most client states kept (streamable-HTTP sessions; the oldest is forgotten first).
MAX_CLIENTS = 1_024
INSTRUCTIONS = (
    "toolscout gateway: the tools of the user's MCP servers are not listed one by one. Find them with "
    f"{SEARCH_TOOL} (keywords, or select:NAME), then run them with {CALL_TOOL} using the exact name and "
    "the inputSchema from the search results. Permission rules of the user apply to every call."
)


@dataclass
class ClientState:
    """What the gateway remembers about one client.

    Attributes:
        announced: the search tool's announcement as first listed (None until then).
        exposed: canonical name → served definition of tools exposed by search (insertion order).
        remembered: tools the person allowed for the rest of this client's session.
        wait_until: when (``anyio.current_time()``) the wait of its first requests for
            connecting servers ends (None until its first request; see :meth:`Gateway.ready`).
    """

    announced: str | None = None
    wait_until: float | None = None
    exposed: dict[str, dict[str, Any]] = field(default_factory=dict)
    remembered: set[str] = field(default_factory=set)


class Gateway:
    """The MCP server in front of an engine's upstream servers.

    Args:
        engine: a started (or starting) engine; its catalog, search, permission rules and
            executor are used as they are. Call ``engine.forward_questions()`` before starting
            it, so upstream servers may ask this gateway's clients questions.
        expose: ``static`` (two tools, always) or ``dynamic`` (tools found by search appended).
        stateless: HTTP without sessions: nothing is remembered between requests.
        first_list_wait: seconds a client's first ``tools/list`` waits for servers that are still
            connecting, so the announcement it keeps names their tools (0: answer at once).

    Raises:
        ValueError: unknown ``expose`` mode.
    """

    def __init__(self, engine: Engine, *, expose: str = "static", stateless: bool = False,
                 first_list_wait: float = 0.0) -> None:
        if expose not in EXPOSE_MODES:
            raise ValueError(f"expose must be one of {', '.join(EXPOSE_MODES)}, not {expose!r}")
        self.engine = engine
        self.expose = expose
        self.stateless = stateless
        self.first_list_wait = first_list_wait
        self._clients: OrderedDict[str, ClientState] = OrderedDict()
        #: most client states kept (raised by serve_http above the sessions it allows)
        self.max_clients = MAX_CLIENTS
        #: reconnects a crashed stdio server when a call needs it (its clients cannot)
        self.reviver = Reviver(engine)
        engine.executor.reconnect_advice = "restart toolscout serve (tell the user)"
        engine.set_search_advice(f"Use {SEARCH_TOOL} to find tools by what they do.")  # its name here
        engine.executor.revive = self.reviver.before_call  # a server gone between lookup and send
        # The app's result cap (``tools.maxResultTokens`` once that setting exists).
        self.results = CappedResults(int(engine.settings.get("tools.maxResultTokens") or DEFAULT_MAX_RESULT_TOKENS))
        self.server: Server[Any] = Server(
            "toolscout", version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources, on_read_resource=self._read_resource,
        )
        # 2026-07-28 permission answers only count with the state this gateway sealed for that client
        self.server.middleware.append(request_state_boundary())

    def initialization_options(self) -> InitializationOptions:
        """Capabilities for ``initialize``: ``tools.listChanged`` only with dynamic exposure."""
        return self.server.create_initialization_options(NotificationOptions(tools_changed=self.expose == "dynamic"))

    # -- per-client state ---------------------------------------------------------------------
    def client(self, ctx: ServerRequestContext[Any, Any]) -> ClientState:
        """The state of the client behind ``ctx`` (keyed by its HTTP session id; stdio has one)."""
        request = ctx.request
        headers = getattr(request, "headers", None)
        key = headers.get("mcp-session-id") if headers is not None else "stdio"
        if key is None or self.stateless:
            return ClientState()
        state = self._clients.get(key)
        if state is None:
            state = self._clients[key] = ClientState()
            while len(self._clients) > self.max_clients:  # a backstop: the HTTP session book ends sessions first
                self._clients.popitem(last=False)
        self._clients.move_to_end(key)
        return state

    def forget(self, session_id: str) -> None:
        """Drop the state of an HTTP session that ended (its client's others are kept)."""
        self._clients.pop(session_id, None)

    @staticmethod
    def owner(ctx: ServerRequestContext[Any, Any]) -> str:
        """Who may read back what a request leaves behind (a capped result's full text): its
        HTTP session, else its client (:mod:`.clients`), else the one stdio client."""
        return session_id_of(ctx) or principal_of(ctx.request) or "stdio"

    async def ready(self, ctx: ServerRequestContext[Any, Any]) -> ClientState:
        """The client's state, once servers still connecting have settled or the client's wait
        for them is over: ``first_list_wait`` seconds from its first request.

        Every request the client sends in that window waits, not only the first: a client that
        sends ``tools/list`` and, without waiting for the answer, a search, has its search wait
        for the same servers (it would otherwise run against a catalog without their tools).
        Requests after the window, or with nothing connecting, do not wait.
        """
        state = self.client(ctx)
        now = anyio.current_time()
        if state.wait_until is None:
            state.wait_until = now + self.first_list_wait
        left = state.wait_until - now
        if left > 0 and self.engine.pending_servers():
            await self.engine.wait_for_servers(left)
        return state

    def served_tools(self, state: ClientState) -> list[dict[str, Any]]:
        """The tool list served to a client (the announcement is fixed at its first listing)."""
        if state.announced is None:
            state.announced = announcement(self.mcp_tools(), self.engine.pending_servers())
        return [search_tool(state.announced), call_tool(), *state.exposed.values()]

    def mcp_tools(self) -> list[ToolSpec]:
        """Visible upstream tools (built-ins of the engine are never served)."""
        return [t for t in self.engine.catalog.tools() if t.server is not None]

    # -- handlers ------------------------------------------------------------------------------
    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        state = await self.ready(ctx)
        tools = self.served_tools(state)
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        args = params.arguments or {}
        try:
            await self.ready(ctx)
            if params.name == SEARCH_TOOL:
                return await self._search(ctx, args)
            if params.name == CALL_TOOL:
                if set(args) - {"name", "arguments"} or not isinstance(args.get("name"), str):
                    return error_result(f"{CALL_TOOL} takes {{\"name\": \"<canonical tool name>\", \"arguments\": "
                                        f"{{...}}}}; got {dumps(args)[:500]}")
                return await self.run(ctx, args["name"], args.get("arguments"), params)
            state = self.client(ctx)
            if params.name in state.exposed:
                return await self.run(ctx, params.name, args, params)
            return error_result(f"Unknown tool {params.name!r}: this server serves {SEARCH_TOOL} and {CALL_TOOL}"
                                + (" and the tools its searches exposed." if self.expose == "dynamic" else "."))
        except Exception as exc:  # the gateway answers every call
            log.exception("tools/call %s failed", params.name)
            return error_result(f"toolscout gateway error during {params.name}: {type(exc).__name__}: {exc}")

    async def _search(self, ctx: ServerRequestContext[Any, Any], args: dict[str, Any]) -> types.CallToolResult:
        query, limit = args.get("query"), args.get("max_results")
        extra = set(args) - {"query", "max_results"}
        if not isinstance(query, str) or extra or (limit is not None and (
                not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_RESULTS)):
            return error_result(f"{SEARCH_TOOL} takes {{\"query\": string, \"max_results\": integer 1-{MAX_RESULTS} "
                                f"(optional)}}; got {dumps(args)[:500]}")
        # Ranking is CPU work (and may wait for the dense model): off the event loop, so other
        # clients and upstream notifications keep flowing. ToolSearch locks its index itself.
        result = await anyio.to_thread.run_sync(self.engine.search_tools, query, limit)
        result.hits = [h for h in result.hits if h.tool.server is not None]
        answer = search_answer(result, self.engine.catalog.instructions)
        waiting = self.unapproved_note()
        if waiting:
            answer.setdefault("notes", []).append(waiting)
        if self.expose == "dynamic" and not self.stateless:
            await self._expose(ctx, [h.tool for h in result.hits])
        # capped like tool results; serializing a hostile server's huge schemas is CPU work too
        capped = await anyio.to_thread.run_sync(cap_answer, answer, self.results.limit, self.results.counter)
        return json_result(capped)

    def unapproved_note(self) -> str:
        """``""``, or a note saying which configured servers are not started because the
        project folder is not approved, and how the person approves it (the gateway cannot ask)."""
        names = [cfg.name for cfg in self.engine.unapproved_servers()]
        trust = self.engine.folder_trust
        if not names or trust is None:
            return ""
        return (f"Not started because the person has not approved this project folder ({trust.folder}): "
                f"{', '.join(names)}. To approve it, {trust.how_to_approve()} (restart the gateway after).")

    async def _expose(self, ctx: ServerRequestContext[Any, Any], tools: list[ToolSpec]) -> None:
        state = self.client(ctx)
        served = {SEARCH_TOOL, CALL_TOOL, *state.exposed}
        added = [t for t in tools if t.name not in served]
        for tool in added:
            state.exposed[tool.name] = exposed_tool(tool)
        if added and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            try:
                await ctx.session.send_notification(types.ToolListChangedNotification(),
                                                    related_request_id=ctx.request_id)
            except Exception as exc:  # a lost notification must not fail the search
                log.warning("could not send tools/list_changed: %s", exc)

    async def run(self, ctx: ServerRequestContext[Any, Any], name: str, arguments: Any,
                  params: Any) -> types.CallToolResult | types.InputRequiredResult:
        """Run upstream tool ``name`` for the client of ``ctx`` (ExecuteTool semantics: looked up,
        validated against its projected schema, permission rules applied, result passed through);
        a stdio server that disconnected is reconnected first (:mod:`.revive`).

        Returns:
            The tool's result; an ``isError`` result for every refusal; ``InputRequiredResult``
            when a 2026-07-28 client must answer the permission question first.
        """
        down = await self.reviver.before_call(name)
        if down is not None:
            return to_call_result(down)
        found = self.engine.executor.lookup(name)
        if isinstance(found, ToolSpec) and found.server is None:
            return error_result(f"Unknown tool {name!r}. Use {SEARCH_TOOL} to find tools by what they do.")
        state = self.client(ctx)
        asker = ElicitingAsker(ctx, state.remembered, params) if can_elicit(ctx) else None
        # the upstream server's own questions during the call go to this client (or are refused)
        elicitor = Elicitor(state, lambda server, question: forward_question(ctx, server, question))
        result = await self.engine.call_tool(name, arguments, asker=asker, elicitor=elicitor)
        if asker is not None and asker.input_required is not None:
            return asker.input_required
        if asker is not None and asker.failure and result.error_kind is ToolErrorKind.PERMISSION_DENIED:
            result = ToolResult.error(result.tool_name, ToolErrorKind.PERMISSION_DENIED,
                                      f"{result.tool_name} was not run: {asker.failure}.")
        return to_call_result(self.results.cap(result, self.owner(ctx)))

    async def _list_resources(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource.model_validate(r) for r in resources.RESOURCES])

    async def _read_resource(self, ctx: ServerRequestContext[Any, Any],
                             params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        state = await self.ready(ctx)
        served_tokens = default_counter().count(dumps(self.served_tools(state)))
        text = resources.read(self.engine, str(params.uri), state.exposed, served_tokens)
        if text is None and str(params.uri).startswith(RESULTS_URI):
            text = self.results.read(str(params.uri), self.owner(ctx))
        if text is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource {params.uri}")
        mime = "text/plain" if str(params.uri).startswith(RESULTS_URI) else "application/json"
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text=text,
                                                                             mime_type=mime)])


async def serve_stdio(gateway: Gateway) -> None:
    """Serve ``gateway`` on this process's stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await gateway.server.run(read_stream, write_stream, gateway.initialization_options())
