"""Searching for a tool the session already has (issue 24): core built-ins are found, and what
the model reads says "call it directly" rather than sending the definition again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from session_helpers import Recorder, make_engine, provider_for

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.search.dense import dense_available
from toolscout.core.session.events import RecommendationsReady, SearchResultsReady
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session

RANKERS = [pytest.param("default", marks=pytest.mark.skipif(not dense_available(), reason="no dense extra")),
           "bm25f"]


def tool_result_texts(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in a request body (Anthropic ``tool_result`` blocks or
    OpenAI ``tool`` messages)."""
    out = []
    for m in body["messages"]:
        if m["role"] == "tool":
            out.append(m["content"] if isinstance(m["content"], str) else str(m["content"]))
        elif isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    c = b["content"]
                    out.append(c if isinstance(c, str) else "".join(x.get("text", "") for x in c))
    return out


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("strategy", ["execute-proxy", "stub"])
async def test_model_searching_for_the_shell_is_told_to_call_bash(tmp_path, provider, strategy) -> None:
    engine = make_engine(tmp_path, **{"toolSearch.ranker": "bm25f"})
    script = [Reply(tool_calls=[ToolCall("ToolSearch", {"query": "run a shell command"})]), Reply(text="ok")]
    with FakeModelServer(script) as server:
        session = Session(engine, provider=provider_for(provider, server.url), strategy=strategy)
        rec = Recorder()
        session.subscribe(rec)
        assert (await session.send("list the files here")).text == "ok"
        first, second = server.bodies
    (answer,) = tool_result_texts(second)
    lines = answer.splitlines()
    assert "Already loaded, call directly (no search needed): Bash" in lines, answer
    assert not any(line.startswith('{"name":"Bash"') for line in lines)  # no second copy of its definition
    trailer = answer[answer.index("<loaded-tools>"):] if "<loaded-tools>" in answer else ""
    assert "Bash" not in trailer  # not reported as newly loaded
    assert second["tools"] == first["tools"]  # the tools array is unchanged
    assert "Bash" not in rec.of(SearchResultsReady)[0].loaded and "Bash" not in session.loaded_tools


@pytest.mark.parametrize("ranker", RANKERS)
async def test_offline_person_asking_finds_the_core_tools(tmp_path, ranker) -> None:
    """Offline, "run a shell command" found nothing and "read a file" ranked WebFetch first."""
    engine = make_engine(tmp_path, **{"toolSearch.ranker": ranker})
    assert await asyncio.to_thread(engine.wait_ranker_ready, 300) or ranker != "default"
    session = Session(engine, provider=OfflineProvider())
    rec = Recorder()
    session.subscribe(rec)
    firsts = {}
    for text in ("run a shell command", "read a file", "find files by name", "search file contents for a regex"):
        assert not (await session.send(text)).error
        firsts[text] = session.recommendations[0].name
    assert firsts == {"run a shell command": "Bash", "read a file": "Read", "find files by name": "Glob",
                      "search file contents for a regex": "Grep"}
    bash = rec.of(RecommendationsReady)[0].tools[0]
    assert bash.name == "Bash" and "command" in bash.input_schema["properties"]  # the form can fill it in
