"""Streamable HTTP servers that restart or forget their sessions: a 404 for the ``Mcp-Session-Id``
means the session is gone, so the client starts one new session (``initialize`` again) and sends
the request once more (MCP spec, basic/transports, "Session Management"). Real uvicorn servers
on loopback serving an SDK ``MCPServer``; a server that keeps answering 404 gets one retry only.
"""

from __future__ import annotations

from typing import Any

import pytest
from http_upstream import recording_server, restarting_server, serving
from mcp_helpers import allow, running

from toolscout.core.mcp.config import parse_entry
from toolscout.core.models import ServerState

pytest.importorskip("uvicorn")


def http_config(port: int) -> Any:
    return parse_entry("web", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}, "test", {})


async def test_a_restarted_http_server_gets_a_new_session_and_the_call():
    async with restarting_server() as upstream:
        await upstream.start("first")
        async with running([http_config(upstream.port)]) as engine:
            one = await engine.call_tool("mcp__web__record", {"text": "one"}, asker=allow)
            assert one.text() == "first: one" and not one.is_error
            await upstream.stop()  # the server process is gone, with its sessions
            second = await upstream.start("second")  # ... and it comes back on the same port
            two = await engine.call_tool("mcp__web__record", {"text": "two"}, asker=allow)
            assert not two.is_error, two.text()
            assert two.text() == "second: two"
            assert upstream.received == ["first: one", "second: two"]
            # the stale session's call was answered 404; one new session; the call sent once more
            assert second.posts[0] == ("tools/call", True)
            assert second.count("initialize") == 1 and second.count("tools/call") == 2
            assert engine.pool.status("web").state is ServerState.CONNECTED
            three = await engine.call_tool("mcp__web__record", {"text": "three"}, asker=allow)
            assert three.text() == "second: three"
            assert second.count("initialize") == 1  # the new session serves on


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


async def test_only_a_404_to_a_request_post_means_the_session_is_gone():
    """A server that answers the optional GET event stream with 404 (the spec says 405) still has
    the session: a call it answers with a JSON-RPC error ran, and is never sent again."""
    received: list[str] = []
    server = recording_server("web", received)
    server.refuse_get = True
    async with serving(server) as port, running([http_config(port)]) as engine:
        refused = await engine.call_tool("mcp__web__refuse", {"text": "once"}, asker=allow)
        assert refused.is_error and "refused once" in refused.text(), refused.text()
        assert received == ["web: once"]
        assert server.count("initialize") == 1 and server.count("tools/call") == 1
