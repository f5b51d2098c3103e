"""Keys do what the screen says (issue 14): Esc interrupts first, Tab never swallows typing, the
bar shows only this turn's tools, F2/F3/F4 show their panel, the chat keeps its end in view after
a resize. Real key presses; assertions on what is on screen or in the focused widget."""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from mcp.server.mcpserver import MCPServer
from textual.widgets import Input, TabbedContent, TabPane
from tui_harness import catalog_app, focus_filter

from toolscout.core.mcp.config import ServerConfig
from toolscout.tui import messages as m
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.widgets.catalog import CatalogTree
from toolscout.tui.widgets.chat import NoticeEntry, ToolCallEntry
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem

SIZE = (140, 42)


def _slow_server(started: asyncio.Event) -> ServerConfig:
    """An in-memory server whose one tool runs until it is cancelled."""
    mcp = MCPServer("slow")

    @mcp.tool(description="Run a slow batch job that takes a very long time to finish.")
    async def slow_batch_job(label: str = "nightly") -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    return ServerConfig.memory("slow", mcp)



async def test_escape_interrupts_a_running_tool_on_the_first_press_from_the_bar() -> None:
    started = asyncio.Event()
    app = sc.make_app(servers=(_slow_server(started),))
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "slow batch job")
        await pilot.press("tab", "enter")  # the first recommendation: slow_batch_job
        await msgs.wait_for(pilot, lambda _: isinstance(app.screen, ArgumentFormScreen))
        await pilot.press("ctrl+s")
        await msgs.wait_for(pilot, lambda _: isinstance(app.screen, PermissionScreen))
        await pilot.press("y")
        await asyncio.wait_for(started.wait(), 10)
        await pilot.pause()
        assert app.screen.busy
        assert isinstance(app.focused, RecommendationItem)  # focus came back to the bar
        await pilot.press("escape")  # once
        await msgs.wait_for(pilot, lambda e: isinstance(e, m.ToolCallFinished))
        await sc.settle(pilot)
        assert not app.session.busy
        assert not app.screen.busy
        call = next(e for e in app.screen.chat.children if isinstance(e, ToolCallEntry))
        assert "slow_batch_job" in str(call.title)
        assert "cancel" in sc.screen_text(app).lower() or "interrupt" in sc.screen_text(app).lower()


async def test_escape_interrupts_a_model_turn_while_the_bar_has_focus() -> None:
    provider = sc.ScriptedProvider("thinking", hang=True)
    app = sc.make_app(session="model", provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        bar = app.screen.query_one(RecommendationBar)
        await sc.type_text(pilot, "never ends")
        await pilot.press("enter")
        await asyncio.wait_for(provider.started.wait(), 10)
        await pilot.pause()
        bar.show_hits([_rec(app, "mcp__weather__get_forecast")])  # as a prefetch would
        await pilot.pause()
        await pilot.press("tab")
        assert isinstance(app.focused, RecommendationItem)
        await pilot.press("escape")  # once
        await sc.settle(pilot)
        assert not app.session.busy
        notices = [e for e in app.screen.chat.children if isinstance(e, NoticeEntry)]
        assert any("interrupted" in str(n.render()) for n in notices)
        await pilot.press("escape")  # nothing runs: back to the prompt
        assert isinstance(app.focused, PromptInput)


def _rec(app, name: str):
    from toolscout.core.session.events import Recommendation

    tool = app.engine.tool(name)
    return Recommendation(tool.name, tool.server, 0.9, tool.description, tool.input_schema)


async def test_tab_without_a_bar_keeps_the_cursor_in_the_prompt() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "/clear")
        assert not app.screen.query_one(RecommendationBar).display
        await pilot.press("tab")
        await sc.type_text(pilot, "abc")
        assert app.screen.query_one(PromptInput).value == "abc"
        assert isinstance(app.focused, PromptInput)


async def test_a_turn_without_a_match_clears_the_bar() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "weather forecast")
        bar = app.screen.query_one(RecommendationBar)
        assert bar.display and "get_forecast" in sc.screen_text(app).split("─ recommended tools")[1]
        await sc.ask(pilot, "zqxj vvkw")  # nothing matches
        assert not bar.display
        assert not list(bar.query(RecommendationItem))
        assert "─ recommended tools" not in sc.screen_text(app)


async def test_panel_keys_show_their_panel_and_ctrl_b_hides_it() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        tabs = app.screen.query_one(TabbedContent)
        for key, pane, focus_id in (("f3", "tab-scoring", "scoring-query"), ("f4", "tab-usage", "usage"),
                                    ("f2", "tab-catalog", "catalog-filter")):
            for _ in range(2):  # the one already shown stays shown
                await pilot.press(key)
                await pilot.pause()
                assert app.screen.sidebar_visible, key
                assert tabs.active == pane
                assert app.focused.id == focus_id
        await pilot.press("f3", "w", "x")  # typed at once: lands in the scoring query
        assert app.screen.query_one("#scoring-query", Input).value == "wx"
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not app.screen.sidebar_visible
        await sc.type_text(pilot, "hi")
        assert app.screen.query_one(PromptInput).value == "hi"


