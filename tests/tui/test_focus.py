"""Focus you can see (issue 24 item 5): which widget has the keyboard shows at a glance, and Tab
from the scoring panel goes on to the tools the person can pick, never into the chat (where
typing lands in the prompt and Enter sends it as a message).

Journey (full app, offline): Tab from the scoring panel with nothing to pick rounds the panel;
with recommendations it reaches the bar, whose Enter opens the tool's form, and the text typed
next fills the form (before, it was sent as a chat message); with recommendations off it reaches
the search's hits. The focus styles: every focusable widget of the main screen (each side panel
shown) and of each dialog looks different with the focus than without, through a rule of
``styles/*.tcss``."""

from __future__ import annotations

from typing import Any

import tui_scenarios as sc
from textual.css.match import match
from textual.css.model import CombinatorType, SelectorSet
from textual.css.stylesheet import Stylesheet
from textual.widget import Widget

from toolscout.tui.resources import stylesheet_paths
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.screens.settings import SettingsScreen
from toolscout.tui.screens.tool_detail import ServerDetailScreen, ToolDetailScreen
from toolscout.tui.widgets.chat import SearchHits, UserEntry
from toolscout.tui.widgets.recommendations import RecommendationItem

SIZE = (140, 42)


async def _tab(pilot: Any, times: int = 1) -> None:
    for _ in range(times):
        await pilot.press("tab")
    await sc.settle(pilot, servers=False)


async def test_tab_from_the_scoring_panel_reaches_the_tools_to_pick_never_the_chat() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f3")
        await sc.type_text(pilot, "forecast")
        await _tab(pilot, 3)  # query → table → explanation → (nothing to pick) the query again
        assert app.focused is app.screen.query_one("#scoring-query")

        await pilot.press("escape")
        await sc.ask(pilot, "weather forecast")
        await pilot.press("f3")
        await _tab(pilot, 3)
        item = app.focused
        assert isinstance(item, RecommendationItem), type(item).__name__
        await pilot.press("enter")
        await sc.until_screen(pilot, "ArgumentFormScreen")
        await sc.type_text(pilot, "Paris")
        await sc.settle(pilot, servers=False)
        form = app.screen
        assert form.tool.name == item.hit.name
        assert form._raw(form.fields[0]) == "Paris"  # typed into the form …
        users = [e for e in sc.main_chat(app).query(UserEntry)]
        assert [str(u.render()) for u in users if "Paris" in str(u.render())] == []  # … not sent as a message
        await pilot.press("escape")
        await sc.settle(pilot, servers=False)

        app.controller.apply_setting("recommendations.enabled", False)
        await sc.settle(pilot, servers=False)
        await sc.ask(pilot, "weather forecast")
        await pilot.press("f3")
        await _tab(pilot, 3)
        assert isinstance(app.focused, SearchHits)


def _focus_rules(app: Any) -> list[tuple[str, SelectorSet]]:
    """(css, selector up to its last ``:focus``/``:focus-within`` part) of every rule in
    ``styles/*.tcss`` that styles something by the focus (read with ``app``'s variables)."""
    sheet = Stylesheet(variables=app.get_css_variables())
    sheet.read_all(stylesheet_paths())
    sheet.parse()
    found = []
    for rule in sheet.rules:
        for selector_set in rule.selector_set:
            selectors = selector_set.selectors
            focused = [i for i, s in enumerate(selectors) if s.pseudo_classes & {"focus", "focus-within"}]
            if not focused:
                continue
            end = focused[-1] + 1
            while end < len(selectors) and selectors[end].combinator is CombinatorType.SAME:
                end += 1  # Foo:focus.bar: the compound selector whole
            found.append((selector_set.css, SelectorSet(selectors[:end])))
    return found


def _look(app: Any, widget: Widget) -> tuple[Any, ...]:
    """What the screen shows in ``widget``'s region: text and style of every cell run."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    return tuple(
        tuple((seg.text, str(seg.style)) for seg in strips[y].crop(region.x, region.right))
        for y in range(region.y, region.bottom)
    )


async def _check_screen(pilot: Any, label: str, rules: list[tuple[str, SelectorSet]]) -> list[str]:
    """Problems of the active screen's focusable widgets: none may look the same focused and not,
    and each must be styled by one of ``rules``."""
    app, problems = pilot.app, []
    for widget in [w for w in app.screen.focus_chain if w.region]:
        app.screen.set_focus(None)
        await pilot.pause()
        before = _look(app, widget)
        app.screen.set_focus(widget)
        await pilot.pause()
        name = f"{label}: {type(widget).__name__}#{widget.id}"
        if _look(app, widget) == before:
            problems.append(f"{name} looks the same with the focus")
        if not any(match([selector], widget) for _, selector in rules):
            problems.append(f"{name} has no focus rule in styles/*.tcss")
    return problems


async def test_every_focusable_widget_shows_that_it_has_the_focus() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        rules = _focus_rules(app)
        await sc.ask(pilot, "weather forecast")  # the bar, a search entry with its hits
        problems: list[str] = []
        for key in ("f2", "f3", "f4"):
            await pilot.press(key)
            await sc.settle(pilot, servers=False)
            problems += await _check_screen(pilot, key, rules)
        tools = {t.name.split("__")[-1]: t for t in app.engine.tools()}
        dialogs = [
            ArgumentFormScreen(tools["get_forecast"]),
            ArgumentFormScreen(tools["post_alert"]),
            SettingsScreen(app.settings, app.controller.apply_setting),
            PermissionScreen(tools["get_forecast"].name, {"city": "Paris"}, tools["get_forecast"]),
            ToolDetailScreen(tools["get_forecast"]),
            ServerDetailScreen(app.engine.server_statuses()[0]),
        ]
        for dialog in dialogs:
            app.push_screen(dialog)
            await sc.settle(pilot, servers=False)
            problems += await _check_screen(pilot, type(dialog).__name__, rules)
            app.pop_screen()
            await sc.settle(pilot, servers=False)
        assert problems == []
