"""Issue 14, "running tools offline must not depend on the recommendation bar": with
recommendations off, a search hit in the chat, a tool in the catalog (Enter) and Ctrl+P → Run
tool… each open the tool's argument form, and the tool runs."""

from __future__ import annotations

import tui_scenarios as sc
from textual.command import CommandPalette

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.screens.tool_detail import ToolDetailScreen
from toolscout.tui.widgets.chat import SearchHits, ToolCallEntry
from toolscout.tui.widgets.recommendations import RecommendationBar

SIZE = (120, 36)


def no_bar_app():
    return sc.make_app(settings=sc.make_settings(**{"recommendations.enabled": False}))


async def _until(pilot, msgs: sc.Messages, screen_type: type) -> None:
    await msgs.wait_for(pilot, lambda _m: isinstance(pilot.app.screen, screen_type), timeout_s=10)


async def test_tab_into_the_search_hits_and_enter_runs_the_second_hit() -> None:
    app = no_bar_app()
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "weather forecast")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert not app.screen.query_one(RecommendationBar).display  # recommendations are off
        assert "1. 0.943 mcp__weather__get_forecast" in sc.screen_text(app)
        await pilot.press("tab")
        await pilot.pause()
        hits = app.screen.query(SearchHits).last()
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


async def test_enter_on_a_catalog_tool_opens_its_form_and_d_its_details() -> None:
    app = no_bar_app()
    async with app.run_test(size=(140, 44), message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        await pilot.press("f2")
        await sc.type_text(pilot, "post_alert")
        await sc.settle(pilot)
        await pilot.press("down")  # from the filter into the tree
        await pilot.pause()
        tree = app.screen.query_one("#catalog-tree")
        leaf = next(n for g in tree.root.children for n in g.children if getattr(n.data, "name", "").endswith("post_alert"))
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


async def test_palette_run_tool_lists_tools_and_opens_the_form() -> None:
    app = no_bar_app()
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        await pilot.press("ctrl+p")
        await sc.type_text(pilot, "run tool")
        await sc.settle(pilot, servers=False)
        assert "Run tool…" in sc.screen_text(app)
        await pilot.press("enter")
        await msgs.wait_for(pilot, lambda _m: isinstance(app.screen, CommandPalette)
                            and "Run which tool?" in sc.screen_text(app))
        await sc.type_text(pilot, "post_alert")  # a server's description is shown literally
        await msgs.wait_for(pilot, lambda _m: "[bold red]Posts[/]" in sc.screen_text(app))
        await pilot.press(*["backspace"] * len("post_alert"))
        await sc.type_text(pilot, "get_forecast")
        await msgs.wait_for(pilot, lambda _m: "mcp__weather__get_forecast" in sc.screen_text(app))
        await pilot.press("enter")
        await _until(pilot, msgs, ArgumentFormScreen)
        assert app.screen.tool.name == "mcp__weather__get_forecast"