async def test_down_in_the_catalog_filter_moves_into_the_tree() -> None:
    """The catalog panel alone (:func:`tui_harness.catalog_app`; F2 itself: the panel-keys
    journey above)."""
    async with catalog_app() as pilot:
        app = pilot.app
        await focus_filter(pilot)
        await sc.type_text(pilot, "forecast")
        await pilot.press("down")
        assert isinstance(app.focused, CatalogTree)
        await pilot.press("down", "enter")  # the tree's own keys work from there
        await pilot.pause()
        assert "get_forecast" in sc.screen_text(app)


async def test_f4_after_the_scoring_detail_shows_usage_without_flipping_back() -> None:
    app = sc.make_app()
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        await sc.settle(pilot)
        for _ in range(4):
            await pilot.press("f3")
            await sc.type_text(pilot, "weather")
            await pilot.press("enter", "down", "enter", "pagedown")
            await pilot.pause()
            assert app.focused.id == "scoring-detail"
            mark = len(msgs.seen)
            await pilot.press("f4")
            await sc.settle(pilot, servers=False)
            assert app.screen.query_one(TabbedContent).active == "tab-usage"
            assert app.focused.id == "usage"
            # The hidden scoring detail never handed focus to a scoring sibling (which switched
            # the tabs back to Scoring, most of the time for good).
            assert not [e for e in msgs.seen[mark:] if isinstance(e, TabPane.Focused) and e.tab_pane.id == "tab-scoring"]
            assert app.screen.query_one("#usage").region.width > 0  # on screen, not just active
            assert app.screen.query_one("#scoring-table").region.width == 0
            app.screen.query_one("#scoring-query", Input).value = ""


async def test_a_resize_keeps_the_end_of_the_chat_in_view() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        for _ in range(3):
            await sc.ask(pilot, "/help")
        await sc.ask(pilot, "/search weather alert")
        chat = app.screen.chat
        assert chat.max_scroll_y > 0 and chat.is_vertical_scroll_end
        for size in ((90, 30), (140, 42), (100, 24)):
            await pilot.resize_terminal(*size)
            await sc.settle(pilot, servers=False)
            assert chat.is_vertical_scroll_end, size
            assert "post_alert" in sc.screen_text(app), size  # the last entry is on screen


def _local_settings_app(tmp_path, text: str | None):
    """The default app with a project-local settings file at ``tmp_path`` (``text``, or none)."""
    from toolscout.core.settings import SettingsPaths

    local = tmp_path / ".toolscout" / "settings.local.json"
    if text is not None:
        local.parent.mkdir(parents=True)
        local.write_text(text, encoding="utf-8")
    settings = sc.make_settings()
    settings.paths = SettingsPaths(settings.paths.user, None, local, None)
    return sc.make_app(settings=settings), local


async def _run_forecast(pilot, msgs: sc.Messages, city: str) -> None:
    await sc.open_first_recommendation(pilot, msgs, "weather forecast")
    await sc.type_text(pilot, city)
    mark = len(msgs.seen)
    await pilot.press("ctrl+s")
    await msgs.wait_for(pilot, lambda e: isinstance(pilot.app.screen, PermissionScreen)
                        or isinstance(e, m.ToolCallFinished), start=mark)


async def _answer_always(pilot, msgs: sc.Messages) -> PermissionScreen:
    """Run get_forecast for Paris and answer "Always allow" (``a``); the dialog, with the text
    that was on screen as ``shown``."""
    await sc.settle(pilot)
    await _run_forecast(pilot, msgs, "Paris")
    dialog = pilot.app.screen
    assert isinstance(dialog, PermissionScreen)
    dialog.shown = sc.screen_text(pilot.app)
    await pilot.press("a")
    await sc.settle(pilot)
    return dialog


async def test_always_allow_is_saved_to_the_project_local_file_the_dialog_names(tmp_path) -> None:
    import json

    from toolscout.core.settings import SettingsPaths, load_settings
    from toolscout.tui.text import tildify

    app, local = _local_settings_app(tmp_path, '{"toolSearch": {"maxResults": 7}, "permissions": {"deny": ["Bash"]}}')
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        dialog = await _answer_always(pilot, msgs)
        assert dialog.saves_to == tildify(str(local))
        assert "don't ask again in this project" in dialog.shown and "settings.local.json" in dialog.shown
        data = json.loads(local.read_text(encoding="utf-8"))
        assert data == {"toolSearch": {"maxResults": 7},
                        "permissions": {"deny": ["Bash"], "allow": ["mcp__weather__get_forecast"]}}
        await _run_forecast(pilot, msgs, "Oslo")  # not asked again
        assert not isinstance(app.screen, PermissionScreen)
        await sc.settle(pilot)
        assert "Oslo: sunny" in sc.screen_text(app)
    later = load_settings(SettingsPaths(None, None, local, None), env={})  # the next run reads it
    assert later["permissions.allow"] == ["mcp__weather__get_forecast"]


async def test_a_bad_local_file_is_a_warning_and_the_rule_holds_for_the_session(tmp_path) -> None:
    app, local = _local_settings_app(tmp_path, "{not json")
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        await _answer_always(pilot, msgs)
        assert local.read_text(encoding="utf-8") == "{not json"  # never overwritten
        warnings = [e for e in app.screen.chat.children if isinstance(e, NoticeEntry) and e.has_class("-warning")]
        shown = " ".join(str(w.render()) for w in warnings)
        assert "could not save the allow rule mcp__weather__get_forecast" in shown
        assert "settings.local.json" in shown and "this session only" in shown
        await _run_forecast(pilot, msgs, "Oslo")
        assert not isinstance(app.screen, PermissionScreen)
