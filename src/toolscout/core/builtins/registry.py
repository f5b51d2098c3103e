"""The list of built-in tools and which of them are core (always sent with full schemas).

Core, as in Claude Code's default tool set: Read, Write, Edit, Glob, Grep, Bash, TodoWrite, plus
the proxies ToolSearch and ExecuteTool. NotebookEdit and WebFetch are deferred: announced by
name and loaded through ToolSearch like any MCP tool.
"""

from __future__ import annotations

from .base import BuiltinTool
from .files import EditTool, ReadTool, WriteTool
from .find import GlobTool, GrepTool
from .meta import ExecuteToolTool, ToolSearchTool
from .notebook import NotebookEditTool
from .shell import BashTool
from .todo import TodoWriteTool
from .web import WebFetchTool

CORE_TOOL_NAMES = frozenset({"Read", "Write", "Edit", "Glob", "Grep", "Bash", "TodoWrite", "ToolSearch", "ExecuteTool"})


def builtin_tools() -> list[BuiltinTool]:
    """Fresh instances of every built-in tool (core and deferred), sorted by name."""
    tools: list[BuiltinTool] = [
        BashTool(),
        EditTool(),
        ExecuteToolTool(),
        GlobTool(),
        GrepTool(),
        NotebookEditTool(),
        ReadTool(),
        TodoWriteTool(),
        ToolSearchTool(),
        WebFetchTool(),
        WriteTool(),
    ]
    return sorted(tools, key=lambda t: t.spec.name)


def core_tool_names() -> set[str]:
    """Names of the built-ins that are never deferred."""
    return set(CORE_TOOL_NAMES)
