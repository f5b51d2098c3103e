"""Issue 21 item 1 in the app: the mode × strategy × provider matrix (:mod:`fixtures.inline_matrix`,
a slice: :data:`APP_CELLS`) through the real app, booted over the ``ledger`` fixture server (stdio) with the provider the
settings and environment name: the loopback provider's Anthropic or OpenAI API, or offline.

With a model, one message runs every scenario in one turn (a direct call of the alwaysLoad
tool, a call of ``record`` before any search and the gate's retry, ToolSearch, the call after
it): the ledger's log says what reached it, the provider's last request what the model got back,
and the chat what the person sees. Offline the person runs the tools: by hand before any search,
then the top recommendation of their message; each runs.
"""

from __future__ import annotations

import pytest
import tui_scenarios as sc

from fixtures.inline_matrix import (
    MODES,
    NOT_LOADED,
    PINNED,
    PROVIDERS,
    RECORD,
    STRATEGIES,
    cell_id,
    expected_calls,
    gated,
    ledger_answer,
    ledger_config,
    one_turn_script,
    sent_results,
    settings_overrides,
)
from fixtures.providers import FakeModelServer
from fixtures.servers.ledger import calls
from toolscout.core.mcp.config import ServerConfig
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.widgets.chat import ToolCallEntry

SIZE = (120, 36)
#: A slice of the matrix (the session behind the app is the same one ``tests/session`` runs over
#: all 18 cells, and the ``-p`` subprocess tests too): every mode with every provider, the
#: strategies alternating so that each mode and each provider meets both (the gate: on-stub-openai).
APP_CELLS = [
    (mode, STRATEGIES[(i + j) % 2], provider) for i, mode in enumerate(MODES) for j, provider in enumerate(PROVIDERS)
]


def _app(tmp_path, mode: str, strategy: str, provider: str, monkeypatch, url: str = ""):
    """The app as the CLI builds it: settings, the engine with the ledger, the provider that
    the settings and the environment (key, base URL) name."""
    from toolscout.core.session.providers import create_provider
    from toolscout.tui.factory import make_app

    log = tmp_path / "ledger.jsonl"
    entry = ledger_config(log)
    ledger = ServerConfig("ledger", "stdio", command=entry["command"], args=tuple(entry["args"]))
    overrides = settings_overrides(mode, strategy)
    if provider != "offline":
        overrides["provider.name"] = provider
        monkeypatch.setenv(f"{provider.upper()}_API_KEY", "test-key")
        monkeypatch.setenv(f"{provider.upper()}_BASE_URL", url if provider == "anthropic" else url + "/v1")
    settings = sc.make_settings(**overrides)
    engine = sc.make_engine(settings, catalogs=False, weather=False, project_dir=tmp_path, servers=(ledger,))
    session = "offline" if provider == "offline" else "model"
    chosen = create_provider(settings, max_retries=0) if provider != "offline" else None
    return make_app(settings, engine, new_session=sc.session_factory(engine, settings, session, chosen)), log


def _shown_results(app) -> list[str]:
    """The result text of every tool call in the chat, as the person reads it."""
    from textual.widgets import Static

    out = []
    for entry in app.screen.chat.children:
        if isinstance(entry, ToolCallEntry):
            out.extend(str(s.render()) for s in entry.query(".tool-result").results(Static))
    return out


async def _run_by_hand(pilot, msgs: sc.Messages, tool: str, text: str) -> None:
    """What picking ``tool`` in the palette does: its form; the text typed; Ctrl+S runs it."""
    mark = len(msgs.seen)
    pilot.app.run_by_hand(pilot.app.engine.tool(tool))
    await msgs.wait_for(pilot, lambda _: isinstance(pilot.app.screen, ArgumentFormScreen), start=mark)
    await _fill_and_run(pilot, text)


async def _fill_and_run(pilot, text: str) -> None:
    await sc.type_text(pilot, text)
    await pilot.press("ctrl+s")  # the ledger is allowed: no permission prompt
    await sc.settle(pilot)


@pytest.mark.parametrize("cell", APP_CELLS, ids=cell_id)
async def test_the_app_runs_direct_calls_of_tools_it_sent_with_their_schema(tmp_path, monkeypatch, cell) -> None:
    mode, strategy, provider = cell
    tag = cell_id(cell)
    if provider == "offline":
        app, log = _app(tmp_path, mode, strategy, provider, monkeypatch)
        async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
            await sc.settle(pilot)
            await _run_by_hand(pilot, msgs, PINNED, f"{tag}-a")  # (a)
            await _run_by_hand(pilot, msgs, RECORD, f"{tag}-c")  # (c) before any search
            form = await sc.open_first_recommendation(pilot, msgs, "record a line of text in the ledger")
            assert form.tool.name == RECORD  # (b) the search's top hit
            await _fill_and_run(pilot, f"{tag}-b")
            shown = _shown_results(app)
        assert calls(log) == expected_calls(tag, "acb")
        assert [ledger_answer(t, tag, s) for t, s in (("pinned", "a"), ("record", "c"), ("record", "b"))] == shown
        return
    with FakeModelServer(one_turn_script(mode, strategy, tag)) as model:
        app, log = _app(tmp_path, mode, strategy, provider, monkeypatch, model.url)
        async with app.run_test(size=SIZE) as pilot:
            await sc.settle(pilot)
            await sc.ask(pilot, "record lines in the ledger")
            shown = _shown_results(app)
            assert "done" in sc.screen_text(app)
        bodies = model.bodies
    received = sorted(calls(log), key=lambda c: c["arguments"]["text"])
    assert received == sorted(expected_calls(tag), key=lambda c: c["arguments"]["text"])  # each once
    results = sent_results(bodies[-1])
    answers = [ledger_answer("pinned", tag, "a"), ledger_answer("record", tag, "c"), ledger_answer("record", tag, "b")]
    assert all(a in results for a in answers)  # what the model got back
    assert all(a in shown for a in answers)  # what the person sees
    assert any(NOT_LOADED in r for r in results) is gated(mode, strategy)
