"""Plain data records shared by every layer of the core.

Records are frozen dataclasses so they can be passed between asyncio tasks and the UI
without defensive copies. ``input_schema`` is kept exactly as the server sent it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, eq=True)
class ToolSpec:
    """One tool as the catalog knows it.

    Attributes:
        name: canonical name, unique in the catalog: a built-in's own name (``Read``) or
            ``mcp__<server>__<tool>`` for MCP tools, normalised by ``toolscout.core.names``.
        description: description as given by the tool or server (untrusted text).
        input_schema: the JSON Schema object of the arguments, exactly as sent (``inputSchema``).
        server: the MCP server name, or None for a built-in tool.
        original_name: the name the server knows the tool by (used for ``tools/call``).
        search_hint: optional extra words that help search (weighted between name and description).
        always_load: True when the tool must always be sent with its full schema.
        annotations: MCP tool annotations (``readOnlyHint`` ...), or None.
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    server: str | None = None
    original_name: str = ""
    search_hint: str | None = None
    always_load: bool = False
    annotations: dict[str, Any] | None = None

    def __hash__(self) -> int:  # dict fields are unhashable; the name is the identity
        return hash((self.name, self.server))

    @property
    def is_mcp(self) -> bool:
        """True for tools that come from an MCP server."""
        return self.server is not None

    @property
    def bare_name(self) -> str:
        """The tool's own name without the ``mcp__server__`` prefix."""
        return self.original_name or self.name

    @property
    def read_only(self) -> bool:
        """True when the tool declares ``readOnlyHint`` (an MCP annotation)."""
        return bool(self.annotations and self.annotations.get("readOnlyHint") is True)


class ServerState(str, enum.Enum):
    """Connection state of one MCP server."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "failed"
    DISCONNECTED = "disconnected"


@dataclass(frozen=True)
class ServerStatus:
    """What the core knows about one configured MCP server at a moment.

    Attributes:
        name: server name from the configuration (the key of ``mcpServers``).
        state: connection state.
        error: the reason for FAILED (or the last error), human readable.
        instructions: the ``instructions`` string from ``initialize``, or None.
        tool_count: number of tools from the last successful ``tools/list``.
        transport: ``stdio``, ``http`` or ``sse``.
        has_resources: the server declared the resources capability.
    """

    name: str
    state: ServerState
    error: str | None = None
    instructions: str | None = None
    tool_count: int = 0
    transport: str = "stdio"
    has_resources: bool = False
