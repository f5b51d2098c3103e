"""The contract every built-in tool implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..models import ToolResult, ToolSpec


@dataclass
class ToolContext:
    """What a built-in may use while running.

    Attributes:
        cwd: the project directory; relative paths resolve against it.
        state: per-session scratch space shared by built-ins (e.g. the TodoWrite list).
    """

    cwd: Path
    state: dict[str, Any] = field(default_factory=dict)


class BuiltinTool(Protocol):
    """A tool implemented inside toolscout.

    Attributes:
        spec: the definition (``server`` is None).
        read_only: True when the tool never changes anything (allowed without asking).
    """

    spec: ToolSpec
    read_only: bool

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run with already-validated ``params``; return a result (errors as ``is_error``)."""
        ...
