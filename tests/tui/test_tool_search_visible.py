"""Issue 14, "the headline feature is invisible on the default": the welcome text and the usage
panel say in one line why every tool is inline and how to see deferral; ``/toolsearch on`` (and
the palette's "Tool search on") switches it on for this session through the core's settings
entry point, announced once.

Journeys (full app), one per kind of session: a model session (the welcome, F4, a first request
inline and the catalog following the session's own decision, ``/toolsearch on``, a second request
deferred and its cache figures in F4); an offline session (the welcome following the settings
screen, the command palette listing every action and switching tool search on); the offline
session's start-up default."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.app import ToolscoutApp
from toolscout.tui.widgets.catalog import CatalogPanel
from toolscout.tui.widgets.status import StatusBar

SIZE = (140, 44)
WHY = "so every tool is inline · /toolsearch on defers them for this session"


async def decided(pilot, msgs: sc.Messages) -> None:
    """Servers settled and the welcome shows the mode decision (the token report is rate-limited
    while servers connect, so it may land after the servers have)."""
    await sc.settle(pilot)
    welcome = pilot.app.screen.welcome
    await msgs.wait_for(pilot, lambda _m: welcome.decision is not None and not welcome.decision.deciding)


def flat(app, selector: str | None = None) -> str:
    """The screen's text (or the part inside widget ``selector``), borders dropped (the focus
    bar ``▌`` of a focused panel too), one line."""
    lines = sc.screen_text(app).splitlines()
    if selector is not None:
        r = app.screen.query_one(selector).region
        lines = [line[r.x : r.right] for line in lines[r.y : r.bottom]]
    return " ".join(" ".join(line.strip(" │▏▎▊▌") for line in lines).split())


async def test_welcome_and_usage_say_why_nothing_is_deferred_and_toolsearch_on_switches() -> None:
    """Journey, model session with tool search ``auto`` over small catalogs (so every tool is inline)."""
    provider = sc.ScriptedProvider("Hi.")
    app = sc.make_app(session="model", provider=provider, settings=sc.make_settings(**{"toolSearch.enabled": "auto"}))
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await decided(pilot, msgs)
        text = flat(app, "#chat")
        assert "tool search auto: " in text and "< 10% of the 200k window" in text and WHY in text
        await pilot.press("f4")
        await sc.settle(pilot)
        assert WHY in flat(app, "#usage")
        await pilot.press("ctrl+l")
        await sc.type_text(pilot, "hello")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert "ToolSearch" not in [t["name"] for t in provider.requests[0].tools]  # inline first request
        assert app.session.mode_decision is not None and not app.session.mode_decision.defer
        await pilot.press("f2")  # the catalog follows the session's own decision, once it has one
        await sc.settle(pilot)
        assert "NotebookEdit inline" in flat(app, "#catalog") and "NotebookEdit deferred" not in flat(app, "#catalog")
        await pilot.press("ctrl+l")

        await sc.type_text(pilot, "/toolsearch on")
        await pilot.press("enter")
        await sc.settle(pilot)
        text = flat(app, "#chat")
        assert "Tool search switched on: you switched it on" in text and "one prompt-cache miss" in text
        assert app.screen.query_one(StatusBar).mode.startswith("tool search on")
        assert app.screen.query_one(CatalogPanel).defer
        assert "tool search on: deferred tools are found with ToolSearch (this session" in text and WHY not in text
        assert app.settings.sources["toolSearch.enabled"].startswith("this session")  # not saved
        await sc.type_text(pilot, "again")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert len(provider.requests) == 2
        assert "ToolSearch" in [t["name"] for t in provider.requests[-1].tools]
        await pilot.press("f4")  # the session's usage reaches the panel (the switch cost a cache miss)
        await sc.settle(pilot)
        assert "cache prefix hits 0% of 2 requests" in flat(app, "#usage")
        cache = app.controller.cache_stats()
        assert (cache.cache_read_tokens, cache.prompt_tokens, cache.output_tokens) == (6800, 9200, 24)


async def test_offline_welcome_follows_the_settings_and_the_palette_switches_tool_search_on() -> None:
    """Journey, offline session with tool search ``auto`` and recommendations off: the welcome
    follows the recommendation setting changed in F5; the command palette lists every action, and
    its "Tool search on" switches tool search on before any request."""
    settings = sc.make_settings(**{"toolSearch.enabled": "auto", "recommendations.enabled": False})
    app = sc.make_app(settings=settings)
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await decided(pilot, msgs)
        text = flat(app, "#chat")
        assert WHY in text
        assert "Tab into the recommended tools" not in text
        assert "Tab into its hits in the chat" in text and "Run tool…" in text
        await pilot.press("f5")
        await pilot.pause()
        await pilot.press("space")  # the first field: Recommendations on
        await pilot.press("escape")
        await sc.settle(pilot)
        assert "Tab into the recommended tools" in flat(app, "#chat")

        titles = {c.title for c in app.get_system_commands(app.screen)}
        for wanted in (
            "Catalog",
            "Live scoring",
            "Token usage",
            "Toggle side panel",
            "Settings",
            "Help",
            "Context report",
            "Servers",
            "New conversation",
            "Interrupt",
            "Focus prompt",
            "Quit",
            "Tool search on",
        ):
            assert wanted in titles
        bound = {b.action for b in ToolscoutApp.key_bindings()}  # every key binding has a palette entry
        assert {"show_help", "show_panel('catalog')", "open_settings", "toggle_sidebar"} <= bound
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"
        await sc.type_text(pilot, "tool search on")
        await pilot.pause()
        await pilot.press("enter")
        await sc.settle(pilot)
        text = flat(app, "#chat")
        assert "Tool search is on for this session (not saved" in text
        assert app.session.settings["toolSearch.enabled"] == "true" and app.engine.settings.mode == "tst"
        assert "tool search on: deferred tools are found with ToolSearch (this session" in text


async def test_the_offline_session_starts_with_tool_search_on_and_says_why() -> None:
    """``toolscout`` with no model and no tool-search setting: on, and the welcome says it is the
    offline session's default (model sessions keep ``auto``: the tests above)."""
    from toolscout.cli.app_cmd import offline_tool_search
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.core.settings.layers import SettingsPaths, load_settings
    from toolscout.tui.factory import make_app

    paths = SettingsPaths.discover(sc.FIXTURES)
    settings = load_settings(SettingsPaths(paths.user, None, None, None), env={})
    settings = settings.with_overrides({"toolSearch.ranker": "hybrid"})  # nothing sets toolSearch.enabled
    engine = sc.make_engine(settings)
    session = Session(engine, settings=settings, provider=OfflineProvider(), persist=False)
    app = make_app(offline_tool_search(session, settings), engine, session)
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await decided(pilot, msgs)
        assert "tool search on: deferred tools are found with ToolSearch (offline session default)" in flat(
            app, "#chat"
        )
        assert app.screen.query_one(StatusBar).mode.startswith("tool search on")
        assert "deferred" in flat(app, "#catalog") and " inline " not in flat(app, "#catalog")


