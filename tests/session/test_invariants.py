"""Cache and consistency invariants over a scripted 24-turn session while servers come and go.

Checked on the exact bodies the fake Anthropic server received:

* system prompt byte-identical in every request; tools array byte-identical (execute-proxy) or
  append-only (stub: each request's array is a prefix of the next);
* every tool name a request references is defined by its tools array, every tool_use answered;
* earlier messages never rewritten: each request's messages are a prefix of the next request's
  (ignoring the moving ``cache_control`` marker, which is not part of the cached content);
* deferred-tool announcements: one full list, then added/removed deltas matching the changes.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from session_helpers import provider_for, user_texts

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.models import ToolSpec
from toolscout.core.session.projection import check_request
from toolscout.core.session.reminders import rebuild_state
from toolscout.core.session.session import Session


def _server_tools(server: str, n: int, version: int = 1) -> list[ToolSpec]:
    return [
        ToolSpec(
            name=f"{server}_op{i}",
            description=f"Operation {i} of {server} (v{version}).",
            input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
        )
        for i in range(n)
    ]


def _strip(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(messages)
    for m in out:
        for b in m["content"]:
            b.pop("cache_control", None)
    return out


# Catalog changes applied *before* turn i (server connects, disconnects, re-lists tools).
CHANGES: dict[int, tuple[str, str, int]] = {
    2: ("connect", "alpha", 3),
    4: ("connect", "beta", 2),
    7: ("relist", "alpha", 4),  # one tool added
    9: ("disconnect", "beta", 0),
    12: ("connect", "gamma", 2),
    15: ("relist", "alpha", 2),  # two tools removed
    18: ("connect", "beta", 2),  # comes back
    21: ("disconnect", "gamma", 0),
}
TURNS = 24


def _apply(engine: Any, change: tuple[str, str, int]) -> None:
    kind, server, n = change
    if kind == "disconnect":
        delta = engine.catalog.remove_server(server)
    else:
        delta = engine.catalog.set_server_tools(server, _server_tools(server, n))
    engine.apply_delta(delta)


def _turn_script(i: int, strategy: str) -> list[Reply]:
    """What the fake model does in turn i: search, execute, call a core tool, call a stub, or talk."""
    kind = i % 5
    if kind == 0:
        first = Reply(tool_calls=[ToolCall("ToolSearch", {"query": "weather forecast"})])
    elif kind == 1:
        first = Reply(
            tool_calls=[
                ToolCall("ExecuteTool", {"tool_name": "get_forecast", "params": {"city": f"c{i}"}}),
                ToolCall("Glob", {"pattern": "*.txt"}),
            ]
        )
    elif kind == 2:  # a stub called directly (stub) / a deferred name called directly (rewritten)
        first = Reply(tool_calls=[ToolCall("mcp__alpha__alpha_op0", {"x": "1"})])
    elif kind == 3:  # a name the model made up
        first = Reply(tool_calls=[ToolCall("no_such_tool", {})])
    else:
        return [Reply(text=f"Plain answer {i}.", cache_read=500)]
    return [first, Reply(text=f"Done with turn {i}.", cache_read=500)]


@pytest.mark.parametrize("strategy", ["execute-proxy", "stub"])
async def test_invariants_over_24_turns(engine, strategy: str) -> None:
    script: list[Any] = []
    for i in range(TURNS):
        script.extend(_turn_script(i, strategy))
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for("anthropic", server.url), strategy=strategy)
        for i in range(TURNS):
            if i in CHANGES:
                _apply(engine, CHANGES[i])
            outcome = await session.send(f"turn {i}")
            assert not outcome.error, outcome.error
        bodies = server.bodies
    assert len(bodies) >= 40
    first = bodies[0]
    for prev, body in itertools.pairwise(bodies):
        assert body["system"] == first["system"]
        if strategy == "execute-proxy":
            assert json.dumps(body["tools"]) == json.dumps(first["tools"])
        else:
            assert json.dumps(body["tools"][: len(prev["tools"])]) == json.dumps(prev["tools"])
        assert _strip(body["messages"])[: len(prev["messages"])] == _strip(prev["messages"])
    for body in bodies:
        check_request(body["tools"], _strip(body["messages"]))
        assert body["messages"][-1]["role"] == "user"

    # The hash-based hit ratio agrees: every request after the first hits in execute-proxy.
    stats = session.cache_stats()
    if strategy == "execute-proxy":
        assert stats["prefix_hits"] == stats["requests"] - 1
    else:
        assert 0 < stats["prefix_hits"] < stats["requests"] - 1  # appends cost a miss each

    texts = "\n".join(user_texts(bodies[-1]))
    if strategy == "execute-proxy":
        assert texts.count("<available-deferred-tools>") == 1
    else:
        assert "<available-deferred-tools>" not in texts  # the stubs announce themselves
        tool_names = [t["name"] for t in bodies[-1]["tools"]]
        assert "mcp__gamma__gamma_op0" in tool_names  # tombstone of a disconnected server stays
        assert tool_names.index("mcp__gamma__gamma_op0") > tool_names.index("mcp__beta__beta_op0")
    assert "<deferred-tools-added>" in texts and "<deferred-tools-removed>" in texts
    assert "mcp__alpha__alpha_op3" in texts  # added by the re-list in turn 7

    # Announced set rebuilt from history == what is deferred now.
    initial = session.projection.initial_deferred if strategy == "stub" else None
    state = rebuild_state(session.messages, initial)
    now = {t.name for t in session.projection.deferred(engine.catalog)}
    assert set(state.announced) == now

    # Invented names were recorded as ExecuteTool calls, with the real name in the events.
    uses = [b for m in session.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert not [u for u in uses if u["name"] == "no_such_tool"]
    assert any(u["name"] == "ExecuteTool" and u["input"]["tool_name"] == "no_such_tool" for u in uses)
