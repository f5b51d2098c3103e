"""How tools are serialised for a model, byte-for-byte.

One function decides the bytes so that token accounting, request projection and cache-stability
checks all measure the same thing. The format is the Anthropic Messages API tool definition
(``name``, ``description``, ``input_schema``); ``inputSchema`` keys keep the server's order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .models import ToolSpec


def tool_definition(tool: ToolSpec) -> dict[str, Any]:
    """The full definition sent for a loaded tool: ``{"name", "description", "input_schema"}``."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def dumps(value: Any) -> str:
    """Compact, deterministic JSON (no spaces, non-ASCII kept, key order preserved)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def serialize_tools(tools: Iterable[ToolSpec]) -> str:
    """The tools array as the exact JSON text a request would carry."""
    return dumps([tool_definition(t) for t in tools])


def one_line(text: str, limit: int = 100) -> str:
    """First line of ``text``, whitespace-collapsed, cut to ``limit`` characters with an ellipsis."""
    first = " ".join((text or "").strip().splitlines()[:1]).strip()
    first = " ".join(first.split())
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def stub_definition(tool: ToolSpec) -> dict[str, Any]:
    """Compact stub for the stub strategy: name, ``[deferred]`` one-line summary, empty parameters."""
    return {
        "name": tool.name,
        "description": f"[deferred] {one_line(tool.description)}".rstrip(),
        "input_schema": {"type": "object", "properties": {}},
    }


def announcement_line(tool: ToolSpec) -> str:
    """How a deferred tool is announced by name in execute-proxy mode (one line)."""
    return tool.name
