"""Provider-valid tool schemas: the projection of MCP ``inputSchema`` values (see :mod:`.project`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .project import (
    WRAP_KEY,
    ProjectedSchema,
    project,
    project_input_schema,
    provider_problems,
    unwrap_arguments,
)

if TYPE_CHECKING:
    from ..models import ToolSpec

__all__ = [
    "WRAP_KEY",
    "ProjectedSchema",
    "project",
    "project_input_schema",
    "provider_problems",
    "schema_warning_line",
    "unwrap_arguments",
]

#: Most repairs spelled out in one warning line (the rest are counted).
MAX_LISTED = 3


def schema_warning_line(tool: ToolSpec) -> str:
    """One line for a tool's schema repairs: ``mcp__s__t: inputSchema repaired: a; b (+N more)``."""
    shown = "; ".join(tool.schema_warnings[:MAX_LISTED])
    more = len(tool.schema_warnings) - MAX_LISTED
    return f"{tool.name}: inputSchema repaired: {shown}" + (f" (+{more} more)" if more > 0 else "")
