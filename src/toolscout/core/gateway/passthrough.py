"""Upstream prompts, resources, resource templates and completion, served by the gateway.

Each connected upstream server that declares the capability is asked when a client asks
(nothing is cached beyond the last listing, which routes later requests), and what it answers
is passed on as it sent it, with two changes that keep servers apart:

- a prompt is served as ``<server>__<prompt>`` (the canonical tool name without ``mcp__``, as
  ``--expose dynamic`` serves tools: :func:`~.served.served_name`, collision-safe and at most
  64 characters). ``prompts/get`` and ``completion/complete`` also take the upstream's own name
  when exactly one server has a prompt of that name;
- a resource keeps its upstream URI (links in tool results and prompts name it), unless an
  earlier server (configuration order) or the gateway itself already lists that URI, or it is in
  the gateway's own ``toolscout:`` scheme: then it is served as ``toolscout://upstream/<server>/<the URI, percent-encoded>``. A URI of that form
  always reads from the server it names. Resource templates keep their ``uriTemplate`` (one an
  earlier server lists too is prefixed the same way, its ``{…}`` kept); a read of a URI nobody
  listed goes to the first server with a matching template.

Every served prompt, resource and template carries ``_meta`` ``toolscout/server`` (the server's
name). Permission rules apply as they do to tools: a server denied as a whole
(``permissions.deny`` naming it, ``mcp__srv__*``) is not asked, its prompts and resources are not
listed and requests for them are refused, naming the rule.

Change notifications are passed on: ``notifications/prompts/list_changed`` and
``notifications/resources/list_changed`` to every ``initialize`` client that listed prompts or
resources and to every 2026-07-28 client's ``subscriptions/listen`` stream that asked for them
(:attr:`Passthrough.bus`), and ``notifications/resources/updated`` to the ``initialize`` clients
subscribed to that URI (``resources/subscribe`` subscribes upstream once, the last
``resources/unsubscribe`` unsubscribes; 2026-07-28 has no ``resources/subscribe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, PromptsListChanged, ResourcesListChanged
from mcp.shared.exceptions import MCPError

from ..models import ServerState
from ..names import MCP_PREFIX
from .routing import connection_of, split_upstream_uri, tag, template_regex, upstream_template, upstream_uri
from .served import served_name

if TYPE_CHECKING:
    from ..engine.facade import Engine

log = logging.getLogger(__name__)

#: Longest one server's listing page may take (s; ``mcp.callTimeout`` when shorter): a slow
#: server is left out of that listing (logged) rather than hold every client's list back.
LISTING_TIMEOUT_S = 10.0
#: Most pages read from one server for one listing.
MAX_PAGES = 50
_T = TypeVar("_T")


async def _page(fetch: Callable[[Any, str | None], Awaitable[Any]], cursor: str | None, client: Any) -> Any:
    return await fetch(client, cursor)


class Passthrough:
    """The gateway's prompts, upstream resources, templates, completion and subscriptions.

    Args:
        engine: the gateway's engine (its pool and permission rules).
        ready: ``await ready(ctx)`` before each request (the gateway's wait for servers).
    """

    def __init__(self, engine: Engine, ready: Callable[[ServerRequestContext[Any, Any]], Awaitable[Any]]) -> None:
        self.ready = ready
        self.engine = engine
        #: served prompt name → (server, the server's own name), from the last listing
        self.prompts: dict[str, tuple[str, str]] = {}
        #: served resource URI → (server, upstream URI), from the last listing
        self.resources: dict[str, tuple[str, str]] = {}
        #: (server, uriTemplate, its regex) in configuration order, from the last listing
        self.templates: list[tuple[str, str, re.Pattern[str]]] = []
        #: connections of clients that listed prompts or resources (told of list changes)
        self.sessions: weakref.WeakSet[Any] = weakref.WeakSet()
        #: (server, upstream URI) → {client connection: the URI it subscribed to}
        self.subscribers: dict[tuple[str, str], weakref.WeakKeyDictionary[Any, str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: where upstream list changes go for 2026-07-28 clients' listen streams (:class:`.routing.JoinedBus`)
        self.bus = InMemorySubscriptionBus()
        self.engine.pool.notification_listeners.append(self.upstream_notification)

    # -- servers ------------------------------------------------------------------------------
    def servers(self, capability: str) -> list[str]:
        """Connected servers that declare ``capability`` (``prompts``, ``resources``,
        ``completions``) and are not denied as a whole, in configuration order."""
        found = []
        for status in self.engine.pool.statuses():
            conn = self.engine.pool.connection(status.name)
            caps = conn.capabilities if conn is not None and status.state is ServerState.CONNECTED else None
            if caps is not None and getattr(caps, capability) is not None and self._deny(status.name) is None:
                found.append(status.name)
        return found

    def _deny(self, server: str) -> str | None:
        rule: str | None = self.engine.policy.server_deny_rule(server)
        return rule

    def _check(self, server: str) -> None:
        rule = self._deny(server)
        if rule is not None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"The prompts and resources of server {server} are denied by the rule {rule!r} in permissions.deny.",
            )

    async def _send(self, server: str, send: Callable[[Any], Awaitable[_T]], bound: float | None = None) -> _T:
        """``send(client)`` on ``server``'s session within ``bound`` s (default ``mcp.callTimeout``);
        its failures as MCP errors naming it."""
        self._check(server)
        conn = self.engine.pool.connection(server)
        if conn is None:
            raise MCPError(types.INVALID_PARAMS, f"No MCP server named {server!r}.")
        try:
            timeout = self.engine.pool.call_timeout if bound is None else min(bound, self.engine.pool.call_timeout)
            result: _T = await conn.request(send, timeout)
        except MCPError as exc:
            raise MCPError(exc.error.code, f"server {server}: {exc.error.message}", exc.error.data) from exc
        except TimeoutError as exc:
            raise MCPError(
                types.INTERNAL_ERROR,
                f"server {server} did not answer within {timeout:g} s",
            ) from exc
        except Exception as exc:  # ServerUnavailable and the like
            raise MCPError(types.INTERNAL_ERROR, f"server {server}: {exc}") from exc
        return result

    async def _gather(self, servers: list[str], fetch: Callable[[str], Awaitable[list[Any]]]) -> list[list[Any]]:
        """``fetch(server)`` for each server at once; a server that fails adds nothing (logged)."""
        found: list[list[Any]] = [[] for _ in servers]

        async def one(i: int, server: str) -> None:
            try:
                found[i] = await fetch(server)
            except Exception as exc:  # one failing server must not hide the others
                log.warning("listing of server %s failed: %s", server, exc)

        async with anyio.create_task_group() as tg:
            for i, server in enumerate(servers):
                tg.start_soon(one, i, server)
        return found

    async def _pages(self, server: str, fetch: Callable[[Any, str | None], Awaitable[Any]], key: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._send(server, functools.partial(_page, fetch, cursor), LISTING_TIMEOUT_S)
            items.extend(getattr(page, key))
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    def _seen(self, ctx: ServerRequestContext[Any, Any]) -> None:
        with contextlib.suppress(TypeError):  # a connection that cannot be referenced weakly is not told
            self.sessions.add(connection_of(ctx))

    # -- prompts ------------------------------------------------------------------------------
    async def list_prompts(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListPromptsResult:
        """Every upstream prompt, served as ``<server>__<prompt>``."""
        await self.ready(ctx)
        self._seen(ctx)
        return types.ListPromptsResult(prompts=await self._prompt_listing())

    async def _prompt_listing(self) -> list[types.Prompt]:
        servers = self.servers("prompts")

        async def fetch(server: str) -> list[Any]:
            return await self._pages(
                server, lambda client, cursor: client.list_prompts(cursor=cursor, cache_mode="bypass"), "prompts"
            )

        served: list[types.Prompt] = []
        names: dict[str, tuple[str, str]] = {}
        for server, prompts in zip(servers, await self._gather(servers, fetch), strict=True):
            for prompt in prompts:
                name = served_name(f"{MCP_PREFIX}{server}__{prompt.name}", names)
                names[name] = (server, prompt.name)
                served.append(tag(prompt, server, name=name))
        self.prompts = names
        return served

    async def _prompt(self, name: str) -> tuple[str, str]:
        """(server, its own name) of prompt ``name`` (served, or upstream when unambiguous)."""
        for attempt in range(2):
            if name in self.prompts:
                return self.prompts[name]
            owners = [entry for entry in self.prompts.values() if entry[1] == name]
            if len(owners) == 1:
                return owners[0]
            if len(owners) > 1:
                served = sorted(k for k, v in self.prompts.items() if v[1] == name)
                raise MCPError(
                    types.INVALID_PARAMS, f"Prompt {name!r} is served by several servers: use {', '.join(served)}."
                )
            if attempt == 0:
                await self._prompt_listing()
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {name!r}. Prompts: {', '.join(self.prompts) or 'none'}.")

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        """``prompts/get`` on the owning server, with the client's arguments as given."""
        await self.ready(ctx)
        server, own = await self._prompt(params.name)
        arguments = params.arguments
        result: types.GetPromptResult = await self._send(server, lambda client: client.get_prompt(own, arguments))
        return result

    # -- resources ----------------------------------------------------------------------------
    async def resource_listing(self, taken: set[str]) -> list[types.Resource]:
        """Every upstream resource (URIs in ``taken``, the gateway's own, are served prefixed)."""
        servers = self.servers("resources")

        async def fetch(server: str) -> list[Any]:
            return await self._pages(
                server,
                lambda client, cursor: client.list_resources(cursor=cursor, cache_mode="bypass"),
                "resources",
            )

        served: list[types.Resource] = []
        routes: dict[str, tuple[str, str]] = {}
        for server, resources in zip(servers, await self._gather(servers, fetch), strict=True):
            for resource in resources:
                uri = str(resource.uri)
                # the gateway's own scheme is prefixed too: a toolscout://upstream/ URI would read elsewhere
                own = uri in routes or uri in taken or uri.startswith("toolscout:")
                shown = upstream_uri(server, uri) if own else uri
                routes[shown] = (server, uri)
                served.append(tag(resource, server, uri=shown))
        self.resources = routes
        return served

    async def list_resources(self, ctx: ServerRequestContext[Any, Any], taken: set[str]) -> list[types.Resource]:
        """:meth:`resource_listing` for the client of ``ctx`` (told of list changes from now on)."""
        await self.ready(ctx)
        self._seen(ctx)
        return await self.resource_listing(taken)

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListResourceTemplatesResult:
        """Every upstream resource template, ``uriTemplate`` as sent."""
        await self.ready(ctx)
        self._seen(ctx)
        return types.ListResourceTemplatesResult(resource_templates=await self._template_listing())

    async def _template_listing(self) -> list[types.ResourceTemplate]:
        servers = self.servers("resources")

        async def fetch(server: str) -> list[Any]:
            try:
                return await self._pages(
                    server,
                    lambda client, cursor: client.list_resource_templates(cursor=cursor, cache_mode="bypass"),
                    "resource_templates",
                )
            except MCPError as exc:
                if exc.error.code == types.METHOD_NOT_FOUND or "Method not found" in exc.error.message:
                    return []  # a server with resources but no templates
                raise

        served: list[types.ResourceTemplate] = []
        routes: list[tuple[str, str, re.Pattern[str]]] = []
        seen: set[str] = set()
        for server, templates in zip(servers, await self._gather(servers, fetch), strict=True):
            for template in templates:
                listed = template.uri_template
                routes.append((server, listed, template_regex(listed)))
                own = listed in seen or listed.startswith("toolscout:")  # as resource URIs are (above)
                seen.add(listed)
                served.append(
                    tag(template, server, **({"uri_template": upstream_template(server, listed)} if own else {}))
                )
        self.templates = routes
        return served

    async def route(self, uri: str) -> tuple[str, str]:
        """(server, upstream URI) a resource URI reads from: a ``toolscout://upstream/`` URI's
        server; else the server that listed it; else the first whose template matches; else the
        only server with resources.

        Raises:
            MCPError: no server has it (or a denied server's: the rule is named).
        """
        named = split_upstream_uri(uri)
        if named is not None:
            self._check(named[0])
            return named
        for attempt in range(2):
            if uri in self.resources:
                return self.resources[uri]
            for server, _template, regex in self.templates:
                if regex.match(uri):
                    return server, uri
            if attempt == 0:
                await self.resource_listing(set())
                await self._template_listing()
        servers = self.servers("resources")
        if len(servers) == 1 and not uri.startswith("toolscout:"):  # the gateway's own scheme is never guessed upstream
            return servers[0], uri
        raise MCPError(
            types.INVALID_PARAMS,
            f"Unknown resource {uri}: no upstream server lists it or has a matching template "
            f"(servers with resources: {', '.join(servers) or 'none'}).",
        )

    async def read(self, ctx: ServerRequestContext[Any, Any], uri: str) -> types.ReadResourceResult:
        """``resources/read`` on the owning server (:meth:`route`), its result as sent."""
        await self.ready(ctx)
        server, own = await self.route(uri)
        result: types.ReadResourceResult = await self._send(
            server, lambda client: client.read_resource(own, cache_mode="bypass")
        )
        return result

    # -- subscriptions ------------------------------------------------------------------------
    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/subscribe``: subscribes upstream (once per URI); this client is then sent
        ``notifications/resources/updated`` for it."""
        await self.ready(ctx)
        uri = str(params.uri)
        server, own = await self.route(uri)
        caps = self.engine.pool.connection(server)
        declared = caps.capabilities if caps is not None else None
        if declared is None or declared.resources is None or not declared.resources.subscribe:
            raise MCPError(types.INVALID_PARAMS, f"server {server} does not support resource subscriptions")
        waiting = self.subscribers.setdefault((server, own), weakref.WeakKeyDictionary())
        if not waiting:
            await self._send(server, lambda client: client.subscribe_resource(own))
        waiting[connection_of(ctx)] = uri
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/unsubscribe``: the last subscriber of a URI unsubscribes upstream."""
        await self.ready(ctx)
        server, own = await self.route(str(params.uri))
        waiting = self.subscribers.get((server, own))
        if waiting is not None:
            waiting.pop(connection_of(ctx), None)
            if not waiting:
                del self.subscribers[(server, own)]
                await self._send(server, lambda client: client.unsubscribe_resource(own))
        return types.EmptyResult()

    # -- completion ---------------------------------------------------------------------------
    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """``completion/complete`` on the server owning the prompt or resource template."""
        await self.ready(ctx)
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            server, own = await self._prompt(ref.name)
            upstream: Any = ref.model_copy(update={"name": own})
        else:
            server, own = await self._template_owner(ref.uri)
            upstream = ref.model_copy(update={"uri": own})
        if server not in self.servers("completions"):
            return types.CompleteResult(completion=types.Completion(values=[]))  # the server completes nothing
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        result: types.CompleteResult = await self._send(
            server, lambda client: client.complete(upstream, argument, context)
        )
        return result

    async def _template_owner(self, template: str) -> tuple[str, str]:
        named = split_upstream_uri(template)
        if named is not None:
            self._check(named[0])
            return named
        for attempt in range(2):
            for server, listed, _regex in self.templates:
                if listed == template:
                    return server, template
            if attempt == 0:
                await self._template_listing()
        return await self.route(template)

    # -- notifications from upstream ------------------------------------------------------------
    def upstream_notification(self, server: str, notification: Any) -> None:
        """Pass a server's change notification on (called on the gateway's loop)."""
        if self._deny(server) is not None:
            return
        targets: list[tuple[Any, Any]] = []
        if isinstance(notification, types.ResourceUpdatedNotification):
            own = str(notification.params.uri)
            for session, uri in list((self.subscribers.get((server, own)) or {}).items()):
                targets.append(
                    (
                        session,
                        types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri)),
                    )
                )
        elif isinstance(notification, types.ResourceListChangedNotification | types.PromptListChangedNotification):
            targets = [(session, type(notification)()) for session in list(self.sessions)]
            modern = PromptsListChanged() if isinstance(notification, types.PromptListChangedNotification) else None
            self._spawn(self.bus.publish(modern or ResourcesListChanged()))
        for session, message in targets:
            self._spawn(self._notify(session, message))

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _notify(connection: Any, message: Any) -> None:
        data = message.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:  # on the connection's own channel (stdio; an HTTP session's GET stream), as the SDK's session does
            await connection.outbound.notify(data["method"], data.get("params"))
        except Exception as exc:  # a client gone meanwhile
            log.debug("could not pass on %s: %s", type(message).__name__, exc)
