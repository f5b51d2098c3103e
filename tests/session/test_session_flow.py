"""Full sessions against the loopback fake APIs, with the real SDKs: search → execute → answer."""

from __future__ import annotations

import json

import pytest
from session_helpers import Recorder, make_settings, provider_for, user_texts

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.session.events import (
    AssistantTextDelta,
    SearchResultsReady,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageReported,
)
from toolscout.core.session.session import Session


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_search_then_execute_then_answer(engine, kind: str) -> None:
    script = [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": "weather forecast"})]),
        Reply(
            text="Let me check.",
            tool_calls=[ToolCall("ExecuteTool", {"tool_name": "get_forecast", "params": {"city": "Paris"}})],
            cache_read=900,
        ),
        Reply(text="It is sunny in Paris.", cache_read=950),
    ]
    with FakeModelServer(script) as server:
        # No prefetch here: a recommendation reminder arriving between requests (a race by
        # design: prefetch is fire-and-forget) would add a user message this test does not expect.
        session = Session(
            engine,
            provider=provider_for(kind, server.url),
            settings=make_settings(**{"recommendations.enabled": False}),
        )
        rec = Recorder()
        session.subscribe(rec)
        outcome = await session.send("What's the weather in Paris?")
    assert outcome.text == "It is sunny in Paris." and not outcome.error
    assert rec.of(SearchResultsReady)[0].loaded[0] == "get_forecast"
    started = rec.of(ToolCallStarted)
    assert [(e.tool_name, e.params, e.via) for e in started] == [("get_forecast", {"city": "Paris"}, "ExecuteTool")]
    finished = rec.of(ToolCallFinished)[0]
    assert finished.tool_name == "get_forecast" and "Sunny in Paris" in finished.result.text()
    assert "".join(e.text for e in rec.of(AssistantTextDelta)).endswith("It is sunny in Paris.")
    usage = rec.of(UsageReported)
    assert [u.prefix_hit for u in usage] == [False, True, True]
    assert usage[1].cache_read_tokens == 900 and usage[1].load_tokens > 0
    assert rec.of(TurnFinished)[0].text == "It is sunny in Paris."
    # The tools array and system prompt are identical in all three requests.
    if kind == "anthropic":
        first = server.bodies[0]
        assert [t["name"] for t in first["tools"]] == [
            "Bash",
            "Edit",
            "ExecuteTool",
            "Glob",
            "Grep",
            "Read",
            "TodoWrite",
            "ToolSearch",
            "Write",
        ]
        assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert any("<available-deferred-tools>" in t and "get_forecast" in t for t in user_texts(first))
        for body in server.bodies[1:]:
            assert json.dumps(body["tools"]) == json.dumps(first["tools"])
            assert body["system"] == first["system"]
    else:
        first = server.bodies[0]
        assert first["messages"][0]["role"] == "system"
        assert [m["role"] for m in server.bodies[2]["messages"]][-3:] == ["tool", "assistant", "tool"]
        for body in server.bodies[1:]:
            assert body["tools"] == first["tools"] and body["messages"][0] == first["messages"][0]
