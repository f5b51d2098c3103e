"""Provider-native deferral on Anthropic's Messages API (issue 22 items 1, 3, 5).

Every deferred tool is in ``tools`` with ``defer_loading: true`` and its real schema; ToolSearch
(ranked by toolscout) answers with ``tool_reference`` blocks, beside a text block; the model calls
the tool directly. The loopback API enforces the real API's rules (tests/fixtures/providers/
wire_rules.py) and answers 400 where it would, so every request here is one the API accepts.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from session_helpers import Recorder

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.warm_servers import server_args
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.serialize import dumps
from toolscout.core.session.events import ToolSearchSwitched
from toolscout.core.session.native import choose, refused_by
from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings

LATE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "late.py"
NATIVE_MODEL = "claude-sonnet-4-5"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))  # refusals are remembered there


def _server(name: str, tools: int, gate: Path | None = None) -> ServerConfig:
    extra = ("--gate", str(gate)) if gate else ()
    return ServerConfig(
        name,
        "stdio",
        command=sys.executable,
        args=tuple(server_args(LATE, name, "--tools", str(tools), "--props", "1", *extra)),
        source="test",
    )


def _engine(tmp_path: Path, *servers: ServerConfig, native: str = "auto") -> Engine:
    settings = Settings().with_overrides(
        {
            "toolSearch.enabled": "true",
            "toolSearch.native": native,
            "permissions.allow": ["mcp__big__*", "mcp__late__*"],
        },
        "test",
    )
    return Engine(
        settings,
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=list(servers),
    )


def _provider(url: str, model: str = NATIVE_MODEL) -> AnthropicProvider:
    return AnthropicProvider("test-key", model, url, max_retries=0, timeout=20)


def _result_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


async def test_search_answers_with_references_and_the_model_calls_the_tool_directly(tmp_path: Path) -> None:
    engine = _engine(tmp_path, _server("big", 5))
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        script = [
            Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:op_0003"})]),
            Reply(tool_calls=[ToolCall("mcp__big__op_0003", {"field_0": "x"})]),
            Reply(text="done"),
        ]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=_provider(server.url), persist=False)
            assert (await session.send("run op 3")).text == "done"
            bodies, refused = server.bodies, server.refused
        assert refused == []  # every request kept the real API's rules
        tools = {t["name"]: t for t in bodies[0]["tools"]}
        assert tools["mcp__big__op_0003"]["defer_loading"] is True
        assert tools["mcp__big__op_0003"]["input_schema"]["properties"]["field_0"]["type"] == "string"
        assert "defer_loading" not in tools["ToolSearch"] and "ExecuteTool" not in tools
        assert not any("cache_control" in t for t in bodies[0]["tools"])
        assert len({dumps(b["tools"]) for b in bodies}) == 1  # byte-identical across the turn
        (search_result,) = _result_blocks(bodies[1])
        assert search_result["content"] == [{"type": "tool_reference", "tool_name": "mcp__big__op_0003"}]
        siblings = [b for b in bodies[1]["messages"][-1]["content"] if b.get("type") == "text"]
        assert any("Tools loaded: mcp__big__op_0003" in b["text"] for b in siblings)
        (call_result,) = _result_blocks(bodies[2])
        assert "ran op_0003" in json.dumps(call_result)  # the fixture server ran it
        assert session.native_choice is not None and session.native_choice.native
    finally:
        await engine.stop()


async def test_a_call_before_search_is_not_sent_and_loads_the_tool_by_reference(tmp_path: Path) -> None:
    engine = _engine(tmp_path, _server("big", 3))
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        script = [
            Reply(tool_calls=[ToolCall("mcp__big__op_0001", {"field_0": "x"})]),
            Reply(tool_calls=[ToolCall("mcp__big__op_0001", {"field_0": "y"})]),
            Reply(text="ok"),
        ]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=_provider(server.url), persist=False)
            await session.send("do it")
            bodies, refused = server.bodies, server.refused
        assert refused == []
        (gate,) = _result_blocks(bodies[1])
        assert gate["content"] == [{"type": "tool_reference", "tool_name": "mcp__big__op_0001"}]
        assert "not sent" in json.dumps(bodies[1]["messages"][-1]["content"][-1])
        (ran,) = _result_blocks(bodies[2])
        assert "ran op_0001" in json.dumps(ran)  # only the second call reached the server
    finally:
        await engine.stop()


async def test_a_late_server_appends_its_deferred_tools(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    engine = _engine(tmp_path, _server("big", 2), _server("late", 2, gate))
    await engine.start()
    try:
        async with asyncio.timeout(30):
            while len(engine.catalog.server_tools("big")) < 2:
                await asyncio.sleep(0.02)
        script = [Reply(text="one"), Reply(text="two")]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=_provider(server.url), persist=False)
            await session.send("first")
            gate.touch()
            assert await engine.wait_for_servers(30)
            await session.send("second")
            bodies, refused = server.bodies, server.refused
        assert refused == []
        first, second = (dumps(b["tools"]) for b in bodies)
        assert second.startswith(first[:-1])  # append-only: the first array is a prefix
        appended = [t for t in bodies[1]["tools"] if t["name"].startswith("mcp__late__")]
        assert appended and all(t["defer_loading"] is True for t in appended)
    finally:
        await engine.stop()


async def test_an_endpoint_that_refuses_native_fields_falls_back_once_and_is_remembered(tmp_path: Path) -> None:
    engine = _engine(tmp_path, _server("big", 2))
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        script = [
            Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:op_0001"})]),
            Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": "op_0001", "params": {"field_0": "x"}})]),
            Reply(text="done"),
            Reply(text="again"),
        ]
        with FakeModelServer(script, refuse_native=True) as server:
            session = Session(engine, provider=_provider(server.url), persist=False)
            rec = Recorder()
            session.subscribe(rec)
            assert (await session.send("run op 1")).text == "done"
            bodies, refused = server.bodies, server.refused
            assert len(refused) == 1  # one refused request, then the portable path
            assert [e for e in rec.of(ToolSearchSwitched) if "refused" in e.notice]
            assert "ExecuteTool" in {t["name"] for t in bodies[1]["tools"]}
            assert not any("defer_loading" in t for b in bodies[1:] for t in b["tools"])
            assert "ran op_0001" in json.dumps(bodies[3]["messages"][-1])
            assert refused_by(server.url)
            # A new session over the same endpoint starts portable: no second refusal.
            again = Session(engine, provider=_provider(server.url), persist=False)
            assert (await again.send("hi")).text == "again"
            assert len(server.refused) == 1
            assert again.native_choice is not None and not again.native_choice.native
    finally:
        await engine.stop()


@pytest.mark.parametrize(
    ("setting", "provider", "model", "native"),
    [
        ("auto", "anthropic", "claude-sonnet-4-5", True),
        ("auto", "anthropic", "claude-opus-4-1", False),
        ("auto", "anthropic", "claude-3-5-haiku", False),
        ("on", "anthropic", "claude-test", True),
        ("off", "anthropic", "claude-sonnet-4-5", False),
        ("auto", "openai", "gpt-5.4", True),
        ("auto", "openai", "gpt-4.1-mini", False),
        ("on", "offline", None, False),
    ],
)
def test_the_choice_follows_the_setting_and_the_capability_table(
    setting: str, provider: str, model: str | None, native: bool
) -> None:
    choice = choose(setting, provider, model, None)
    assert choice.native is native and choice.reason


@pytest.mark.parametrize(("setting", "native"), [("auto", False), ("on", True)])
def test_an_openai_compatible_endpoint_stays_on_chat_completions_unless_asked(setting: str, native: bool) -> None:
    choice = choose(setting, "openai", "gpt-5.4", "http://localhost:8000/v1")
    assert choice.native is native and choice.reason
