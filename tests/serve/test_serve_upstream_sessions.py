"""``toolscout serve`` in front of a streamable-HTTP server that restarts: the gateway's client
calls on, the upstream's HTTP 404 for the old session makes one new session and the call is
sent once more (MCP spec, basic/transports, "Session Management"); the client never has to ask
for a reconnect it cannot make. The upstream is a real uvicorn ``MCPServer`` on loopback that
records what it received; the client is the real SDK client over stdio."""

from __future__ import annotations

import pytest
from serve_helpers import stdio_gateway, text_of, write_config

from fixtures.http_upstream import restarting_server

pytest.importorskip("uvicorn")


async def test_an_upstream_that_restarted_gets_the_next_call_on_a_new_session(tmp_path):
    async with restarting_server() as upstream:
        await upstream.start("first")
        cfg = write_config(tmp_path, {"web": {"type": "http", "url": upstream.url}})
        async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "mcp__web") as client:
            one = await client.call_tool("call_tool", {"name": "mcp__web__record", "arguments": {"text": "one"}})
            assert text_of(one) == "first: one", text_of(one)
            await upstream.stop()
            second = await upstream.start("second")
            two = await client.call_tool("call_tool", {"name": "mcp__web__record", "arguments": {"text": "two"}})
        assert not two.is_error and text_of(two) == "second: two", text_of(two)
        assert upstream.received == ["first: one", "second: two"]
        assert second.count("initialize") == 1 and second.count("tools/call") == 2
