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


#: Group head of built-in tools in a compact announcement (their names carry no prefix).
BUILTIN_HEAD = "built-in"


def announcement_prefix(tool: ToolSpec) -> str:
    """The prefix a compact announcement writes once for ``tool``'s group: ``mcp__<server>__``
    for MCP tools whose canonical name starts with it, else ``""`` (built-ins, shortened names)."""
    if tool.server is None:
        return ""
    prefix = tool.name[: tool.name.find("__", len("mcp__")) + 2] if tool.name.startswith("mcp__") else ""
    return prefix if prefix.endswith("__") and len(tool.name) > len(prefix) else ""


def announcement_groups(tools: Iterable[ToolSpec]) -> list[str]:
    """Deferred tools announced compactly, one line per group, prefix written once.

    ``mcp__github__: create_issue list_issues`` announces ``mcp__github__create_issue`` and
    ``mcp__github__list_issues``; ``built-in: NotebookEdit WebFetch`` announces built-ins; a tool
    whose name has no group prefix (a shortened name) gets a line of its own with its full name.
    Groups keep the first-appearance order of ``tools``; names keep their order within a group.
    Canonical names never contain spaces (:func:`toolscout.core.names.sanitize`), so the lines
    parse back exactly (:func:`parse_announcement_line`).
    """
    groups: dict[str, list[str]] = {}
    for tool in tools:
        prefix = announcement_prefix(tool)
        if prefix:
            groups.setdefault(prefix + ":", []).append(tool.name[len(prefix):])
        elif tool.server is None:
            groups.setdefault(BUILTIN_HEAD + ":", []).append(tool.name)
        else:
            groups.setdefault(tool.name, [])
    return [f"{head} {' '.join(names)}" if names else head for head, names in groups.items()]


def parse_announcement_line(line: str) -> list[str]:
    """Full names announced by one line of :func:`announcement_groups` (or of the older
    one-name-per-line form); ``[]`` for blank and ``#`` comment lines."""
    line = line.split(" — ", 1)[0].strip()
    if not line or line.startswith("#") or line.startswith("("):
        return []
    head, sep, rest = line.partition(": ")
    if sep and head.endswith("__"):
        return [head + name for name in rest.split()]
    if sep and head == BUILTIN_HEAD:
        return rest.split()
    return [line]
