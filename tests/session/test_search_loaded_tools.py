"""Searching for a tool the session already has (issue 24): core built-ins are found, and what
the model reads says "call it directly" rather than sending the definition again."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from session_helpers import Recorder, make_engine, provider_for

from fixtures.inline_matrix import NATIVE_MODELS
from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.search.dense import dense_available
from toolscout.core.session.events import RecommendationsReady, SearchResultsReady
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
from toolscout.core.session.providers.openai_provider import OpenAIProvider
from toolscout.core.session.session import Session

RANKERS = [pytest.param("default", marks=pytest.mark.skipif(not dense_available(), reason="no dense extra")), "bm25f"]


#: (provider, strategy, toolSearch.native): the portable path with either strategy, and the
#: provider-native one (Anthropic's tool_reference, OpenAI's Responses tool_search)
CELLS = [
    *((p, s, "off") for p in ("anthropic", "openai") for s in ("execute-proxy", "stub")),
    *((p, "execute-proxy", "on") for p in NATIVE_MODELS),
]


@pytest.mark.parametrize(("provider", "strategy", "native"), CELLS, ids="-".join)
async def test_model_searching_for_the_shell_is_told_to_call_bash(
    tmp_path, monkeypatch, provider, strategy, native
) -> None:
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))  # no remembered native refusals
    engine = make_engine(tmp_path, **{"toolSearch.ranker": "bm25f", "toolSearch.native": native})
    script = [Reply(tool_calls=[ToolCall("ToolSearch", {"query": "run a shell command"})]), Reply(text="ok")]
    with FakeModelServer(script) as server:
        if native == "on":
            url = server.url if provider == "anthropic" else server.url + "/v1"
            cls = AnthropicProvider if provider == "anthropic" else OpenAIProvider
            chosen = cls("test-key", NATIVE_MODELS[provider], url, max_retries=0, timeout=20)
        else:
            chosen = provider_for(provider, server.url)
        session = Session(engine, provider=chosen, strategy=strategy, persist=False)
        rec = Recorder()
        session.subscribe(rec)
        assert (await session.send("list the files here")).text == "ok"
        first, second = server.bodies
        assert server.refused == []  # the API's own rules held (native: no reference to a loaded tool)
    said = json.dumps({k: v for k, v in second.items() if k != "tools"}, separators=(",", ":"))
    assert "Already loaded, call directly (no search needed): Bash" in said
    assert '"name":"Bash","description"' not in said  # no second copy of its definition
    assert not re.search(r'"tool_name":"Bash"|<loaded-tools>[^<]*\bBash\b', said)  # not loaded again
    tools = "tools" if "tools" in first else None
    assert tools is None or second[tools] == first[tools]  # the tools array is unchanged
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
    assert firsts == {
        "run a shell command": "Bash",
        "read a file": "Read",
        "find files by name": "Glob",
        "search file contents for a regex": "Grep",
    }
    bash = rec.of(RecommendationsReady)[0].tools[0]
    assert bash.name == "Bash" and "command" in bash.input_schema["properties"]  # the form can fill it in
