"""A session over a real MCP server (``tests/fixtures/servers/normal.py`` over stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

from session_helpers import Recorder, make_settings, provider_for, user_texts

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.warm_servers import server_args
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.session.events import ToolCallFinished
from toolscout.core.session.session import Session

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "normal.py"


async def test_search_execute_real_mcp_tool_then_server_disconnects(tmp_path) -> None:
    config = ServerConfig("normal", "stdio", command=sys.executable, args=tuple(server_args(SERVER, "normal")))
    engine = Engine(
        make_settings(**{"permissions.allow": ["normal"]}),
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=[config],
    )
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        script = [
            Reply(tool_calls=[ToolCall("ToolSearch", {"query": "repeat text echo"})]),
            Reply(
                tool_calls=[ToolCall("ExecuteTool", {"tool_name": "mcp__normal__echo", "params": {"text": "hello"}})]
            ),
            Reply(text="The server said hello."),
            Reply(
                tool_calls=[ToolCall("ExecuteTool", {"tool_name": "mcp__normal__echo", "params": {"text": "again"}})]
            ),
            Reply(text="It is gone."),
        ]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for("anthropic", server.url))
            rec = Recorder()
            session.subscribe(rec)
            assert (await session.send("echo hello")).text == "The server said hello."
            await engine.disconnect("normal")
            assert (await session.send("echo again")).text == "It is gone."
            bodies = server.bodies
    finally:
        await engine.stop()
    first, later = rec.of(ToolCallFinished)
    assert first.tool_name == "mcp__normal__echo" and first.result.text() == "hello"
    assert later.result.is_error and "normal" in later.result.text()
    assert "\nmcp__normal__: add echo " in user_texts(bodies[0])[0]  # compact: prefix once
    assert any("<deferred-tools-removed>" in t and "mcp__normal__echo" in t for t in user_texts(bodies[3]))
    assert all(b["tools"] == bodies[0]["tools"] for b in bodies)
