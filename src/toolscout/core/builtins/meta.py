"""The two proxy tools of deferred loading: ToolSearch and ExecuteTool (specs only).

Their calls are carried out by the session (ToolSearch → ``Engine.search_tools`` + rendering,
ExecuteTool → ``Engine.call_tool``), because both need the catalog and the conversation. Their
``run`` therefore only explains that they cannot run on their own. Query grammar as in Claude
Code's ToolSearch: ``select:A,B`` loads named tools, ``+word`` requires a word in the name.
"""

from __future__ import annotations

from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import fail, spec
from .base import ToolContext

TOOL_SEARCH = "ToolSearch"
EXECUTE_TOOL = "ExecuteTool"


class ToolSearchTool:
    """Find deferred tools and load their full schemas."""

    read_only = True
    spec = spec(
        TOOL_SEARCH,
        "Search the deferred tools (announced by name only) and get their full definitions, "
        'including the JSON input schema. Query forms: "select:NAME" or "select:A,B" to load '
        'tools you already know by name; keywords such as "slack send message" to discover tools '
        'by what they do; "+github issue" to require "github" in the tool name. Search before '
        "calling a deferred tool so you know its parameters.",
        {
            "query": {"type": "string", "description": "select:NAME[,NAME…] or keywords"},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 5,
                "description": "Maximum number of tools to return",
            },
        },
        ["query"],
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Not runnable alone: the session answers ToolSearch calls."""
        return fail(
            TOOL_SEARCH, "ToolSearch is answered by the session, not run as a built-in.", ToolErrorKind.NOT_LOADED
        )


class ExecuteToolTool:
    """Call a deferred tool by name with arguments that follow its input schema."""

    read_only = True  # the proxy itself changes nothing; the target tool's own rules apply
    spec = spec(
        EXECUTE_TOOL,
        "Call a deferred tool. tool_name is the tool's exact name as announced or as returned by "
        "ToolSearch; params is an object that follows that tool's input schema (load it with "
        "ToolSearch first). Core tools in your tool list are called directly, not through ExecuteTool.",
        {
            "tool_name": {"type": "string", "description": "Exact name of the deferred tool"},
            "params": {"type": "object", "description": "Arguments for the tool, following its input schema"},
        },
        ["tool_name", "params"],
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Not runnable alone: the session routes ExecuteTool calls to the executor."""
        return fail(
            EXECUTE_TOOL, "ExecuteTool is answered by the session, not run as a built-in.", ToolErrorKind.NOT_LOADED
        )
