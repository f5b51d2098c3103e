"""Issue 14, "running tools offline must not depend on the recommendation bar": with
recommendations off, the bar stays hidden and Tab never enters it; a search hit in the chat, a tool
in the catalog (Enter; ``d`` its details) and Ctrl+P → Run tool… each open the tool's argument
form, and the tool runs.

One full-app journey (:func:`tui_scenarios.make_app`, one offline session with recommendations
off): each way to a tool is the main screen's and the app's wiring (the prompt's Tab to the chat's
hits, the catalog's Enter to a run by hand, the palette's provider), so none of it moves to a
harness. The catalog panel's own keys: ``test_catalog.py``; the form alone: ``test_offline_run.py``.
"""

from __future__ import annotations

import tui_scenarios as sc
from textual.command import CommandPalette

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.screens.tool_detail import ToolDetailScreen
from toolscout.tui.widgets.chat import SearchHits, ToolCallEntry
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem

#: Wide enough for the catalog panel next to the chat.
SIZE = (140, 44)


def no_bar_app():
    return sc.make_app(settings=sc.make_settings(**{"recommendations.enabled": False}))


async def _until(pilot, msgs: sc.Messages, screen_type: type) -> None:
    """Wait (bounded) for the message after which ``screen_type`` is the active screen."""
    await msgs.wait_for(pilot, lambda _m: isinstance(pilot.app.screen, screen_type), timeout_s=10)


async def test_without_the_bar_search_hits_the_catalog_and_the_palette_each_open_a_tools_form() -> None:
    """One offline app with recommendations off: a search leaves the bar hidden and Tab goes to
    its hits (Enter on the first runs get_forecast for Oslo); F2 → the catalog: ``d`` on post_alert
    shows its details, Enter its form; Ctrl+P → Run tool… lists the tools (a server's description
    literally) and opens get_forecast's form."""
    app = no_bar_app()
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)

        # A search hit in the chat: Tab goes to the hits, not to a bar
        await sc.type_text(pilot, "weather forecast")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert not app.screen.query_one(RecommendationBar).display  # recommendations are off
        assert "1. 0.908 mcp__weather__get_forecast" in sc.screen_text(app)
        await pilot.press("tab")
        await pilot.pause()
        hits = app.screen.query(SearchHits).last()
        assert not isinstance(app.focused, RecommendationItem)
        assert app.focused is hits and hits.highlighted == 0
        assert "Use tool" in sc.screen_text(app).splitlines()[-1]  # the footer says what Enter does
        await pilot.press("down", "up", "enter")  # back to the first hit: get_forecast
        await _until(pilot, msgs, ArgumentFormScreen)
        assert app.screen.tool.name == "mcp__weather__get_forecast"
        await sc.type_text(pilot, "Oslo")
        await pilot.press("ctrl+s")
        await _until(pilot, msgs, PermissionScreen)
        await pilot.press("y")
        await sc.settle(pilot)
        (call,) = app.screen.chat.query(ToolCallEntry)
        assert call.tool_name == "mcp__weather__get_forecast"
        assert "Oslo: sunny" in sc.screen_text(app)

        # A tool in the catalog: d shows its details, Enter opens its form
        await pilot.press("f2")
        await sc.type_text(pilot, "post_alert")
        await sc.settle(pilot)
        await pilot.press("down")  # from the filter into the tree
        await pilot.pause()
        tree = app.screen.query_one("#catalog-tree")
        leaf = next(
            n for g in tree.root.children for n in g.children if getattr(n.data, "name", "").endswith("post_alert")
        )
        tree.move_cursor(leaf)
        tree.focus()
        await pilot.press("d")
        await _until(pilot, msgs, ToolDetailScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("enter")
        await _until(pilot, msgs, ArgumentFormScreen)
        assert app.screen.tool.name == "mcp__weather__post_alert"
        assert "Run mcp__weather__post_alert" in sc.screen_text(app)
        await pilot.press("escape")  # cancel the form: back to the prompt
        await msgs.wait_for(pilot, lambda _m: isinstance(app.focused, PromptInput), timeout_s=10)

        # Ctrl+P → Run tool…
        await pilot.press("ctrl+p")
        await sc.type_text(pilot, "run tool")
        await sc.settle(pilot, servers=False)
        assert "Run tool…" in sc.screen_text(app)
        await pilot.press("enter")
        await msgs.wait_for(
            pilot, lambda _m: isinstance(app.screen, CommandPalette) and "Run which tool?" in sc.screen_text(app)
        )
        await sc.type_text(pilot, "post_alert")  # a server's description is shown literally
        await msgs.wait_for(pilot, lambda _m: "[bold red]Posts[/]" in sc.screen_text(app))
        await pilot.press(*["backspace"] * len("post_alert"))
        await sc.type_text(pilot, "get_forecast")
        await msgs.wait_for(pilot, lambda _m: "mcp__weather__get_forecast" in sc.screen_text(app))
        await pilot.press("enter")
        await _until(pilot, msgs, ArgumentFormScreen)
        assert app.screen.tool.name == "mcp__weather__get_forecast"
