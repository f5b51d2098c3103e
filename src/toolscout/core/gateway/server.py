"""The gateway's MCP server: the served tools, per-client state, serving while the engine starts.

Built on the MCP SDK's lowlevel :class:`mcp.server.Server` (the high-level ``MCPServer`` derives
tool schemas from Python signatures; the gateway serves upstream schemas as they are and needs
per-client tool lists and ``list_changed`` control). Every handler answers: a failing upstream
server, a bad argument or a refused permission is an ``isError`` tool result, never a crash.

Per client (a stdio connection, or one streamable-HTTP session) the gateway keeps a
:class:`ClientState`: the search tool's description as first listed (kept byte-stable), the tools
exposed so far (``dynamic`` exposure; the list only grows by appending) and tools the person
allowed "for the session". A 2026-07-28 HTTP request carries no session, so it gets a fresh
state, as with ``--stateless``.

The handshake (``initialize`` / ``server/discover``) and ``tools/list`` never wait for the
engine: :meth:`Gateway.run` starts the upstream servers and then the search index alongside the
transport (on stdio only once the first request is answered, so the handshake does not compete
with N starting servers for the CPU), and only requests that need them (search, call, resource
reads) wait (:meth:`Gateway.ready`).

``tools.listChanged`` is declared true exactly where ``notifications/tools/list_changed`` may be
sent: ``--expose dynamic`` on a connection with client state, in the ``initialize`` result and in
the 2026-07-28 ``server/discover`` result alike (there it is delivered on the client's
``subscriptions/listen`` stream).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolscout import __version__

from ..calls.result_cap import DEFAULT_MAX_RESULT_TOKENS
from ..engine.facade import Engine
from ..mcp.elicitation import Elicitor
from ..models import ToolErrorKind, ToolResult, ToolSpec
from ..policy.approvals import Fingerprint
from ..serialize import dumps
from ..tokens import default_counter
from . import resources
from .asking import ElicitingAsker, can_elicit, forward_question
from .clients import principal_of, request_state_boundary, session_id_of
from .passthrough import Passthrough
from .prebuilt import ranker_settled
from .progress import forwarded_progress
from .results import (
    RESULTS_URI,
    CappedResults,
    cap_answer,
    error_result,
    json_result,
    to_call_result,
)
from .revive import Reviver
from .routing import JoinedBus
from .served import (
    CALL_TOOL,
    MAX_RESULTS,
    SEARCH_TOOL,
    announcement,
    call_tool,
    exposed_tool,
    search_answer,
    search_tool,
    served_name,
)
from .starting import EngineStart

log = logging.getLogger(__name__)

EXPOSE_MODES = ("static", "dynamic")


class _ListChangedServer(Server[Any]):
    """The SDK's lowlevel server whose ``initialize`` result declares ``tools.listChanged`` as
    given: the streamable-HTTP runner builds it from :meth:`create_initialization_options` with no
    arguments, which would always say false (the stdio runner is handed the options)."""

    def __init__(self, tools_changed: bool, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tools_changed = tools_changed
        #: upstream prompt and resource list changes are passed on (:mod:`.passthrough`)
        self.passed_changes = True

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's, with ``tools_changed`` as :attr:`tools_changed` unless options are given."""
        return super().create_initialization_options(
            notification_options or NotificationOptions(self.passed_changes, self.passed_changes, self.tools_changed),
            experimental_capabilities,
            extensions,
        )


