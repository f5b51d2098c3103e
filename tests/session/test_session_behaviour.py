"""Session behaviour: stub gate, offline driver, cancellation, crash resume, parallel calls,
permissions, provider errors. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from session_helpers import Recorder, make_engine, provider_for

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.models import ToolErrorKind, ToolResult, ToolSpec
from toolscout.core.session.events import (
    AssistantTextDelta,
    RecommendationsReady,
    SessionError,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
)
from toolscout.core.session.projection import check_request
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session
from toolscout.core.session.transcript import find_transcript, load_transcript


async def test_stub_direct_call_before_search_self_heals(engine) -> None:
    script = [
        Reply(tool_calls=[ToolCall("get_forecast", {"town": "Oslo"})]),  # not loaded: gate
        Reply(tool_calls=[ToolCall("get_forecast", {"city": "Oslo"})]),  # retried with the schema
        Reply(text="Sunny."),
    ]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("anthropic", server.url), strategy="stub")
        rec = Recorder()
        session.subscribe(rec)
        assert (await session.send("weather in Oslo?")).text == "Sunny."
    stub = next(t for t in server.bodies[0]["tools"] if t["name"] == "get_forecast")
    assert stub["description"].startswith("[deferred]") and stub["input_schema"]["properties"] == {}
    results = [e.result for e in rec.of(ToolCallFinished)]
    assert results[0].error_kind is ToolErrorKind.NOT_LOADED and '"city"' in results[0].text()
    assert not results[1].is_error and "Oslo" in results[1].text()
    assert [e.via for e in rec.of(ToolCallStarted)] == ["direct", "direct"]
    assert session.tool_calls == {"get_forecast": 2}  # the token report's usage counts (the UI keeps none)


async def test_stub_removed_tool_keeps_its_stub_and_errors_clearly(engine) -> None:
    engine.apply_delta(engine.catalog.set_server_tools("db", [ToolSpec(name="query", description="Run SQL.")]))
    script = [Reply(text="hi"), Reply(tool_calls=[ToolCall("mcp__db__query", {})]), Reply(text="gone")]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("anthropic", server.url), strategy="stub")
        await session.send("hello")
        engine.apply_delta(engine.catalog.remove_server("db"))
        rec = Recorder()
        session.subscribe(rec)
        await session.send("query the db")
    assert [t["name"] for t in server.bodies[1]["tools"]] == [t["name"] for t in server.bodies[0]["tools"]]
    assert rec.of(ToolCallFinished)[0].result.is_error
    removed = [b["text"] for b in server.bodies[1]["messages"][-1]["content"] if b.get("type") == "text"]
    assert any("<deferred-tools-removed>\nmcp__db__query" in t for t in removed)


async def test_offline_driver_message_pick_fill_run(engine) -> None:
    session = Session(engine, provider=OfflineProvider())
    rec = Recorder()
    session.subscribe(rec)
    outcome = await session.send("weather forecast for a city")
    assert not outcome.error
    recs = session.recommendations
    assert recs and recs[0].name == "get_forecast" and "city" in recs[0].input_schema["properties"]
    assert rec.of(RecommendationsReady)
    result = await session.run_tool(recs[0].name, {"city": "Rome"})
    assert not result.is_error and "Rome" in result.text()
    started = rec.of(ToolCallStarted)[-1]
    assert (started.tool_name, started.params, started.via) == ("get_forecast", {"city": "Rome"}, "ExecuteTool")
    roles = [m["role"] for m in session.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert session.messages[1]["content"][0]["name"] == "ToolSearch"
    assert session.messages[3]["content"][0]["input"] == {"tool_name": "get_forecast", "params": {"city": "Rome"}}
    check_request(session.projection.tools, session.messages)
    bad = await session.run_tool("get_forecast", {"town": "Rome"})
    assert bad.error_kind is ToolErrorKind.INVALID_PARAMS


async def test_cancel_while_streaming_keeps_partial_text() -> None:
    import tempfile
    from pathlib import Path

    engine = make_engine(Path(tempfile.mkdtemp()))
    with FakeModelServer([Reply(text="Thinking about it at length", stall=True), Reply(text="ok")]) as server:
        session = Session(engine, provider=provider_for("anthropic", server.url))
        rec = Recorder()
        session.subscribe(rec)
        task = asyncio.create_task(session.send("long answer please"))
        await rec.wait_for(AssistantTextDelta)  # streaming: the first delta reached the session
        assert session.cancel()
        outcome = await asyncio.wait_for(task, 10)
        assert outcome.cancelled and rec.of(TurnCancelled)
        assert (await session.send("again")).text == "ok"
    check_request(server.bodies[-1]["tools"], server.bodies[-1]["messages"])


async def test_cancel_during_tool_call_answers_every_tool_use(tmp_path) -> None:
    from session_helpers import SlowTool, WeatherTool

    slow = SlowTool()
    engine = make_engine(tmp_path, extra=[WeatherTool(), slow])
    script = [
        Reply(
            tool_calls=[
                ToolCall("ExecuteTool", {"tool_name": "slow_job", "params": {}}),
                ToolCall("ExecuteTool", {"tool_name": "get_forecast", "params": {"city": "A"}}),
            ]
        ),
        Reply(text="after"),
    ]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("anthropic", server.url))
        task = asyncio.create_task(session.send("go"))
        await asyncio.wait_for(slow.started.wait(), 10)
        session.cancel()
        outcome = await asyncio.wait_for(task, 10)
        assert outcome.cancelled and slow.cancelled
        last = session.messages[-1]["content"]
        assert [b["is_error"] for b in last] == [True, False]  # the quick call kept its real result
        assert "Cancelled" in last[0]["content"]
        assert (await session.send("continue")).text == "after"
    check_request(server.bodies[-1]["tools"], server.bodies[-1]["messages"])


async def test_parallel_tool_calls_run_concurrently(tmp_path) -> None:
    arrived: list[str] = []
    both = asyncio.Event()

    class Meet:
        read_only = True

        def __init__(self, name: str) -> None:
            self.spec = ToolSpec(name=name, description="Meet the other tool.", original_name=name)

        async def run(self, params: dict[str, Any], ctx: Any) -> ToolResult:
            arrived.append(self.spec.name)
            if len(arrived) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 5)  # deadlocks (times out) if run one after the other
            return ToolResult.ok(self.spec.name, "met")

    engine = make_engine(tmp_path, extra=[Meet("meet_a"), Meet("meet_b")])
    script = [
        Reply(
            tool_calls=[
                ToolCall("ExecuteTool", {"tool_name": "meet_a", "params": {}}),
                ToolCall("ExecuteTool", {"tool_name": "meet_b", "params": {}}),
            ]
        ),
        Reply(text="met"),
    ]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("openai", server.url))
        assert (await asyncio.wait_for(session.send("meet"), 10)).text == "met"
    results = session.messages[-2]["content"]
    assert [r["content"] for r in results] == ["met", "met"]


async def test_resume_after_crash_mid_turn(engine) -> None:
    with FakeModelServer([Reply(tool_calls=[ToolCall("Bash", {"command": "sleep 100"})])]) as server:
        asked = asyncio.Event()

        async def never_answers(tool: ToolSpec, params: dict[str, Any]) -> str:
            asked.set()  # the assistant's tool_use is in the transcript: the turn waits for a person
            await asyncio.Event().wait()
            return "deny"

        session = Session(engine, provider=provider_for("anthropic", server.url), asker=never_answers)
        task = asyncio.create_task(session.send("run it"))
        await asyncio.wait_for(asked.wait(), 10)
        assert any(m["role"] == "assistant" for m in session.messages)
        task.cancel()  # the process "dies": nothing is repaired in memory ...
        with pytest.raises(asyncio.CancelledError):
            await task
    session.store.close()  # ... and the OS drops a dead process's transcript lock
    path = find_transcript(session.id)
    lines = path.read_text().splitlines()
    saved = load_transcript(path)
    # ... simulate the crash on disk: drop everything after the assistant's tool_use.
    cut = next(i for i, line in enumerate(lines) if '"role":"assistant"' in line)
    path.write_text("\n".join(lines[: cut + 1]) + '\n{"type": "mess')  # and a torn last line
    assert saved.messages
    with FakeModelServer([Reply(text="resumed fine")]) as server:
        resumed = Session.resume(engine, session.id[:12], provider=provider_for("anthropic", server.url))
        repair = resumed.messages[-1]["content"][0]
        assert repair["type"] == "tool_result" and repair["is_error"] and "Interrupted" in repair["content"]
        assert (await resumed.send("are you there?")).text == "resumed fine"
        body = server.bodies[0]
    check_request(body["tools"], body["messages"])
    assert json.dumps(body["system"]) and body["messages"][0]["content"][-1]["text"] == "run it"
    assert any("torn last line" in w for w in engine.warnings)
    await resumed.close()  # one writer at a time: the first resume lets go before the second
    # the first resume cut the torn line off, so what it appended is readable: resume again
    with FakeModelServer([Reply(text="still here")]) as server:
        again = Session.resume(engine, session.id[:12], provider=provider_for("anthropic", server.url))
        assert (await again.send("and now?")).text == "still here"
        body = server.bodies[0]
    check_request(body["tools"], body["messages"])
    assert [m["content"][-1].get("text") for m in body["messages"] if m["role"] == "user"][-2:] == [
        "are you there?",
        "and now?",
    ]


async def test_permission_denied_headless_names_the_rule(engine) -> None:
    script = [Reply(tool_calls=[ToolCall("Bash", {"command": "echo hi"})]), Reply(text="denied")]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("anthropic", server.url), asker=None)
        rec = Recorder()
        session.subscribe(rec)
        await session.send("run echo")
    result = rec.of(ToolCallFinished)[0].result
    assert result.error_kind is ToolErrorKind.PERMISSION_DENIED and "--allowed-tools Bash" in result.text()


async def test_asker_allows_once(engine) -> None:
    asked: list[str] = []

    async def asker(tool: ToolSpec, params: dict[str, Any]) -> str:
        asked.append(tool.name)
        return "allow_once"

    script = [Reply(tool_calls=[ToolCall("Bash", {"command": "echo hi"})]), Reply(text="ran")]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("openai", server.url), asker=asker)
        rec = Recorder()
        session.subscribe(rec)
        await session.send("run echo")
    assert asked == ["Bash"] and rec.of(ToolCallFinished)[0].result.text() == "hi"


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_provider_errors_are_clear(engine, kind: str) -> None:
    with FakeModelServer([Reply(status=401, error="invalid x-api-key")]) as server:
        session = Session(engine, provider=provider_for(kind, server.url))
        rec = Recorder()
        session.subscribe(rec)
        outcome = await session.send("hi")
    assert outcome.error and "401" in outcome.error and rec.of(SessionError)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    outcome = await Session(engine, provider=provider_for(kind, dead)).send("hi")
    assert outcome.error and outcome.error.startswith("Cannot reach")
