"""Provider limits (issue 21 item 2): no request carries more tools than the provider accepts.

OpenAI refuses a ``tools`` array longer than 128 (a 400 ``array_above_max_length``); the loopback
OpenAI API (``tests/fixtures/providers``) refuses it the same way, so a session that sends too
many tools fails here as it would against the real API. Anthropic documents no such cap (its
table value is 10,000), so its sessions run with ``provider.maxTools`` = 120 to meet a limit
with a fixture server of 140 tools (``tests/fixtures/servers/late.py --tools 140``, which logs
every call it receives). Every test asserts what the loopback provider received (the tools
count, the same array on every request) and that a tool beyond the limit still reaches the
fixture server.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from session_helpers import (
    LIMITS,
    Recorder,
    limit_engine,
    logged,
    names_of,
    provider_for,
    run_turn,
    search_then_execute,
    wide_config,
)

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.engine.facade import Engine
from toolscout.core.session.events import ToolSearchSwitched
from toolscout.core.session.reminders import rebuild_state
from toolscout.core.session.session import Session

PROVIDERS = tuple(LIMITS)
STRATEGIES = ("execute-proxy", "stub")
#: Built-ins an inline request carries (every one but ToolSearch and ExecuteTool).
INLINE_BUILTINS = 9
#: ``toolSearch.enabled`` true with execute-proxy carries only the core tools (9), whatever the
#: catalog holds: that combination meets the limit only through always-load tools (below).
MODE_CASES = [
    (mode, strategy)
    for mode in ("auto", "false", "true")
    for strategy in STRATEGIES
    if (mode, strategy) != ("true", "execute-proxy")
]
BEYOND = "mcp__wide__op_0139"


async def until_connected(engine: Engine, name: str, timeout_s: float = 20.0) -> None:
    """Wait (bounded) until server ``name``'s tools are in the catalog."""
    changed = asyncio.Event()
    engine.subscribe(lambda _event: changed.set())
    async with asyncio.timeout(timeout_s):
        while not engine.catalog.server_tools(name):
            changed.clear()
            await changed.wait()


def assert_within_limit(bodies: list[dict[str, Any]], provider: str) -> None:
    counts = [len(b.get("tools") or ()) for b in bodies]
    assert all(n <= LIMITS[provider] for n in counts), counts
    assert all("error" not in b for b in bodies)


@pytest.mark.parametrize(("mode", "strategy"), MODE_CASES)
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_session_never_sends_more_tools_than_the_provider_accepts(tmp_path, provider, mode, strategy) -> None:
    log = tmp_path / "calls.jsonl"
    engine = limit_engine(tmp_path, provider, mode, strategy, wide_config(log))
    session, outcome, bodies = await run_turn(engine, provider, search_then_execute(BEYOND))
    assert outcome.error is None and outcome.text == "done", outcome
    assert len(bodies) == 3
    assert_within_limit(bodies, provider)
    first = names_of(bodies[0])
    assert all(names_of(b) == first for b in bodies)  # one array, byte-stable across the turn
    assert bodies[1]["tools"] == bodies[0]["tools"] == bodies[2]["tools"]
    assert "ToolSearch" in first and "ExecuteTool" in first and BEYOND not in first
    # the tool past the limit was announced, found and run: the fixture server received the call
    assert BEYOND in rebuild_state(session.messages).announced
    assert logged(log) == [{"tool": "op_0139", "arguments": {}}]
    assert "ran op_0139" in json.dumps(bodies[2])
    decision = session.mode_decision
    assert decision is not None and decision.limited and decision.tool_count == INLINE_BUILTINS + 140
    limit = LIMITS[provider]
    who = "openai accepts" if provider == "openai" else "provider.maxTools allows"
    if mode == "auto":
        assert decision.reason.startswith(f"149 tools > the {limit} tools {who} in one request, so tools are deferred")
        if strategy == "execute-proxy":
            assert "mcp__wide__op_0000" not in first
        else:  # a stub, not the full definition
            assert "[deferred]" in json.dumps(bodies[0]["tools"][first.index("mcp__wide__op_0000")])
    if mode == "false":  # off: the first tools stay inline (full schema), the rest are deferred
        assert len(first) == limit and "mcp__wide__op_0000" in first
        schema = bodies[0]["tools"][first.index("mcp__wide__op_0000")]
        assert "input_schema" in schema or "parameters" in schema["function"]
        warning = next(w for w in engine.warnings if w.startswith("provider limit: "))
        assert f"toolSearch.enabled is false, but 149 tools > the {limit} tools {who} in one request" in warning
        assert f"the other {140 - (limit - 11)} are deferred" in warning
    if strategy == "stub" and mode != "false":  # stubs fill the array up to the limit, no further
        assert len(first) == limit


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_direct_call_of_a_tool_without_a_stub_reaches_the_server(tmp_path, provider) -> None:
    """Stub mode past the limit: the model calls the unlisted tool by name, as it does a stub;
    the call is recorded as ExecuteTool (the array's proxy) and runs on the server."""
    log = tmp_path / "calls.jsonl"
    engine = limit_engine(tmp_path, provider, "true", "stub", wide_config(log))
    script = [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": f"select:{BEYOND}"})]),
        Reply(tool_calls=[ToolCall(BEYOND, {})]),
        Reply(text="done"),
    ]
    session, outcome, bodies = await run_turn(engine, provider, script)
    assert outcome.error is None and outcome.text == "done", outcome
    assert_within_limit(bodies, provider)
    assert logged(log) == [{"tool": "op_0139", "arguments": {}}]
    text = json.dumps(bodies[0])
    assert "not in your tool list" in text and "op_0139" in text  # announced, with how to call it
    use = session.messages[3]["content"][0]
    assert use["name"] == "ExecuteTool" and use["input"]["tool_name"] == BEYOND


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_always_load_tools_past_the_limit_are_deferred(tmp_path, provider, strategy) -> None:
    """Tool search on, the 140-tool server always loaded: the array keeps ToolSearch and
    ExecuteTool and as many always-load tools as fit; the rest are reached through them."""
    log = tmp_path / "calls.jsonl"
    engine = limit_engine(tmp_path, provider, "true", strategy, wide_config(log), **{"toolSearch.alwaysLoad": ["wide"]})
    session, outcome, bodies = await run_turn(engine, provider, search_then_execute(BEYOND))
    assert outcome.error is None and outcome.text == "done", outcome
    assert_within_limit(bodies, provider)
    first = names_of(bodies[0])
    assert len(first) == LIMITS[provider] and {"ToolSearch", "ExecuteTool"} <= set(first)
    assert "mcp__wide__op_0000" in first and BEYOND not in first
    assert BEYOND in rebuild_state(session.messages).announced
    assert logged(log) == [{"tool": "op_0139", "arguments": {}}]