async def test_a_resumed_offline_session_keeps_the_offline_default() -> None:
    """``toolscout``, one message, quit, ``toolscout --resume``, nothing setting a mode: the resumed
    offline session has tool search on as the new one had (not ``auto``, with every tool inline)."""
    import argparse

    from toolscout.cli.app_cmd import app_session
    from toolscout.core.settings.layers import SettingsPaths, load_settings
    from toolscout.tui.factory import make_app

    paths = SettingsPaths.discover(sc.FIXTURES)
    settings = load_settings(SettingsPaths(paths.user, None, None, None), env={})
    settings = settings.with_overrides({"toolSearch.ranker": "hybrid"})  # nothing sets toolSearch.enabled
    for resume in (None, ""):  # `toolscout`, then `toolscout --resume`
        args = argparse.Namespace(provider=None, resume=resume, strategy=None)
        engine = sc.make_engine(settings)
        app = make_app(settings, engine, new_session=lambda asker, e=engine, a=args: app_session(e, a, asker))
        async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
            await decided(pilot, msgs)
            assert app.screen.query_one(StatusBar).mode.startswith("tool search on"), resume
            assert "(offline session default)" in flat(app, "#chat")
            if resume is None:
                await sc.ask(pilot, "hello")
                assert app.session.store is not None and app.session.store.path.exists()
            else:
                assert "Resumed session" in flat(app, "#chat")
            await pilot.press("f2")
            await sc.settle(pilot)
            assert "deferred" in flat(app, "#catalog") and " inline " not in flat(app, "#catalog")
