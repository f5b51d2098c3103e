"""Two deferred built-ins over MCP resources: ``ListMcpResources`` and ``ReadMcpResource``.

The engine registers them the first time a connected server declares the resources capability
and lists at least one resource or template (names as in Claude Code). Both are read-only, so
the default permission allows them. They call the server through the pool's open session.
Resources follow their server's rules: a server denied as a whole (``permissions.deny`` naming
it, ``mcp__srv__*`` ...) is left out of listings and its resources are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..builtins.base import ToolContext
from ..models import ContentBlock, ServerState, ToolErrorKind, ToolResult, ToolSpec
from .connection import ServerUnavailable
from .pool import ServerPool

LIST_NAME = "ListMcpResources"
READ_NAME = "ReadMcpResource"


def resource_blocks(contents: list[Any]) -> tuple[ContentBlock, ...]:
    """Map ``TextResourceContents`` / ``BlobResourceContents`` to ``resource`` blocks."""
    blocks: list[ContentBlock] = []
    for item in contents:
        if isinstance(item, types.TextResourceContents):
            blocks.append(ContentBlock("resource", text=item.text, uri=str(item.uri), mime_type=item.mime_type))
        elif isinstance(item, types.BlobResourceContents):
            blocks.append(ContentBlock("resource", data=item.blob, uri=str(item.uri), mime_type=item.mime_type))
    return tuple(blocks)


class _ResourceTool:
    read_only = True
    spec: ToolSpec

    def __init__(self, pool: ServerPool, denied: Callable[[str], str | None] | None = None) -> None:
        self.pool = pool
        self.denied = denied or (lambda _server: None)

    def _servers(self, wanted: str | None) -> list[str] | ToolResult:
        names = [
            s.name
            for s in self.pool.statuses()
            if s.state is ServerState.CONNECTED and s.has_resources and self.denied(s.name) is None
        ]
        if wanted is None:
            return names
        name = self.pool.find(wanted)
        rule = self.denied(name) if name else None
        if rule is not None:
            return ToolResult.error(
                self.spec.name,
                ToolErrorKind.PERMISSION_DENIED,
                f"The resources of server {name} are denied by the rule {rule!r} in "
                "permissions.deny; remove that rule to read them.",
            )
        status = self.pool.status(name) if name else None
        if status is None:
            return ToolResult.error(
                self.spec.name,
                ToolErrorKind.UNKNOWN_TOOL,
                f"No MCP server named {wanted!r}. Servers with resources: {', '.join(names) or 'none'}.",
            )
        if status.state is not ServerState.CONNECTED:
            kind = (
                ToolErrorKind.SERVER_CONNECTING
                if status.state is ServerState.CONNECTING
                else ToolErrorKind.SERVER_FAILED
            )
            why = f": {status.error}" if status.error else ""
            return ToolResult.error(self.spec.name, kind, f"Server {name} is {status.state.value}{why}.")
        return [status.name]

    def _failure(self, server: str, exc: Exception) -> ToolResult:
        if isinstance(exc, TimeoutError):
            return ToolResult.error(
                self.spec.name,
                ToolErrorKind.TIMEOUT,
                f"Server {server} did not answer within {self.pool.call_timeout:g} s (mcp.callTimeout).",
            )
        if isinstance(exc, ServerUnavailable):
            return ToolResult.error(self.spec.name, ToolErrorKind.SERVER_FAILED, f"Server {server} is not connected.")
        message = exc.error.message if isinstance(exc, MCPError) else str(exc)
        return ToolResult.error(self.spec.name, ToolErrorKind.TOOL_ERROR, f"Server {server}: {message}")


class ListMcpResources(_ResourceTool):
    """List the resources (and resource templates) of connected MCP servers.

    Args:
        pool: the server pool.
        denied: ``denied(server) -> rule or None``: the deny rule covering a whole server.
    """

    def __init__(self, pool: ServerPool, denied: Callable[[str], str | None] | None = None) -> None:
        super().__init__(pool, denied)
        self.spec = ToolSpec(
            LIST_NAME,
            "List resources (files, documents, records) that connected MCP servers expose, with their "
            "URIs. Read one with ReadMcpResource.",
            {
                "type": "object",
                "properties": {
                    "server": {
                        "type": "string",
                        "description": "only this server (default: every server with resources)",
                    }
                },
                "additionalProperties": False,
            },
            search_hint="mcp resources list uri browse documents",
        )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        servers = self._servers(params.get("server"))
        if isinstance(servers, ToolResult):
            return servers
        lines: list[str] = []
        for server in servers:
            conn = self.pool.connection(server)
            try:
                if conn is None:
                    raise ServerUnavailable(self.pool.status(server))  # type: ignore[arg-type]
                resources, templates = await conn.list_resources(self.pool.call_timeout)
            except Exception as exc:  # reported per server
                lines.append(f"{server}: error: {self._failure(server, exc).text()}")
                continue
            for r in resources:
                desc = f" - {r.description}" if r.description else ""
                lines.append(f"{server}: {r.uri} ({r.name}{', ' + r.mime_type if r.mime_type else ''}){desc}")
            for t in templates:
                lines.append(f"{server}: template {t.uri_template} ({t.name})")
        return ToolResult.ok(self.spec.name, "\n".join(lines) if lines else "No MCP server lists any resources.")


class ReadMcpResource(_ResourceTool):
    """Read one resource by server and URI (arguments as :class:`ListMcpResources`)."""

    def __init__(self, pool: ServerPool, denied: Callable[[str], str | None] | None = None) -> None:
        super().__init__(pool, denied)
        self.spec = ToolSpec(
            READ_NAME,
            "Read one MCP resource by its server name and URI (see ListMcpResources).",
            {
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "the MCP server name"},
                    "uri": {"type": "string", "description": "the resource URI"},
                },
                "required": ["server", "uri"],
                "additionalProperties": False,
            },
            search_hint="mcp resource read fetch uri document content",
        )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        servers = self._servers(params["server"])
        if isinstance(servers, ToolResult):
            return servers
        server = servers[0]
        conn = self.pool.connection(server)
        try:
            if conn is None:
                raise ServerUnavailable(self.pool.status(server))  # type: ignore[arg-type]
            result = await conn.read_resource(params["uri"], self.pool.call_timeout)
        except Exception as exc:  # mapped to an actionable error
            return self._failure(server, exc)
        return ToolResult(self.spec.name, resource_blocks(list(result.contents)))
