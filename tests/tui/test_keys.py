"""Keys do what the screen says (issue 14): Esc interrupts first, F2/F3/F4 show their panel,
the chat keeps its end in view after a resize, "Always allow" saves where the dialog says. Real
key presses; assertions on what is on screen or in the focused widget.

Journeys through the whole app (:func:`tui_scenarios.make_app`): the panel keys (F2/F3/F4, F4
from the scoring detail, Ctrl+B), and Esc interrupting a running tool or a model turn while the
recommendation bar has the focus. Harness tests: the catalog's filter → tree
(:func:`tui_harness.catalog_app`), the chat alone through a resize (:func:`tui_harness.widget_app`)
and the permission prompt's "Always allow" (:func:`tui_harness_keys.permission_app`: an offline
session whose asker is the app's permission prompt). Tab without a bar and a turn that clears the
bar are steps of the bar's journey in ``test_recommendation_bar.py``.
"""

from __future__ import annotations

import asyncio
import json

import tui_scenarios as sc
from mcp.server.mcpserver import MCPServer
from textual.widgets import Input, TabbedContent, TabPane
from tui_harness import catalog_app, focus_filter, widget_app
from tui_harness_keys import permission_app, run_tool

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.policy.approvals import Fingerprint
from toolscout.core.settings.layers import SettingsPaths, load_settings
from toolscout.tui import messages as m
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.screens.slash import help_renderable
from toolscout.tui.text import tildify
from toolscout.tui.widgets.catalog import CatalogTree
from toolscout.tui.widgets.chat import ChatView, NoticeEntry, SearchEntry, ToolCallEntry
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem

SIZE = (140, 42)
FORECAST = "mcp__weather__get_forecast"


def _slow_server(started: asyncio.Event) -> ServerConfig:
    """An in-memory server whose one tool runs until it is cancelled."""
    mcp = MCPServer("slow")

    @mcp.tool(description="Run a slow batch job that takes a very long time to finish.")
    async def slow_batch_job(label: str = "nightly") -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    return ServerConfig.memory("slow", mcp)


# -- journeys: the whole app ---------------------------------------------------------------------


async def test_panel_keys_show_their_panel_f4_after_the_scoring_detail_stays_and_ctrl_b_hides_it() -> None:
    """One app: F4 from the scoring detail shows Usage without flipping back to Scoring (four
    times over: a race that lost 'most of the time'), then F3/F4/F2 each show their panel and
    focus it (pressed twice: the one shown stays shown), keys typed right after F3 land in its
    query, and Ctrl+B hides the panel, the prompt taking what is typed next."""
    app = sc.make_app()
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        await sc.settle(pilot)
        tabs = app.screen.query_one(TabbedContent)
        query = app.screen.query_one("#scoring-query", Input)
        for _ in range(4):  # on purpose: one pass showed the race only now and then
            await pilot.press("f3")
            await sc.type_text(pilot, "weather")
            await pilot.press("enter", "down", "enter", "pagedown")
            await pilot.pause()
            assert app.focused.id == "scoring-detail"
            mark = len(msgs.seen)
            await pilot.press("f4")
            await sc.settle(pilot, servers=False)
            assert tabs.active == "tab-usage"
            assert app.focused.id == "usage"
            # The hidden scoring detail never handed focus to a scoring sibling (which switched
            # the tabs back to Scoring, most of the time for good).
            assert not [
                e for e in msgs.seen[mark:] if isinstance(e, TabPane.Focused) and e.tab_pane.id == "tab-scoring"
            ]
            assert app.screen.query_one("#usage").region.width > 0  # on screen, not just active
            assert app.screen.query_one("#scoring-table").region.width == 0
            query.value = ""

        for key, pane, focus_id in (
            ("f3", "tab-scoring", "scoring-query"),
            ("f4", "tab-usage", "usage"),
            ("f2", "tab-catalog", "catalog-filter"),
        ):
            for _ in range(2):  # the one already shown stays shown
                await pilot.press(key)
                await pilot.pause()
                assert app.screen.sidebar_visible, key
                assert tabs.active == pane
                assert app.focused.id == focus_id
        await pilot.press("f3", "w", "x")  # typed at once: lands in the scoring query
        assert query.value == "wx"
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not app.screen.sidebar_visible
        await sc.type_text(pilot, "hi")
        assert app.screen.query_one(PromptInput).value == "hi"


