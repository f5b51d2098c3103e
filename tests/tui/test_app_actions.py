"""App-level actions: the usage panel reads the session's cache stats (a setting that cannot apply
says so: test_settings_screen.py, over the app's controller).

Harness test: the Token usage panel alone (:func:`tui_harness_panels.usage_app`) over a model
session's two requests, given the app's controller's figures as the main screen gives them.
Journeys (full app, test_tool_search_visible.py): the command palette lists every action (the
offline journey, which then runs one), and the session's usage reaching F4 through the main
screen (the model session's journey)."""

from __future__ import annotations

import tui_scenarios as sc
from tui_harness_panels import usage_app

from toolscout.tui.widgets.usage import UsagePanel


async def test_usage_panel_shows_the_sessions_cache_prefix_hits() -> None:
    """Two requests of a model session (the second's cache prefix is the first's), then the
    controller's figures handed to the panel as the main screen does on ``UsageUpdated``."""
    from toolscout.core.session.session import Session
    from toolscout.tui.controller import SessionController

    settings = sc.make_settings()
    engine = sc.make_engine(settings)
    async with usage_app(size=(120, 36), engine=engine, settings=settings) as pilot:
        app = pilot.app
        session = Session(engine, settings=settings, provider=sc.ScriptedProvider(), persist=False)
        controller = SessionController(app, settings, engine, session, start_engine=False)
        for text in ("hello", "again"):
            await session.send(text)
        app.query_one(UsagePanel).set_cache(controller.cache_stats())
        await sc.settle(pilot)
        screen = sc.screen_text(app)
        assert "cache prefix hits 50% of 2 requests" in screen
        cache = controller.cache_stats()
        assert (cache.cache_read_tokens, cache.prompt_tokens, cache.output_tokens) == (6800, 9200, 24)


async def test_usage_panel_says_when_the_providers_tool_limit_decided() -> None:
    """Issue 21 item 2: the controller's token report carries the session's tool limit (here
    ``provider.maxTools`` = 10 over an OpenAI session), and the panel says the limit decided."""
    from toolscout.core.session.providers.openai_provider import OpenAIProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.controller import SessionController

    settings = sc.make_settings(**{"toolSearch.enabled": "auto", "provider.maxTools": 10})
    engine = sc.make_engine(settings)
    async with usage_app(size=(160, 44), engine=engine, settings=settings) as pilot:
        app = pilot.app
        provider = OpenAIProvider("test-key", "gpt-test", "http://127.0.0.1:9/v1", max_retries=0)
        session = Session(engine, settings=settings, provider=provider, persist=False)
        controller = SessionController(app, settings, engine, session, start_engine=False)
        report = controller.context_report()
        app.query_one(UsagePanel).show_report(report)
        await sc.settle(pilot)
        screen = " ".join(sc.screen_text(app).split())
    assert "tool search auto · deferral on: tool limit" in screen
    count = report.decision.tool_count
    assert count > 10
    assert (
        f"tool limit: the 10 tools provider.maxTools allows in one request; {count} tools inline, more than "
        "fit: the limit decided"
    ) in screen
    assert f"{count} tools > the 10 tools provider.maxTools allows in one request, so tools are deferred" in screen
