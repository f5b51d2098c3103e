"""What the gateway serves as tools: the fixed search and call tools, and search answers.

The served list starts as exactly two tools, :data:`SEARCH_TOOL` and :data:`CALL_TOOL`, so the
client's context does not grow with the number of upstream tools. The search tool's description
announces the deferred tools the way the app's announcements do (:func:`announcement`): names
grouped by server prefix, written once, while that fits :data:`ANNOUNCE_MAX_TOKENS`; beyond that,
one line per server with its tool count and a pointer to the catalog resource; servers still
connecting are named as such. A client's description is computed once, at its first
``tools/list`` (answered at once, without waiting for servers), and then kept (prompt-cache
stable); tools that connect later are found by search and listed in the catalog resource.

Every served tool carries ``_meta`` :data:`ALWAYS_LOAD` (Claude Code's ``anthropic/alwaysLoad``):
the client sends them to its model inline instead of deferring them behind its own tool search,
which would cost the model an extra turn to load the gateway's two tools. Tools exposed by
search (``dynamic``) are served under :func:`served_name`: the canonical name without its
``mcp__`` prefix, since the client puts its own ``mcp__<gateway>__`` in front.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ..models import TASK_REQUIRED_REASON, ToolSpec
from ..names import MCP_PREFIX, dedupe, shorten
from ..search.render import MAX_INSTRUCTIONS_CHARS
from ..search.results import SearchResult
from ..serialize import announcement_groups
from ..tokens import TokenCounter, default_counter

SEARCH_TOOL = "search_tools"
CALL_TOOL = "call_tool"
#: URIs of the gateway's own resources.
CATALOG_URI = "toolscout://catalog"
CONTEXT_URI = "toolscout://context"
#: Most tokens the compact name list may take in the search tool's description.
ANNOUNCE_MAX_TOKENS = 4_000
#: Most hits one search may return (ToolSearch's own cap).
MAX_RESULTS = 50
#: ``_meta`` of every served tool: Claude Code keeps a tool with ``anthropic/alwaysLoad`` true in
#: its model's tool list instead of deferring it (its MCP config schema: "Equivalent to setting
#: defer_loading: false on the API"); other clients ignore the key.
ALWAYS_LOAD: dict[str, Any] = {"anthropic/alwaysLoad": True}

_SEARCH_HEAD = (
    "Search the tools of the user's MCP servers (they are not in your tool list) and get their exact "
    'input schemas. Query grammar: "select:NAME[,NAME...]" loads tools by exact name; keywords describing the '
    'action (e.g. "create github issue") rank tools; "+word" requires the word in the tool\'s name; "discover:TEXT" explores. '
    f"Each result gives the tool's canonical name, server, description, score and inputSchema. Then run a tool "
    f'with {CALL_TOOL} {{"name": NAME, "arguments": {{...}}}} following that schema.'
)
_HOW_TO_READ = (
    'Names are grouped by prefix, written once: "mcp__github__: create_issue list_issues" means '
    "mcp__github__create_issue and mcp__github__list_issues; always use the full name."
)


def announcement(
    tools: Sequence[ToolSpec],
    pending: Sequence[str],
    *,
    counter: TokenCounter | None = None,
    max_tokens: int = ANNOUNCE_MAX_TOKENS,
) -> str:
    """The part of the search tool's description that says which tools exist.

    Args:
        tools: the visible MCP tools, catalog order.
        pending: servers still connecting (their tools are not known yet).
        counter: token counter for the budget (default: :func:`~toolscout.core.tokens.default_counter`).
        max_tokens: budget of the compact name list; above it, servers and counts only.

    Returns:
        Plain text (may be several lines).
    """
    parts: list[str] = []
    if tools:
        names = "\n".join(announcement_groups(tools))
        if (counter or default_counter()).count(names) <= max_tokens:
            parts.append(f"Available tools ({len(tools)}). {_HOW_TO_READ}\n{names}")
        else:
            counts: dict[str, int] = {}
            for tool in tools:
                counts[tool.server or "built-in"] = counts.get(tool.server or "built-in", 0) + 1
            lines = "\n".join(f"{server}: {n} tools" for server, n in counts.items())
            parts.append(
                f"Available tools: {len(tools)} on {len(counts)} servers (every name is in the resource "
                f"{CATALOG_URI}; search by keywords to find them):\n{lines}"
            )
    elif not pending:
        parts.append("No tools are available yet.")
    if pending:
        parts.append("Still connecting (search finds their tools once they are up): " + ", ".join(pending))
    return "\n".join(parts)


def search_tool(announced: str) -> dict[str, Any]:
    """The served search tool (``name``, ``description``, ``inputSchema``)."""
    return {
        "name": SEARCH_TOOL,
        "description": f"{_SEARCH_HEAD}\n\n{announced}",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "select:NAME[,NAME], keywords (+required words), or discover:TEXT",
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS,
                    "description": "most results (default 5)",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
        "_meta": dict(ALWAYS_LOAD),
    }


def call_tool() -> dict[str, Any]:
    """The served call tool: ExecuteTool for MCP clients."""
    return {
        "name": CALL_TOOL,
        "description": (
            f'Run a tool found with {SEARCH_TOOL}: "name" is its exact canonical name (mcp__server__tool), '
            '"arguments" follow its inputSchema. Arguments are checked against that schema and the user\'s '
            "permission rules first; the tool's own result is returned as is."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "canonical tool name from the search results"},
                "arguments": {"type": "object", "description": "the tool's arguments (its inputSchema)"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "_meta": dict(ALWAYS_LOAD),
    }


def served_name(canonical: str, taken: Collection[str]) -> str:
    """The name a tool exposed by search is served under: ``mcp__time__get_current_time`` →
    ``time__get_current_time`` (Claude Code then shows ``mcp__toolscout__time__get_current_time``,
    not ``mcp__toolscout__mcp__time__...``).

    Canonical names are unique and the server part never contains ``__``
    (:func:`~toolscout.core.names.normalise_server_name`), so dropping the constant prefix keeps
    them apart and never gives :data:`SEARCH_TOOL` or :data:`CALL_TOOL` (which have no ``__``);
    a name in ``taken`` (the client's served names) is still resolved with
    :func:`~toolscout.core.names.dedupe`. At most 64 characters.
    """
    name = canonical[len(MCP_PREFIX) :] if canonical.startswith(MCP_PREFIX) else canonical
    return dedupe(shorten(name), {SEARCH_TOOL, CALL_TOOL, *taken})


#: Fields of an upstream tool definition passed on as sent (beside name, description and
#: inputSchema): MCP clients read them (the provider projection is for models, not for them).
PASSED_FIELDS = ("title", "outputSchema", "execution", "annotations", "icons")


def upstream_fields(tool: ToolSpec) -> dict[str, Any]:
    """The definition fields of ``tool`` an MCP client gets as the server sent them: its
    ``inputSchema`` exactly as sent (``$schema``, ``$defs`` ... kept; the projection only where the
    root was not an object and the arguments are wrapped), and :data:`PASSED_FIELDS`."""
    sent = tool.definition or {}
    schema = tool.source_schema if tool.source_schema is not None and not tool.wrapped_arguments else None
    out: dict[str, Any] = {"inputSchema": schema if isinstance(schema, dict) else tool.input_schema}
    out.update({key: sent[key] for key in PASSED_FIELDS if sent.get(key) is not None})
    if "annotations" not in out and tool.annotations:
        out["annotations"] = tool.annotations  # hints for the client's display; they never grant anything here
    return out


def exposed_tool(tool: ToolSpec, name: str) -> dict[str, Any]:
    """A tool found by search, served as ``name`` (:func:`served_name`; ``--expose dynamic``)
    with its own description and definition (:func:`upstream_fields`); its ``_meta`` as sent,
    with :data:`ALWAYS_LOAD` set."""
    meta = (tool.definition or {}).get("_meta")
    return {
        "name": name,
        "description": tool.description,
        **upstream_fields(tool),
        "_meta": {**(meta if isinstance(meta, dict) else {}), **ALWAYS_LOAD},
    }


def not_callable(tool: ToolSpec) -> str | None:
    """Why ``tool`` cannot be called through the gateway (a task-required tool), or None."""
    return TASK_REQUIRED_REASON if tool.needs_task else None


def _hit(tool: ToolSpec, score: float) -> dict[str, Any]:
    hit: dict[str, Any] = {"name": tool.name, "server": tool.server, "description": tool.description}
    hit["score"] = round(score, 4)
    hit.update(upstream_fields(tool))
    why = not_callable(tool)
    if why is not None:
        hit["callable"] = False
        hit["notCallable"] = why
    return hit


def search_answer(result: SearchResult, instructions: dict[str, str]) -> dict[str, Any]:
    """A search result as the structured answer of the search tool.

    Args:
        result: the ToolSearch result (MCP tools only).
        instructions: server name → its ``instructions`` (from ``initialize``).

    Returns:
        ``{"results": [{"name", "server", "description", "score", "inputSchema", and as the server
        sent them "title", "outputSchema", "execution", "annotations"; "callable": false and
        "notCallable" for a tool that cannot be called}], "instructions":
        {server: text}, "missing", "suggestions", "pending_servers", "notes"}``; empty parts are left out.
    """
    answer: dict[str, Any] = {
        "query": result.query,
        "results": [_hit(h.tool, h.score) for h in result.hits],
    }
    servers = dict.fromkeys(h.tool.server for h in result.hits if h.tool.server)
    carried = {
        s: (result.instructions.get(s) or instructions.get(s) or "").strip()[:MAX_INSTRUCTIONS_CHARS] for s in servers
    }
    if any(carried.values()):
        answer["instructions"] = {s: text for s, text in carried.items() if text}
    notes = list(result.errors)
    if not result.hits and result.pending_servers and not result.errors:
        # "no match" would be a verdict on tools that are not in yet (the app's render says the same)
        notes.append(
            f"Nothing among the connected servers' tools matches yet; still connecting: "
            f"{', '.join(sorted(result.pending_servers))}. Their tools are found once they are up: "
            "search again in a moment."
        )
    elif result.no_good_match and not result.hits and not result.errors:  # a note says why already
        unmatched = f" (no tool mentions: {', '.join(result.unmatched_terms)})" if result.unmatched_terms else ""
        notes.append(f"No good match{unmatched}. Try other words, a shorter query, or select:<exact name>.")
    for key, value in (
        ("missing", result.missing),
        ("suggestions", result.suggestions),
        ("pending_servers", sorted(result.pending_servers)),
        ("notes", notes),
    ):
        if value:
            answer[key] = value
    return answer
