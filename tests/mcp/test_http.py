"""The streamable HTTP transport against a real local socket (uvicorn serving an ``MCPServer``),
with configured headers reaching the server."""

from __future__ import annotations

import socket

import anyio
import pytest
from mcp.server.mcpserver import Context
from mcp_helpers import allow, fixture_module, running

from toolscout.core.mcp.config import parse_entry
from toolscout.core.models import ServerState

uvicorn = pytest.importorskip("uvicorn")


async def test_http_server_with_headers():
    server = fixture_module("normal").build("web")

    @server.tool(description="Return the Authorization header this request carried.")
    def whoami(ctx: Context) -> str:
        return (ctx.headers or {}).get("authorization", "none")

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # accepted connections queue here until uvicorn serves: no start-up race
    port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on"))
    cfg = parse_entry("web", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp",
                              "headers": {"Authorization": "Bearer ${WEB_TOKEN:-t0ken}"}}, "test", {})
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve, [sock])
        try:
            async with running([cfg]) as engine:
                status = engine.pool.status("web")
                assert status.state is ServerState.CONNECTED, status.error
                assert status.transport == "http" and status.tool_count == 7
                echo = await engine.call_tool("mcp__web__echo", {"text": "over http"}, asker=allow)
                assert echo.text() == "over http"
                who = await engine.call_tool("mcp__web__whoami", {}, asker=allow)
                assert who.text() == "Bearer t0ken"
        finally:
            web.should_exit = True
    sock.close()
