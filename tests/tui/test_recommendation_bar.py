"""The recommendation bar: Tab enters it and moves between items, Enter uses a tool, Esc leaves;
it shows only this turn's tools, and with no bar Tab never swallows typing.

Both tests are full-app journeys (:func:`tui_scenarios.make_app`): what the bar shows comes from
the session's turns through the main screen, and Tab, Esc and Enter are answered by the main
screen and the app (the prompt's Tab, the screen's one Esc, a picked tool's form or load). Turning
recommendations off is a step of the journey in ``test_run_without_bar.py``; Esc from the bar
while a tool or a turn runs: ``test_keys.py``.
"""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.widgets.chat import SearchEntry
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem

SIZE = (120, 36)
BAR_TITLE = "─ recommended tools"


async def test_the_bar_follows_the_turns_tab_walks_it_esc_leaves_enter_opens_the_form() -> None:
    """One offline app: the bar is hidden until a search has hits, then shows the top three;
    Tab/Shift+Tab move through it (wrapping), Esc goes back to the prompt, and Enter on an item
    opens that tool's argument form. A turn without a match then clears the bar, and once the
    chat is cleared too (``/clear``: no search hits to go to) Tab keeps the cursor in the prompt."""
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
        assert "get_forecast" in sc.screen_text(app).split(BAR_TITLE)[1]  # on screen, in the bar

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

        # A turn without a match clears the bar: only this turn's tools are shown
        await sc.ask(pilot, "zqxj vvkw")  # nothing matches
        assert not bar.display
        assert not list(bar.query(RecommendationItem))
        assert BAR_TITLE not in sc.screen_text(app)

        # No bar and no search hits: Tab keeps the cursor in the prompt, typing is never lost
        await sc.ask(pilot, "/clear")
        assert not bar.display
        await pilot.press("tab")
        await sc.type_text(pilot, "abc")
        assert app.screen.query_one(PromptInput).value == "abc"
        assert isinstance(app.focused, PromptInput)


async def test_enter_with_a_model_loads_the_tool_for_the_next_message() -> None:
    """With a model, Enter on a prefetched recommendation loads the tool (a ToolSearch the chat
    shows) for the next message, and the cursor goes back to the prompt."""
    from toolscout.tui import messages as m

    provider = sc.ScriptedProvider("Here is the forecast.")
    app = sc.make_app(
        session="model",
        provider=provider,
        settings=sc.make_settings(**{"recommendations.onFirstMessage": True, "toolSearch.enabled": "true"}),
    )
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
