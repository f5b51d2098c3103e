"""The matrix of issue 21 item 1 on the provider-native path (issue 22): tool search on, either
strategy setting, Anthropic's ``defer_loading`` + ``tool_reference`` and OpenAI's Responses
``tool_search``. A tool sent with its full schema (``pinned``, always loaded) runs on a direct
call; a deferred one called before any search is not sent, comes back loaded by reference, and
runs when called again; after a search it runs. Each loopback API enforces its real rules
(``server.refused`` stays empty) and the ledger fixture server logs what it received."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.inline_matrix import (
    NATIVE_CELLS,
    NATIVE_MODELS,
    PINNED,
    RECORD,
    cell_id,
    expected_calls,
    ledger_config,
    settings_overrides,
)
from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.servers.ledger import calls
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.session.projection import NATIVE
from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
from toolscout.core.session.providers.openai_provider import OpenAIProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))


def _provider(kind: str, url: str):
    if kind == "anthropic":
        return AnthropicProvider("test-key", NATIVE_MODELS[kind], url, max_retries=0, timeout=20)
    return OpenAIProvider("test-key", NATIVE_MODELS[kind], url + "/v1", max_retries=0, timeout=20)


@pytest.mark.parametrize("cell", NATIVE_CELLS, ids=cell_id)
async def test_native_direct_calls_run_unless_the_request_deferred_the_tool(tmp_path: Path, cell) -> None:
    mode, strategy, provider = cell
    tag = cell_id(cell)
    log = tmp_path / "ledger.jsonl"
    entry = ledger_config(log)
    config = ServerConfig("ledger", "stdio", command=entry["command"], args=tuple(entry["args"]))
    settings = Settings().with_overrides(settings_overrides(mode, strategy, native="on"))
    engine = Engine(
        settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=tmp_path, mcp_servers=[config]
    )
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        early = ToolCall(RECORD, {"text": f"{tag}-c"})
        turns = {
            "a": [Reply(tool_calls=[ToolCall(PINNED, {"text": f"{tag}-a"})]), Reply(text="done")],
            "c": [Reply(tool_calls=[early]), Reply(tool_calls=[early]), Reply(text="done")],
            "b": [
                Reply(tool_calls=[ToolCall("ToolSearch", {"query": f"select:{RECORD}"})]),
                Reply(tool_calls=[ToolCall(RECORD, {"text": f"{tag}-b"})]),
                Reply(text="done"),
            ],
        }
        done = ""
        for scenario, script in turns.items():
            with FakeModelServer(script) as server:
                session = Session(engine, provider=_provider(provider, server.url), persist=False)
                outcome = await session.send(f"scenario {scenario}")
                refused = server.refused
            assert outcome.error is None and outcome.text == "done", outcome
            assert refused == []  # every request kept the real API's native rules
            assert session.projection is not None and session.projection.strategy == NATIVE
            assert PINNED in session.projection.full_names and RECORD not in session.projection.full_names
            done += scenario
            assert calls(log) == expected_calls(tag, done)  # the early call was not sent; its retry ran once
    finally:
        await engine.stop()