LATE_CASES = [
    ("auto", "execute-proxy"),
    ("auto", "stub"),
    ("false", "execute-proxy"),
    ("false", "stub"),
    ("true", "stub"),
]


@pytest.mark.parametrize(("mode", "strategy"), LATE_CASES)
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_late_server_past_the_limit(tmp_path, provider, mode, strategy) -> None:
    """100 tools at the first message (they fit), then a late server of 30: inline sessions
    switch once (announced), stub sessions append stubs up to the limit and no further."""
    gate = tmp_path / "gate"
    log, late_log = tmp_path / "calls.jsonl", tmp_path / "late-calls.jsonl"
    engine = limit_engine(
        tmp_path,
        provider,
        mode,
        strategy,
        wide_config(log, tools=100),
        wide_config(late_log, "late", tools=30, gate=gate),
    )
    await engine.start()
    try:
        await until_connected(engine, "wide")
        script = [
            Reply(text="one"),
            Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": "mcp__late__op_0029", "params": {}})]),
            Reply(text="two"),
            Reply(text="three"),
        ]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for(provider, server.url), persist=False)
            rec = Recorder()
            session.subscribe(rec)
            assert (await session.send("hello")).text == "one"
            gate.touch()
            assert await engine.wait_for_servers(20)
            assert len(engine.catalog.server_tools("late")) == 30
            outcome = await session.send("run the late server's last operation")
            assert (await session.send("thanks")).text == "three"
            bodies = server.bodies
    finally:
        gate.touch()
        await engine.stop()
    assert outcome.error is None and outcome.text == "two", outcome
    assert len(bodies) == 4
    assert_within_limit(bodies, provider)
    assert logged(late_log) == [{"tool": "op_0029", "arguments": {}}]
    first, later = names_of(bodies[0]), names_of(bodies[1])
    assert all(names_of(b) == later for b in bodies[1:])  # stable again after the late server
    switches = rec.of(ToolSearchSwitched)
    if mode == "true":  # stub: the late stubs only append, up to the limit
        assert later[: len(first)] == first and len(later) == LIMITS[provider] and not switches
        assert "mcp__late__op_0029" in rebuild_state(session.messages, session.projection.initial_deferred).announced
    else:  # inline at first (109 tools fit), then switched once, announced
        assert "ToolSearch" not in first and len(first) == INLINE_BUILTINS + 100
        assert len(switches) == 1 and "prompt-cache" in switches[0].notice
        assert "139 tools > the" in switches[0].notice
        assert "mcp__late__op_0029" in rebuild_state(session.messages).announced


async def test_the_loopback_openai_api_refuses_more_than_128_tools() -> None:
    """The fixture behaves like the real API: the SDK sees a 400 with the API's error body."""
    import openai

    tools = [{"type": "function", "function": {"name": f"t{i}", "parameters": {"type": "object"}}} for i in range(129)]
    with FakeModelServer([Reply(text="never")]) as server:
        client = openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0)
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools)
        ok = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools[:128])
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "message": "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an "
        "array with length 129 instead.",
        "type": "invalid_request_error",
        "param": "tools",
        "code": "array_above_max_length",
    }
    assert ok.choices[0].message.content == "never"