async def test_escape_interrupts_a_running_tool_on_the_first_press_from_the_bar() -> None:
    """Offline: a tool picked from the bar runs, the focus comes back to the bar, and one Esc
    interrupts the call (the chat says so)."""
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
    """A model turn that never ends, the bar focused: one Esc interrupts the turn; the next
    (nothing runs) goes back to the prompt."""
    provider = sc.ScriptedProvider("thinking", hang=True)
    app = sc.make_app(session="model", provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        bar = app.screen.query_one(RecommendationBar)
        await sc.type_text(pilot, "never ends")
        await pilot.press("enter")
        await asyncio.wait_for(provider.started.wait(), 10)
        await pilot.pause()
        bar.show_hits([_rec(app, FORECAST)])  # as a prefetch would
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


# -- harness tests ---------------------------------------------------------------------------------


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


#: The chat's area in the app at each terminal size (the chat column less the status bar, the
#: prompt and the footer; under 110 columns the side panel makes way for the chat).
CHAT_AREA = {(140, 42): (73, 37), (90, 30): (90, 25), (100, 24): (100, 19)}


async def test_a_resize_keeps_the_end_of_the_chat_in_view() -> None:
    """The chat alone, sized as in a 140×42 app, given what three ``/help`` and a ``/search
    weather alert`` add (each sent as the main screen sends a slash command: :meth:`ChatView.stick`
    first), then resized as the app's chat is at 90×30, 140×42 and 100×24: its end (the search,
    with post_alert) stays in view."""
    async with widget_app(lambda engine: ChatView(id="chat"), size=CHAT_AREA[SIZE], servers_first=True) as pilot:
        app = pilot.app
        chat = app.query_one(ChatView)
        for entry in [
            *(NoticeEntry(help_renderable(), title="help") for _ in range(3)),
            SearchEntry(app.engine.search_tools("weather alert")),
        ]:
            chat.stick()
            chat.add(entry)
            await sc.chat_at_end(pilot, chat=chat)
        assert chat.max_scroll_y > 0 and chat.is_vertical_scroll_end
        for size in ((90, 30), (140, 42), (100, 24)):
            await pilot.resize_terminal(*CHAT_AREA[size])
            await sc.settle(pilot, servers=False)
            assert chat.is_vertical_scroll_end, size
            assert "post_alert" in sc.screen_text(app), size  # the last entry is on screen


def _local_settings_engine(tmp_path, text: str | None):
    """The fixture engine with a project-local settings file at ``tmp_path`` (``text``, or none)."""
    local = tmp_path / ".toolscout" / "settings.local.json"
    if text is not None:
        local.parent.mkdir(parents=True)
        local.write_text(text, encoding="utf-8")
    settings = sc.make_settings()
    settings.paths = SettingsPaths(settings.paths.user, None, local, None)
    return sc.make_engine(settings), local


async def test_always_allow_is_saved_to_the_project_local_file_the_dialog_names(tmp_path) -> None:
    """ "Always allow" (``a``) on get_forecast for Paris: the dialog names the project-local file,
    the rule is merged into it, the next call (Oslo) runs without asking, and the next run of
    toolscout reads the rule."""
    engine, local = _local_settings_engine(
        tmp_path, '{"toolSearch": {"maxResults": 7}, "permissions": {"deny": ["Bash"]}}'
    )
    async with permission_app(engine) as pilot:
        app = pilot.app
        await run_tool(pilot, FORECAST, {"city": "Paris"}, answer="a")
        assert app.prompt.saves_to == tildify(str(local))
        assert "don't ask again in this project" in app.shown_prompt and "settings.local.json" in app.shown_prompt
        data = json.loads(local.read_text(encoding="utf-8"))
        # beside the rule, what the tool was approved as (a later change asks again: test_rug_pull_prompt.py)
        approved = {FORECAST: Fingerprint.of(engine.tool(FORECAST)).to_json()}
        assert data == {
            "toolSearch": {"maxResults": 7},
            "permissions": {"deny": ["Bash"], "allow": [FORECAST], "approvedTools": approved},
        }
        result = await run_tool(pilot, FORECAST, {"city": "Oslo"})  # not asked again
        assert app.asked == [FORECAST]
        assert not isinstance(app.screen, PermissionScreen)
        assert "Oslo: sunny" in result.text()
    later = load_settings(SettingsPaths(None, None, local, None), env={})  # the next run reads it
    assert later["permissions.allow"] == [FORECAST]


async def test_a_bad_local_file_is_a_warning_and_the_rule_holds_for_the_session(tmp_path) -> None:
    """ "Always allow" with a project-local file that is not JSON: the file is left as it was, the
    chat warns that the rule could not be saved and holds for this session only, and it does."""
    engine, local = _local_settings_engine(tmp_path, "{not json")
    async with permission_app(engine) as pilot:
        app = pilot.app
        await run_tool(pilot, FORECAST, {"city": "Paris"}, answer="a")
        assert local.read_text(encoding="utf-8") == "{not json"  # never overwritten
        chat = app.query_one(ChatView)
        warnings = [e for e in chat.children if isinstance(e, NoticeEntry) and e.has_class("-warning")]
        shown = " ".join(str(w.render()) for w in warnings)
        assert f"could not save the allow rule {FORECAST}" in shown
        assert "settings.local.json" in shown and "this session only" in shown
        result = await run_tool(pilot, FORECAST, {"city": "Oslo"})
        assert app.asked == [FORECAST]
        assert not isinstance(app.screen, PermissionScreen)
        assert "Oslo: sunny" in result.text()
