"""How the gateway names upstream resources and finds their server (:mod:`.passthrough`):
``toolscout://upstream/<server>/<URI>`` for a URI two servers list, RFC 6570 template matching
for URIs nobody listed, the ``_meta`` naming a served item's server."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ServerEvent, SubscriptionBus

#: ``_meta`` key naming the upstream server of a served prompt, resource or template.
SERVER_META = "toolscout/server"
#: Prefix of a resource URI that names its server (colliding URIs are served so).
UPSTREAM_URI = "toolscout://upstream/"
_T = TypeVar("_T", types.Prompt, types.Resource, types.ResourceTemplate)


def upstream_uri(server: str, uri: str) -> str:
    """The gateway URI that reads ``uri`` from ``server`` whatever others list."""
    return f"{UPSTREAM_URI}{quote(server, safe='')}/{quote(uri, safe='')}"


def upstream_template(server: str, template: str) -> str:
    """The gateway template for ``server``'s ``template`` whatever others list: :func:`upstream_uri`
    with the template's literal text percent-encoded and its ``{…}`` expressions kept, so that the
    URI a client expands it to (``{id}`` → ``9``) is the :func:`upstream_uri` of the expansion."""
    pieces = re.split(r"(\{[^}]*\})", template)
    body = "".join(piece if i % 2 else quote(piece, safe="") for i, piece in enumerate(pieces))
    return f"{UPSTREAM_URI}{quote(server, safe='')}/{body}"


def split_upstream_uri(uri: str) -> tuple[str, str] | None:
    """``(server, upstream URI)`` of a :func:`upstream_uri`, or None for any other URI."""
    if not uri.startswith(UPSTREAM_URI):
        return None
    server, sep, rest = uri[len(UPSTREAM_URI) :].partition("/")
    return (unquote(server), unquote(rest)) if sep and server and rest else None


def template_regex(template: str) -> re.Pattern[str]:
    """A regex matching the URIs an RFC 6570 template expands to: ``{var}`` one path segment,
    ``{+var}``/``{#var}`` anything, ``{/var}`` path segments, ``{?a,b}``/``{&a}`` a query."""
    parts: list[str] = []
    for i, piece in enumerate(re.split(r"(\{[^}]*\})", template)):
        if i % 2 == 0:
            parts.append(re.escape(piece))
        elif piece[1:2] in ("+", "#"):
            parts.append(".*")
        elif piece[1:2] == "/":
            parts.append("(?:/[^/?#]*)*")
        elif piece[1:2] in ("?", "&"):
            parts.append(r"(?:[?&][^#]*)?")
        else:
            parts.append("[^/?#]*")
    return re.compile("".join(parts) + r"\Z")


def tag(item: _T, server: str, **changes: Any) -> _T:
    """``item`` (a served prompt, resource or template) with ``changes`` and ``_meta`` naming ``server``."""
    return item.model_copy(update={**changes, "meta": {**(item.meta or {}), SERVER_META: server}})


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The client connection behind ``ctx``: it outlives the request (``ctx.session`` is made
    per request by the SDK), so change notifications are sent on it later."""
    return ctx.session._connection


class JoinedBus:
    """A client's ``subscriptions/listen`` bus (2026-07-28) joined to the gateway-wide one:
    what the client's own bus publishes (its ``tools/list_changed``) and what the shared bus
    publishes (upstream prompt and resource list changes) both reach its listen streams.

    Args:
        own: the client's bus (publishing goes there). shared: the gateway's bus.
    """

    def __init__(self, own: SubscriptionBus, shared: SubscriptionBus) -> None:
        self.own = own
        self.shared = shared

    async def publish(self, event: ServerEvent) -> None:
        """Publish on the client's own bus."""
        await self.own.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Listen to both buses; the callable returned stops both."""
        stops = (self.own.subscribe(listener), self.shared.subscribe(listener))

        def stop() -> None:
            for each in stops:
                each()

        return stop
