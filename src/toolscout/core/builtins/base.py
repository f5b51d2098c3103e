"""The contract every built-in tool implements."""

from __future__ import annotations

from collections.abc import Callable
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
        private_host_allowed: ``(tool_name, host) -> bool``: True when the person's settings name
            ``host`` explicitly, so a network built-in may reach it on a loopback, link-local or
            private address (see :meth:`~toolscout.core.policy.permissions.PermissionPolicy.names_host`).
        target: for one call of a path tool (Read, Write, Edit, NotebookEdit, Glob, Grep), the real
            path its permission check approved; the executor sets it on a per-call copy. The tool
            works on exactly that path, following no symlink (:mod:`.safe_open`). None: resolve
            the call's path argument when the tool runs (a built-in run outside the executor).
    """

    cwd: Path
    state: dict[str, Any] = field(default_factory=dict)
    private_host_allowed: Callable[[str, str], bool] = field(default=lambda tool, host: False)
    target: Path | None = None


class BuiltinTool(Protocol):
    """A tool implemented inside toolscout.

    Attributes:
        spec: the definition (``server`` is None).
        read_only: True when the tool never changes anything and sends nothing off the machine
            (allowed without asking, inside the workspace). Network tools are never read-only.
    """

    spec: ToolSpec
    read_only: bool

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run with already-validated ``params``; return a result (errors as ``is_error``)."""
        ...
