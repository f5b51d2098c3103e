"""The HTTP transports (streamable HTTP and SSE: :mod:`toolscout.core.mcp.transports`) against a
real local socket (uvicorn serving an ``MCPServer``), with configured headers reaching the server."""

from __future__ import annotations

import pytest
from http_upstream import serving
from mcp.server.mcpserver import Context, MCPServer
from mcp_helpers import allow, fixture_module, running

from toolscout.core.mcp.config import parse_entry
from toolscout.core.models import ServerState

uvicorn = pytest.importorskip("uvicorn")


def web_server() -> MCPServer:
    """The ``normal`` fixture server plus a tool that answers with the request's Authorization."""
    server = fixture_module("normal").build("web")

    @server.tool(description="Return the Authorization header this request carried.")
    def whoami(ctx: Context) -> str:
        return (ctx.headers or {}).get("authorization", "none")

    return server


async def check_web_server(kind: str, url: str) -> None:
    """Connect to the server at ``url`` over transport ``kind`` with a configured Authorization
    header; call a tool, and check the header the server saw."""
    cfg = parse_entry(
        "web", {"type": kind, "url": url, "headers": {"Authorization": "Bearer ${WEB_TOKEN:-t0ken}"}}, "test", {}
    )
    async with running([cfg]) as engine:
        status = engine.pool.status("web")
        assert status.state is ServerState.CONNECTED, status.error
        assert status.transport == kind and status.tool_count == 7
        echo = await engine.call_tool("mcp__web__echo", {"text": f"over {kind}"}, asker=allow)
        assert echo.text() == f"over {kind}"
        who = await engine.call_tool("mcp__web__whoami", {}, asker=allow)
        assert who.text() == "Bearer t0ken"


async def test_http_server_with_headers():
    server = web_server()
    async with serving(server.streamable_http_app()) as port:
        await check_web_server("http", f"http://127.0.0.1:{port}/mcp")


async def test_sse_server_with_headers():
    """The 2024-11-05 HTTP+SSE transport: the event stream from ``/sse``, requests POSTed to the
    endpoint it announces, each carrying the configured header."""
    server = web_server()
    async with serving(server.sse_app()) as port:
        await check_web_server("sse", f"http://127.0.0.1:{port}/sse")
