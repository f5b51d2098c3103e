"""How tools are serialised for a model, byte-for-byte.

One function decides the bytes so that token accounting, request projection and cache-stability
checks all measure the same thing. The format is the Anthropic Messages API tool definition
(``name``, ``description``, ``input_schema``); ``inputSchema`` keys keep the server's order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
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
            groups.setdefault(prefix + ":", []).append(tool.name[len(prefix) :])
        elif tool.server is None:
            groups.setdefault(BUILTIN_HEAD + ":", []).append(tool.name)
        else:
            groups.setdefault(tool.name, [])
    return [f"{head} {' '.join(names)}" if names else head for head, names in groups.items()]


def parse_announcement_line(line: str) -> list[str]:
    """Full names announced by one line of :func:`announcement_groups` (or of the older
    one-name-per-line form); ``[]`` for blank and ``#`` comment lines. A server summary line of
    :func:`budgeted_groups` (``mcp__github__* (26 tools): …``) gives its wildcard,
    ``mcp__github__*``: every tool of that server counts as announced."""
    line = line.split(" — ", 1)[0].strip()
    if not line or line.startswith("#") or line.startswith("("):
        return []
    summary = _SUMMARY.match(line)
    if summary:
        return [summary.group("prefix") + "*"]
    head, sep, rest = line.partition(": ")
    if sep and head.endswith("__"):
        return [head + name for name in rest.split()]
    if sep and head == BUILTIN_HEAD:
        return rest.split()
    return [line]


#: A server summary line: ``mcp__github__* (26 tools): issue, pull request, repository``.
_SUMMARY = re.compile(r"^(?P<prefix>\S+__)\* \(\d+ tools?\)")
#: Words of tool names that say what a tool does rather than what it works on.
_VERBS = frozenset(
    [
        "get",
        "list",
        "create",
        "update",
        "delete",
        "remove",
        "add",
        "set",
        "search",
        "find",
        "fetch",
        "read",
        "write",
        "run",
        "make",
        "new",
        "show",
        "describe",
        "put",
        "post",
        "patch",
        "query",
        "start",
        "stop",
        "execute",
        "exec",
        "check",
        "send",
        "upload",
        "download",
        "edit",
        "move",
        "copy",
        "close",
        "open",
        "the",
        "a",
        "an",
        "of",
        "for",
        "to",
        "by",
        "in",
        "on",
        "with",
        "from",
        "all",
        "and",
        "or",
        "is",
        "batch",
        "bulk",
    ]
)


def server_summary(prefix: str, tools: Sequence[ToolSpec], words: int = 4) -> str:
    """One line standing for every tool of one server: its prefix with ``*``, the tool count and
    the ``words`` nouns most frequent in its tool names (what it works on: ``issue, branch``).

    Parsed back by :func:`parse_announcement_line` as the wildcard ``<prefix>*``.
    """
    counts: dict[str, int] = {}
    for tool in tools:
        bare = tool.name[len(prefix) :] if tool.name.startswith(prefix) else tool.name
        spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", bare)
        for word in re.split(r"[\W_]+", spaced.lower()):
            if len(word) > 2 and word not in _VERBS and not word.isdigit():
                counts[word] = counts.get(word, 0) + 1
    top = sorted(counts, key=lambda w: -counts[w])[:words]  # stable: first appearance breaks ties
    what = f": {', '.join(top)}" if top else ""
    return f"{prefix}* ({len(tools)} tool{'s' if len(tools) != 1 else ''}){what}"


def budgeted_groups(tools: Sequence[ToolSpec], budget: int, count: Callable[[str], int]) -> list[str]:
    """:func:`announcement_groups` within ``budget`` tokens: while every name fits, exactly those
    lines; beyond it, a server whose names do not fit is one :func:`server_summary` line instead,
    the servers cheapest to list in full kept in full (built-ins always are).

    Args:
        tools: the deferred tools, catalog order.
        budget: most tokens the lines may take together (``toolSearch.announceBudget``); a budget
            that even the summaries pass gives the summaries.
        count: tokens of a text (:meth:`toolscout.core.tokens.TokenCounter.count`).

    Returns:
        One line per group, in the first-appearance order of ``tools``.
    """
    full = announcement_groups(tools)
    if count("\n".join(full)) <= budget:
        return full
    groups: dict[str, list[ToolSpec]] = {}  # line head -> its tools, in line order
    for tool in tools:
        prefix = announcement_prefix(tool)
        head = prefix + ":" if prefix else (BUILTIN_HEAD + ":" if tool.server is None else tool.name)
        groups.setdefault(head, []).append(tool)
    lines = dict(zip(groups, full, strict=True))
    summaries = {h: server_summary(h[:-1], ts) for h, ts in groups.items() if h.endswith("__:")}
    used = sum(count(summaries.get(h, line)) for h, line in lines.items())
    extra = {h: count(lines[h]) - count(line) for h, line in summaries.items()}
    for head in sorted(summaries, key=lambda h: extra[h]):  # cheapest to list in full first
        if used + extra[head] > budget:
            break
        used += extra[head]
        del summaries[head]
    return [summaries.get(h, line) for h, line in lines.items()]
