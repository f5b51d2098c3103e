"""The TodoWrite built-in: the session's task list (kept in ``ToolContext.state["todos"]``)."""

from __future__ import annotations

from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import fail, spec
from .base import ToolContext

STATUSES = ("pending", "in_progress", "completed")
_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoWriteTool:
    """Replace the task list with the given items (as Claude Code's TodoWrite)."""

    read_only = True  # changes only the session's own list, never files
    spec = spec(
        "TodoWrite",
        "Creates and updates the task list (to-do list) for this session: pass the complete list "
        "each time. Use it to plan and track work with three or more steps; keep exactly one item "
        "in_progress while working.",
        {
            "todos": {
                "type": "array",
                "description": "The complete updated task list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": "The task"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {
                            "type": "string",
                            "description": "Present-continuous form shown while in progress",
                        },
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            },
        },
        ["todos"],
        hint="plan work and track progress in a to-do list",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Store ``todos`` and return the list as text."""
        todos = params["todos"]
        if sum(1 for t in todos if t.get("status") == "in_progress") > 1:
            return fail(
                "TodoWrite", "More than one task is in_progress; keep exactly one.", ToolErrorKind.INVALID_PARAMS
            )
        ctx.state["todos"] = [dict(t) for t in todos]
        if not todos:
            return ToolResult.ok("TodoWrite", "Task list cleared.")
        lines = [f"{_MARK.get(t['status'], '[ ]')} {t['content']}" for t in todos]
        done = sum(1 for t in todos if t["status"] == "completed")
        return ToolResult.ok("TodoWrite", f"Task list updated ({done}/{len(todos)} done):\n" + "\n".join(lines))
