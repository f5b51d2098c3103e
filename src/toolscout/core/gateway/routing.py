"""How the gateway names upstream resources and finds their server (:mod:`.passthrough`):
``toolscout://upstream/<server>/<URI>`` for a URI two servers list, RFC 6570 template matching
for URIs nobody listed, the ``_meta`` naming a served item's server."""

from __future__ import annotations

import re
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from mcp.server import ServerRequestContext

#: ``_meta`` key naming the upstream server of a served prompt, resource or template.
SERVER_META = "toolscout/server"
#: Prefix of a resource URI that names its server (colliding URIs are served so).
UPSTREAM_URI = "toolscout://upstream/"
_T = TypeVar("_T")


def upstream_uri(server: str, uri: str) -> str:
    """The gateway URI that reads ``uri`` from ``server`` whatever others list."""
    return f"{UPSTREAM_URI}{quote(server, safe='')}/{quote(uri, safe='')}"


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
    """``item`` (a pydantic MCP model) with ``changes`` and ``_meta`` naming ``server``."""
    meta = dict(getattr(item, "meta", None) or {})
    meta[SERVER_META] = server
    return item.model_copy(update={**changes, "meta": meta})  # type: ignore[attr-defined, no-any-return]


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The client connection behind ``ctx``: it outlives the request (``ctx.session`` is made
    per request by the SDK), so change notifications are sent on it later."""
    return ctx.session._connection