#: Prefixes of the gateway's own resource URIs (any other URI is an upstream server's).
OWN_URIS = ("toolscout://catalog", "toolscout://context", RESULTS_URI)
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
        exposed: served name (:func:`~.served.served_name`) → served definition of tools exposed
            by search (insertion order).
        canonical: served name → canonical name of each exposed tool.
        remembered: tools the person allowed for the rest of this client's session, each with the
            fingerprint of the definition allowed (a tool changed since asks again).
        wait_until: when (``anyio.current_time()``) the wait of its first requests for
            connecting servers ends (None until its first request; see :meth:`Gateway.ready`).
        bus: where ``tools/list_changed`` goes for a 2026-07-28 client's listen streams.
    """

    announced: str | None = None
    wait_until: float | None = None
    exposed: dict[str, dict[str, Any]] = field(default_factory=dict)
    canonical: dict[str, str] = field(default_factory=dict)
    remembered: dict[str, Fingerprint] = field(default_factory=dict)
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    listen: ListenHandler | None = None

    def resolve(self, name: str) -> str | None:
        """The canonical name of exposed tool ``name`` (its served or canonical name), or None."""
        if name in self.canonical:
            return self.canonical[name]
        return name if name in self.canonical.values() else None


class Gateway:
    """The MCP server in front of an engine's upstream servers.

    Args:
        engine: a started (or starting) engine; its catalog, search, permission rules and
            executor are used as they are. Call ``engine.forward_questions()`` before starting
            it, so upstream servers may ask this gateway's clients questions.
        expose: ``static`` (two tools, always) or ``dynamic`` (tools found by search appended).
        stateless: HTTP without sessions: nothing is remembered between requests.
        first_list_wait: seconds from a client's first request during which its searches, calls
            and resource reads wait for servers that are still connecting (0: answer at once);
            ``tools/list`` never waits.

    Raises:
        ValueError: unknown ``expose`` mode.
    """

    def __init__(
        self, engine: Engine, *, expose: str = "static", stateless: bool = False, first_list_wait: float = 0.0
    ) -> None:
        if expose not in EXPOSE_MODES:
            raise ValueError(f"expose must be one of {', '.join(EXPOSE_MODES)}, not {expose!r}")
        self.engine = engine
        self.expose = expose
        self.stateless = stateless
        self.first_list_wait = first_list_wait
        self._clients: OrderedDict[str, ClientState] = OrderedDict()
        self.starting = EngineStart(engine)
        #: most client states kept (raised by serve_http above the sessions it allows)
        self.max_clients = MAX_CLIENTS
        #: reconnects a crashed stdio server when a call needs it (its clients cannot)
        self.reviver = Reviver(engine)
        engine.executor.reconnect_advice = "restart toolscout serve (tell the user)"
        engine.set_search_advice(f"Use {SEARCH_TOOL} to find tools by what they do.")  # its name here
        engine.executor.revive = self.reviver.before_call  # a server gone between lookup and send
        # The app's result cap (``tools.maxResultTokens`` once that setting exists).
        self.results = CappedResults(int(engine.settings.get("tools.maxResultTokens") or DEFAULT_MAX_RESULT_TOKENS))
        self.passthrough = Passthrough(engine, self.ready)  # upstream prompts, resources, templates, completion
        self.server: Server[Any] = _ListChangedServer(
            expose == "dynamic",
            "toolscout",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=self._listen,
            on_list_resource_templates=self.passthrough.list_templates,
            on_subscribe_resource=self.passthrough.subscribe,
            on_unsubscribe_resource=self.passthrough.unsubscribe,
            on_list_prompts=self.passthrough.list_prompts,
            on_get_prompt=self.passthrough.get_prompt,
            on_completion=self.passthrough.complete,
        )
        self.server.passed_changes = not stateless  # a stateless client cannot be told of changes
        self.server.add_request_handler("server/discover", types.RequestParams, self._discover)
        self.server.middleware.append(self._after_first_request)
        # 2026-07-28 permission answers only count with the state this gateway sealed for that client
        self.server.middleware.append(request_state_boundary())

    def initialization_options(self) -> InitializationOptions:
        """Capabilities for ``initialize``: ``tools.listChanged`` only with dynamic exposure."""
        return self.server.create_initialization_options()

    # -- the engine's start ------------------------------------------------------------------
    async def run(self, transport: Callable[[], Awaitable[None]], *, start_at_once: bool = True) -> None:
        """Serve with ``transport()`` (stdio or HTTP) while the engine starts alongside
        (:class:`~.starting.EngineStart`); stop the engine when the transport ends (the client
        left, or this task was cancelled). Call on the loop that serves.

        Args:
            start_at_once: start the upstream servers now (HTTP); False (stdio): once the
                client's first request has been answered, or a request needs them.
        """
        try:
            if start_at_once:
                self.starting.begin()
            await transport()
        finally:
            with anyio.CancelScope(shield=True):
                await self.starting.settle()
                await self.engine.stop()

    async def _after_first_request(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        finally:
            if not self.starting.begun:
                self.starting.begin()

    # -- per-client state ---------------------------------------------------------------------
    def client(self, ctx: ServerRequestContext[Any, Any]) -> ClientState:
        """The state of the client behind ``ctx`` (keyed by its HTTP session id; stdio has one)."""
        headers = _headers(ctx)
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

    def _first_seen(self, ctx: ServerRequestContext[Any, Any]) -> ClientState:
        state = self.client(ctx)
        if state.wait_until is None:
            state.wait_until = anyio.current_time() + self.first_list_wait
        return state

    def forget(self, session_id: str) -> None:
        """Drop the state of an HTTP session that ended (its client's others are kept)."""
        self._clients.pop(session_id, None)

    @staticmethod
    def owner(ctx: ServerRequestContext[Any, Any]) -> str:
        """Who may read back what a request leaves behind (a capped result's full text): its
        HTTP session, else its client (:mod:`.clients`), else the one stdio client."""
        return session_id_of(ctx) or principal_of(ctx.request) or "stdio"

    async def ready(self, ctx: ServerRequestContext[Any, Any], *, search: bool = False) -> ClientState:
        """The client's state, once the engine has started and servers still connecting have
        settled or the client's wait for them is over: ``first_list_wait`` seconds from its
        first request (``tools/list`` included, which itself never waits).

        Every request that needs servers waits in that window, not only the first: a client that
        sends ``tools/list`` and, without waiting for the answer, a search, has its search wait
        for the servers (it would otherwise run against a catalog without their tools).
        Requests after the window, or with nothing connecting, do not wait. A ``search`` does
        not wait for servers whose tools a prebuilt index gave, but for the ranker
        (:mod:`.prebuilt`).
        """
        state = self._first_seen(ctx)
        await self.starting.wait()
        if search:
            await ranker_settled(self.starting)
        left = (state.wait_until or 0.0) - anyio.current_time()
        if left > 0 and (self.engine.unindexed_pending() if search else self.engine.pending_servers()):
            await self.engine.wait_for_servers(left)
        return state

    def served_tools(self, state: ClientState) -> list[dict[str, Any]]:
        """The tool list served to a client: the announcement as first listed (or as it would be
        now, before that), the call tool, the tools exposed to it."""
        announced = state.announced or announcement(self.mcp_tools(), self.engine.unindexed_pending())
        return [search_tool(announced), call_tool(), *state.exposed.values()]

    def mcp_tools(self) -> list[ToolSpec]:
        """Visible upstream tools (built-ins of the engine are never served)."""
        return [t for t in self.engine.catalog.tools() if t.server is not None]

    # -- handlers ------------------------------------------------------------------------------
    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        state = self._first_seen(ctx)  # at once: the announcement names servers still connecting
        if state.announced is None:
            state.announced = announcement(self.mcp_tools(), self.engine.unindexed_pending())
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in self.served_tools(state)])

    def keeps_state(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        """True when the client behind ``ctx`` has a :class:`ClientState` across requests (stdio,
        a streamable-HTTP session), so a list it was served can change for it."""
        headers = _headers(ctx)
        return not self.stateless and (headers is None or headers.get("mcp-session-id") is not None)

    async def _discover(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.DiscoverResult:
        """``server/discover`` (2026-07-28): the capabilities ``initialize`` declares, with
        ``tools.listChanged`` true where it may be sent (the SDK's default derives it from the
        listen handler alone, and would also claim resource subscriptions)."""
        changes = self.expose == "dynamic" and self.keeps_state(ctx)
        # upstream prompt/resource list changes reach any listen stream (passthrough.bus)
        capabilities = self.server.get_capabilities(NotificationOptions(True, True, tools_changed=changes))
        if capabilities.resources is not None:  # resources/subscribe is not on the 2026-07-28 wire
            capabilities.resources.subscribe = False
        return types.DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=capabilities,
            instructions=self.server.instructions,
        )

    async def _listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """``subscriptions/listen`` (2026-07-28): this client's stream of ``tools/list_changed``
        (``dynamic``) and of upstream prompt and resource list changes."""
        state = self.client(ctx)
        if state.listen is None:
            state.listen = ListenHandler(JoinedBus(state.bus, self.passthrough.bus), max_subscriptions=8)
        return await state.listen(ctx, params)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        args = params.arguments or {}
        try:
            await self.ready(ctx, search=params.name == SEARCH_TOOL)
            if params.name == SEARCH_TOOL:
                return await self._search(ctx, args)
            state = self.client(ctx)
            if params.name == CALL_TOOL:
                if set(args) - {"name", "arguments"} or not isinstance(args.get("name"), str):
                    return error_result(
                        f'{CALL_TOOL} takes {{"name": "<canonical tool name>", "arguments": '
                        f"{{...}}}}; got {dumps(args)[:500]}"
                    )
                name = state.resolve(args["name"]) or args["name"]  # an exposed tool's served name too
                return await self.call(ctx, name, args.get("arguments"), params)
            exposed = state.resolve(params.name)
            if exposed is not None:
                return await self.call(ctx, exposed, args, params)
            return error_result(
                f"Unknown tool {params.name!r}: this server serves {SEARCH_TOOL} and {CALL_TOOL}"
                + (" and the tools its searches exposed." if self.expose == "dynamic" else ".")
            )
        except Exception as exc:  # the gateway answers every call
            log.exception("tools/call %s failed", params.name)
            return error_result(f"toolscout gateway error during {params.name}: {type(exc).__name__}: {exc}")

    async def _search(self, ctx: ServerRequestContext[Any, Any], args: dict[str, Any]) -> types.CallToolResult:
        query, limit = args.get("query"), args.get("max_results")
        extra = set(args) - {"query", "max_results"}
        if (
            not isinstance(query, str)
            or extra
            or (
                limit is not None
                and (not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_RESULTS)
            )
        ):
            return error_result(
                f'{SEARCH_TOOL} takes {{"query": string, "max_results": integer 1-{MAX_RESULTS} '
                f"(optional)}}; got {dumps(args)[:500]}"
            )
        # Ranking is CPU work (and may wait for the dense model): off the event loop, so other
        # clients and upstream notifications keep flowing. ToolSearch locks its index itself.
        result = await anyio.to_thread.run_sync(self.engine.search_tools, query, limit)
        result.hits = [h for h in result.hits if h.tool.server is not None]
        answer = search_answer(result, self.engine.catalog.instructions)
        waiting = self.unapproved_note()
        if waiting:
            answer.setdefault("notes", []).append(waiting)
        if self.expose == "dynamic" and not self.stateless:
            await self._expose(
                ctx, [h.tool for h in result.hits if not h.tool.needs_task]
            )  # never offered, then refused
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
        return (
            f"Not started because the person has not approved this project folder ({trust.folder}): "
            f"{', '.join(names)}. To approve it, {trust.how_to_approve()} (restart the gateway after)."
        )

    async def _expose(self, ctx: ServerRequestContext[Any, Any], tools: list[ToolSpec]) -> None:
        if not self.keeps_state(ctx):
            return  # nothing would remember the longer list
        state = self.client(ctx)
        added = [t for t in tools if state.resolve(t.name) is None]
        for tool in added:
            name = served_name(tool.name, state.exposed)
            state.exposed[name] = exposed_tool(tool, name)
            state.canonical[name] = tool.name
        if not added:
            return
        try:
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await state.bus.publish(ToolsListChanged())  # to the client's listen streams
            else:
                await ctx.session.send_notification(
                    types.ToolListChangedNotification(), related_request_id=ctx.request_id
                )
        except Exception as exc:  # a lost notification must not fail the search
            log.warning("could not send tools/list_changed: %s", exc)

    async def call(
        self, ctx: ServerRequestContext[Any, Any], name: str, arguments: Any, params: Any
    ) -> types.CallToolResult | types.InputRequiredResult:
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
        asker = ElicitingAsker(ctx, state.remembered, params, self.engine.tool_change) if can_elicit(ctx) else None
        # the upstream server's own questions during the call go to this client (or are refused)
        elicitor = Elicitor(state, lambda server, question: forward_question(ctx, server, question))
        async with forwarded_progress(ctx) as progress:  # the upstream's progress, with the client's token
            result = await self.engine.call_tool(name, arguments, asker=asker, elicitor=elicitor, progress=progress)
        if asker is not None and asker.input_required is not None:
            return asker.input_required
        if asker is not None and asker.failure and result.error_kind is ToolErrorKind.PERMISSION_DENIED:
            result = ToolResult.error(
                result.tool_name, ToolErrorKind.PERMISSION_DENIED, f"{result.tool_name} was not run: {asker.failure}."
            )
        return to_call_result(self.results.cap(result, self.owner(ctx)))

    async def _list_resources(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourcesResult:
        own = [types.Resource.model_validate(r) for r in resources.RESOURCES]
        upstream = await self.passthrough.list_resources(ctx, {r.uri for r in own})
        return types.ListResourcesResult(resources=[*own, *upstream])

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if not uri.startswith(OWN_URIS):  # an upstream server's resource
            return await self.passthrough.read(ctx, uri)
        state = await self.ready(ctx)
        served_tokens = default_counter().count(dumps(self.served_tools(state)))
        text = resources.read(self.engine, uri, set(state.canonical.values()), served_tokens)
        if text is None and uri.startswith(RESULTS_URI):
            text = self.results.read(uri, self.owner(ctx))
        if text is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource {params.uri}")
        mime = "text/plain" if str(params.uri).startswith(RESULTS_URI) else "application/json"
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=str(params.uri), text=text, mime_type=mime)]
        )


def _headers(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The HTTP request headers of ``ctx`` (a mapping), or None on stdio."""
    request = ctx.request
    return getattr(request, "headers", None)
