"""Streamable HTTP servers that restart or forget their sessions: a 404 for the ``Mcp-Session-Id``
means the session is gone, so the client starts one new session (``initialize`` again) and sends
the request once more (MCP spec, basic/transports, "Session Management"). Real uvicorn servers
on loopback serving an SDK ``MCPServer``; a server that keeps answering 404 gets one retry only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_helpers import allow, running, serving

from toolscout.core.mcp.config import parse_entry
from toolscout.core.models import ServerState

pytest.importorskip("uvicorn")


class Watched:
    """ASGI middleware in front of an MCP app: records every POST as ``(JSON-RPC method, whether it
    carried an Mcp-Session-Id)``; with :attr:`forget_calls`, answers each ``tools/call`` that
    carries a session id with the SDK's own 404 "Session not found" (a server that forgets every
    session before the call arrives)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[tuple[str | None, bool]] = []
        self.forget_calls = False

    def count(self, method: str) -> int:
        """How many POSTs carried ``method``."""
        return sum(1 for m, _ in self.posts if m == method)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = [await receive()]
        while chunks[-1].get("more_body"):
            chunks.append(await receive())
        body = json.loads(b"".join(c.get("body", b"") for c in chunks) or b"null")
        method = body.get("method") if isinstance(body, dict) else None
        has_session = any(k.lower() == b"mcp-session-id" for k, _ in scope["headers"])
        self.posts.append((method, has_session))
        if self.forget_calls and method == "tools/call" and has_session:
            error = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": error})
            return
        replay = iter(chunks)

        async def replayed() -> Any:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)


def recording_server(label: str, received: list[str]) -> Watched:
    """A fresh server process stand-in: its ``record`` tool appends ``label: text`` to ``received``."""
    server = MCPServer("web")

    @server.tool(description="Record the text on the server and echo it with the server's label.")
    def record(text: str) -> str:
        received.append(f"{label}: {text}")
        return f"{label}: {text}"

    return Watched(server.streamable_http_app())


def http_config(port: int) -> Any:
    return parse_entry("web", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}, "test", {})


async def test_a_restarted_http_server_gets_a_new_session_and_the_call():
    received: list[str] = []
    first = recording_server("first", received)
    first_serving = serving(first)
    port = await first_serving.__aenter__()
    try:
        async with running([http_config(port)]) as engine:
            one = await engine.call_tool("mcp__web__record", {"text": "one"}, asker=allow)
            assert one.text() == "first: one" and not one.is_error
            await first_serving.__aexit__(None, None, None)
            first_serving = None  # the server process is gone, with its sessions
            second = recording_server("second", received)
            async with serving(second, port):  # ... and it comes back on the same port
                two = await engine.call_tool("mcp__web__record", {"text": "two"}, asker=allow)
                assert not two.is_error, two.text()
                assert two.text() == "second: two"
                assert received == ["first: one", "second: two"]
                # the stale session's call was answered 404; one new session; the call sent once more
                assert second.posts[0] == ("tools/call", True)
                assert second.count("initialize") == 1 and second.count("tools/call") == 2
                assert engine.pool.status("web").state is ServerState.CONNECTED
                three = await engine.call_tool("mcp__web__record", {"text": "three"}, asker=allow)
                assert three.text() == "second: three"
                assert second.count("initialize") == 1  # the new session serves on
    finally:
        if first_serving is not None:
            await first_serving.__aexit__(None, None, None)


async def test_a_server_that_keeps_answering_404_gets_one_retry_and_a_clear_error():
    received: list[str] = []
    server = recording_server("web", received)
    async with serving(server) as port, running([http_config(port)]) as engine:
        assert (await engine.call_tool("mcp__web__record", {"text": "ok"}, asker=allow)).text() == "web: ok"
        server.forget_calls = True
        before = len(server.posts)
        result = await engine.call_tool("mcp__web__record", {"text": "lost"}, asker=allow)
        assert result.is_error
        assert "404" in result.text() and "new session" in result.text(), result.text()
        later = server.posts[before:]
        assert [m for m, _ in later].count("initialize") == 1  # one new session, no loop
        assert [m for m, _ in later].count("tools/call") == 2  # the call and its one retry
        assert received == ["web: ok"]
        server.forget_calls = False
        again = await engine.call_tool("mcp__web__record", {"text": "back"}, asker=allow)
        assert again.text() == "web: back"
