"""App-level actions: the command palette lists them, the usage panel reads the session's cache
stats (a setting that cannot apply says so: test_settings_screen.py, over the app's controller)."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.app import ToolscoutApp

SIZE = (120, 36)


async def test_command_palette_lists_every_action() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for wanted in ("Catalog", "Live scoring", "Token usage", "Toggle side panel", "Settings", "Help",
                       "Context report", "Servers", "New conversation", "Interrupt", "Focus prompt", "Quit"):
            assert wanted in titles
        bound = {b.action for b in ToolscoutApp.BINDINGS}  # every key binding has a palette entry
        assert {"show_help", "show_panel('catalog')", "open_settings", "toggle_sidebar"} <= bound
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"


async def test_usage_panel_shows_the_sessions_cache_prefix_hits() -> None:
    app = sc.make_app(session="model")
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        for text in ("hello", "again"):
            await sc.type_text(pilot, text)
            await pilot.press("enter")
            await sc.settle(pilot)
        await pilot.press("f4")
        await sc.settle(pilot)
        screen = sc.screen_text(app)
        assert "cache prefix hits 50% of 2 requests" in screen
        cache = app.controller.cache_stats()
        assert (cache.cache_read_tokens, cache.prompt_tokens, cache.output_tokens) == (6800, 9200, 24)
