"""The gateway's own MCP resources: the catalog and the ``/context`` report, as JSON.

- ``toolscout://catalog``: every server (state, error, instructions) and every visible tool with
  its canonical name, server, description, state (``deferred`` or ``exposed`` for this client)
  and the tokens of its full definition.
- ``toolscout://context``: the report of ``toolscout context --json`` (per-server schema tokens,
  what deferral saves), plus what this gateway serves instead: the tokens of the served tool list.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..engine.facade import Engine
from ..serialize import dumps
from ..tokens import default_counter, tool_tokens
from .served import CATALOG_URI, CONTEXT_URI

RESOURCES: tuple[dict[str, str], ...] = (
    {
        "uri": CATALOG_URI,
        "name": "catalog",
        "mimeType": "application/json",
        "description": "Every upstream server and tool: state, description and schema tokens.",
    },
    {
        "uri": CONTEXT_URI,
        "name": "context",
        "mimeType": "application/json",
        "description": "Per-server schema tokens and what deferred loading saves (toolscout context).",
    },
)


def catalog_json(engine: Engine, exposed: Collection[str]) -> dict[str, Any]:
    """The catalog resource for a client that has ``exposed`` tools in its list."""
    counter = default_counter()
    servers = [
        {
            "name": s.name,
            "state": s.state.value,
            "error": s.error,
            "transport": s.transport,
            "tools": s.tool_count,
            "instructions": engine.catalog.instructions.get(s.name),
        }
        for s in engine.server_statuses()
    ]
    tools = [
        {
            "name": t.name,
            "server": t.server,
            "description": t.description,
            "state": "exposed" if t.name in exposed else "deferred",
            "tokens": tool_tokens(t, counter),
        }
        for t in engine.catalog.tools()
        if t.server is not None
    ]
    return {"servers": servers, "tools": tools}


def context_json(engine: Engine, served_tokens: int) -> dict[str, Any]:
    """The context resource: the engine's report for the upstream servers (the engine's built-ins
    are not served, so their row is left out) plus ``gateway``: the tokens of the served tool list
    and of every upstream tool's full definition."""
    report = engine.context_report().to_json()
    report["servers"] = [row for row in report["servers"] if row["server"] is not None]
    upstream = sum(row["tokens_inline"] for row in report["servers"])
    report["gateway"] = {"served_tokens": served_tokens, "upstream_tokens": upstream, "saved": upstream - served_tokens}
    return report


def read(engine: Engine, uri: str, exposed: Collection[str], served_tokens: int) -> str | None:
    """The JSON text of resource ``uri``, or None when the gateway has no such resource."""
    if uri == CATALOG_URI:
        return dumps(catalog_json(engine, exposed))
    if uri == CONTEXT_URI:
        return dumps(context_json(engine, served_tokens))
    return None
