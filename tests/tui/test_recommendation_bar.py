"""The recommendation bar: Tab enters it and moves between items, Enter uses a tool, Esc leaves."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.widgets.chat import SearchEntry
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem

SIZE = (120, 36)


async def test_the_bar_shows_after_a_search_tab_walks_it_esc_leaves_and_enter_opens_the_form() -> None:
    """One offline app: the bar is hidden until a search has hits, then shows the top three;
    Tab/Shift+Tab move through it (wrapping), Esc goes back to the prompt, and Enter on an item
    opens that tool's argument form."""
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        bar = app.screen.query_one(RecommendationBar)
        assert not bar.display
        await sc.ask(pilot, "weather forecast")
        assert bar.display
        names = [item.hit.name for item in bar.query(RecommendationItem)]
        assert names[0] == "mcp__weather__get_forecast"
        assert len(names) == 3  # recommendations.max
        assert all(item.hit.score >= 0.15 for item in bar.query(RecommendationItem))

        # Tab moves into and through the bar, Esc leaves
        items = list(app.screen.query(RecommendationItem))
        assert isinstance(app.focused, PromptInput)
        await pilot.press("tab")
        assert app.focused is items[0]
        await pilot.press("tab")
        assert app.focused is items[1]
        await pilot.press("shift+tab")
        assert app.focused is items[0]
        await pilot.press("shift+tab")
        assert app.focused is items[-1]  # wraps
        await pilot.press("escape")
        assert isinstance(app.focused, PromptInput)

        # Enter (offline) opens the argument form for that tool
        await pilot.press("tab", "tab", "shift+tab", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ArgumentFormScreen)
        assert app.screen.tool.name == "mcp__weather__get_forecast"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.focused, PromptInput)


async def test_enter_with_a_model_loads_the_tool_for_the_next_message() -> None:
    from toolscout.tui import messages as m

    provider = sc.ScriptedProvider("Here is the forecast.")
    app = sc.make_app(session="model", provider=provider,
                      settings=sc.make_settings(**{"recommendations.onFirstMessage": True,
                                                   "toolSearch.enabled": "true"}))
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "weather forecast for Paris")
        await pilot.press("enter")
        # Wait for the facts, not for time: the turn ended and the recommendations arrived.
        await msgs.wait_for(pilot, lambda e: isinstance(e, m.TurnEnded))
        await msgs.wait_for(pilot, lambda e: isinstance(e, m.RecommendationsChanged) and bool(e.tools))
        await sc.settle(pilot)
        bar = app.screen.query_one(RecommendationBar)
        assert bar.display, "prefetch recommendations should be shown"
        first = bar.visible_hits[0].name
        mark = len(msgs.seen)
        await pilot.press("tab", "enter")
        ran = await msgs.wait_for(pilot, lambda e: isinstance(e, m.ToolSearchRan), start=mark)
        await sc.settle(pilot)
        assert first in ran.loaded
        assert first in app.session.loaded_tools
        assert any(isinstance(e, SearchEntry) for e in app.screen.chat.children)
        assert isinstance(app.focused, PromptInput)


async def test_turning_recommendations_off_hides_the_bar() -> None:
    app = sc.make_app(settings=sc.make_settings(**{"recommendations.enabled": False}))
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "weather forecast")
        assert not app.screen.query_one(RecommendationBar).display
        await pilot.press("tab")
        assert not isinstance(app.focused, RecommendationItem)
