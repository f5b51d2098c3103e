"""Issue 21 item 1: a tool sent with its full schema runs when the model calls it directly; the
self-healing gate is only for tools deferred in the request the model answered.

The whole mode × strategy × provider matrix (:mod:`inline_matrix`), in-process: a real Engine
over the ``ledger`` fixture server (stdio), sessions driven by the loopback provider through the
real anthropic/openai SDKs, or by the person (offline). Each cell asserts what the ledger
received and what the provider got back as the ``tool_result``. The ``-p`` subprocess slice is
``test_inline_calls_cli.py``; the app, ``tests/tui/test_inline_calls_app.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_helpers import provider_for

from fixtures.inline_matrix import (
    CELLS,
    NO_SEARCH,
    NOT_LOADED,
    PINNED,
    RECORD,
    cell_id,
    defers,
    expected_calls,
    gated,
    ledger_answer,
    ledger_config,
    script,
    sent_results,
    settings_overrides,
)
from fixtures.providers import FakeModelServer
from fixtures.servers.ledger import calls
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.session.projection import INLINE
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings


def _engine(tmp_path: Path, mode: str, strategy: str, log: Path) -> Engine:
    entry = ledger_config(log)
    config = ServerConfig("ledger", "stdio", command=entry["command"], args=tuple(entry["args"]))
    settings = Settings().with_overrides(settings_overrides(mode, strategy))
    return Engine(
        settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=tmp_path, mcp_servers=[config]
    )


async def _model_scenario(
    engine: Engine, provider: str, scenario: str, mode: str, strategy: str, tag: str
) -> tuple[Session, list[dict[str, Any]]]:
    """Run one scenario's scripted turn; returns the session and the request bodies."""
    with FakeModelServer(script(scenario, mode, strategy, tag)) as server:
        session = Session(engine, provider=provider_for(provider, server.url), persist=False)
        outcome = await session.send(f"scenario {scenario}")
        bodies = server.bodies
    assert outcome.error is None and outcome.text == "done", outcome
    return session, bodies


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
async def test_direct_calls_run_unless_the_request_deferred_the_tool(tmp_path: Path, cell) -> None:
    mode, strategy, provider = cell
    tag = cell_id(cell)
    log = tmp_path / "ledger.jsonl"
    engine = _engine(tmp_path, mode, strategy, log)
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        if provider == "offline":
            await _offline_cell(engine, tag, log)
        else:
            await _model_cell(engine, provider, mode, strategy, tag, log)
    finally:
        await engine.stop()


async def _model_cell(engine: Engine, provider: str, mode: str, strategy: str, tag: str, log: Path) -> None:
    # (a) A direct call of a tool sent with its full schema (alwaysLoad): it runs.
    session, bodies = await _model_scenario(engine, provider, "a", mode, strategy, tag)
    assert (session.projection.strategy == INLINE) is not defers(mode)  # the cell tests what it says
    assert PINNED in session.projection.full_names
    assert calls(log) == expected_calls(tag, "a")
    assert sent_results(bodies[1]) == [ledger_answer("pinned", tag, "a")]

    # (c) A call of ``record`` before any search.
    session, bodies = await _model_scenario(engine, provider, "c", mode, strategy, tag)
    assert calls(log) == expected_calls(tag, "ac")  # exactly once: a gated call was not sent
    results = sent_results(bodies[-1])
    if gated(mode, strategy):  # a stub: the gate gave its definition, the second call ran
        assert len(results) == 2 and NOT_LOADED in results[0] and "Record a line of text" in results[0]
        assert results[1] == ledger_answer("record", tag, "c")
    else:  # inline (tool search off or auto below its threshold), or recorded as ExecuteTool
        assert results == [ledger_answer("record", tag, "c")]
        inline = RECORD in session.projection.full_names
        assert inline is not defers(mode)

    # (b) ToolSearch, then the call.
    session, bodies = await _model_scenario(engine, provider, "b", mode, strategy, tag)
    assert calls(log) == expected_calls(tag, "acb")
    searched, called = sent_results(bodies[-1])
    if defers(mode):
        assert RECORD in searched and "Record a line of text" in searched and NO_SEARCH not in searched
    else:  # not offered: the model is told it has every tool already, not to "call ToolSearch directly"
        assert NO_SEARCH in searched and "directly by name" in searched
    assert called == ledger_answer("record", tag, "b")


async def _offline_cell(engine: Engine, tag: str, log: Path) -> None:
    """Offline the person picks the tool (the recommendation bar, the argument form) and it runs."""

    def offline() -> Session:
        return Session(engine, provider=OfflineProvider(), persist=False)

    def last_result(session: Session) -> str:
        return next(
            b["content"]
            for m in reversed(session.messages)
            if m["role"] == "user"
            for b in m["content"]
            if b.get("type") == "tool_result"
        )

    session = offline()  # (a) the pinned tool, run by hand
    result = await session.run_tool(PINNED, {"text": f"{tag}-a"})
    assert not result.is_error and last_result(session) == ledger_answer("pinned", tag, "a")
    session = offline()  # (c) record, run by hand before any search
    result = await session.run_tool(RECORD, {"text": f"{tag}-c"})
    assert not result.is_error and last_result(session) == ledger_answer("record", tag, "c")
    session = offline()  # (b) the person's message is a search; they run its top hit
    await session.send("record a line of text in the ledger")
    assert session.recommendations[0].name == RECORD
    result = await session.run_tool(RECORD, {"text": f"{tag}-b"})
    assert not result.is_error and last_result(session) == ledger_answer("record", tag, "b")
    assert calls(log) == expected_calls(tag, "acb")
