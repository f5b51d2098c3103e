"""OpenAI's native deferral (issue 22 item 2): the Responses API with a client-executed
``tool_search``. ToolSearch (ranked by toolscout) is the ``tool_search`` tool; the model's
``tool_search_call`` is answered by a ``tool_search_output`` that loads the hits (MCP tools in a
namespace per server, ``defer_loading: true``); the model's namespaced ``function_call`` runs the
real tool. The loopback Responses API enforces the documented pairing and deferral rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.warm_servers import server_args
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.serialize import dumps
from toolscout.core.session.providers.openai_provider import OpenAIProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings

LATE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "late.py"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))


def _engine(tmp_path: Path, native: str = "on") -> Engine:
    settings = Settings().with_overrides(
        {"toolSearch.enabled": "true", "toolSearch.native": native, "permissions.allow": ["mcp__big__*"]}, "test"
    )
    server = ServerConfig(
        "big",
        "stdio",
        command=sys.executable,
        args=tuple(server_args(LATE, "big", "--tools", "4", "--props", "1")),
        source="test",
    )
    return Engine(
        settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=tmp_path, mcp_servers=[server]
    )


async def test_tool_search_call_loads_a_namespaced_tool_that_then_runs(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        script = [
            Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:op_0002"})]),
            Reply(tool_calls=[ToolCall("mcp__big__op_0002", {"field_0": "x"})]),
            Reply(text="done"),
        ]
        with FakeModelServer(script) as server:
            provider = OpenAIProvider("test-key", "gpt-5.4", server.url + "/v1", max_retries=0, timeout=20)
            session = Session(engine, provider=provider, persist=False)
            assert (await session.send("run op 2")).text == "done"
            requests, refused = server.requests, server.refused
        assert refused == []
        assert all(path.endswith("/responses") for path, _ in requests)
        first = requests[0][1]
        kinds = [t["type"] for t in first["tools"]]
        assert kinds.count("tool_search") == 1 and first["tools"][kinds.index("tool_search")]["execution"] == "client"
        assert not any("op_0002" in json.dumps(t) for t in first["tools"])  # deferred: not in tools at all
        assert len({dumps(body["tools"]) for _, body in requests}) == 1  # byte-identical across the turn
        second = requests[1][1]["input"]
        output = next(i for i in second if i.get("type") == "tool_search_output")
        (space,) = output["tools"]
        assert space["type"] == "namespace" and space["name"] == "mcp__big"
        assert [(f["name"], f["defer_loading"]) for f in space["tools"]] == [("op_0002", True)]
        third = requests[2][1]["input"]
        result = next(i for i in third if i.get("type") == "function_call_output")
        assert "ran op_0002" in result["output"]  # the fixture server ran it
    finally:
        await engine.stop()


async def test_an_endpoint_without_responses_tool_search_falls_back_to_chat_completions(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        with FakeModelServer([Reply(text="hello")], refuse_native=True) as server:
            provider = OpenAIProvider("test-key", "gpt-5.4", server.url + "/v1", max_retries=0, timeout=20)
            session = Session(engine, provider=provider, persist=False)
            assert (await session.send("hi")).text == "hello"
            paths = [path for path, _ in server.requests]
        assert paths[0].endswith("/responses") and paths[1].endswith("/chat/completions")
        assert session.native_choice is not None and not session.native_choice.native
    finally:
        await engine.stop()


async def test_a_late_servers_tool_is_found_and_loaded_with_the_tools_unchanged(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    settings = Settings().with_overrides(
        {"toolSearch.enabled": "true", "toolSearch.native": "on", "permissions.allow": ["mcp__late__*"]}, "test"
    )
    late = ServerConfig(
        "late",
        "stdio",
        command=sys.executable,
        source="test",
        args=tuple(server_args(LATE, "late", "--tools", "3", "--props", "1", "--gate", str(gate))),
    )
    engine = Engine(
        settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=tmp_path, mcp_servers=[late]
    )
    await engine.start()
    try:
        script = [
            Reply(text="first"),
            Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:op_0001"})]),
            Reply(tool_calls=[ToolCall("mcp__late__op_0001", {"field_0": "x"})]),
            Reply(text="done"),
        ]
        with FakeModelServer(script) as server:
            provider = OpenAIProvider("test-key", "gpt-5.4", server.url + "/v1", max_retries=0, timeout=20)
            session = Session(engine, provider=provider, persist=False)
            assert (await session.send("hi")).text == "first"  # before the server is up
            gate.touch()
            assert await engine.wait_for_servers(30)
            assert (await session.send("run late op 1")).text == "done"
            bodies, refused = server.bodies, server.refused
        assert refused == []
        assert len({dumps(b["tools"]) for b in bodies}) == 1  # late tools never enter the tools array
        assert "mcp__late__" in json.dumps(bodies[1]["input"])  # announced in the next user message
        result = next(i for i in bodies[3]["input"][::-1] if i.get("type") == "function_call_output")
        assert "ran op_0001" in result["output"]
    finally:
        await engine.stop()
