"""Keys typed ahead land where the person meant them: after Enter in a form field, in the next
field (a terminal delivers a fast typist's keys in one burst, before the focus moved); typed on a
read-only panel, in the prompt, while the panels keep their own keys; the scoring table shows the
ranker's columns before the first query; a postponed usage redraw is not lost. The form and the
usage panel alone run in harness apps (:mod:`tui_harness`); keys between the app's panels (the
main screen's key routing) are one full-app journey, and keys typed while the app starts another."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import tui_scenarios as sc
from textual import events
from textual.widgets import Input
from tui_harness import Harness, screen_app, widget_app
from tui_harness_panels import recommended

from toolscout.core.models import ToolSpec
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.tool_detail import ToolDetailScreen
from toolscout.tui.widgets.catalog import CatalogTree
from toolscout.tui.widgets.chat import SearchEntry, UserEntry
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem
from toolscout.tui.widgets.usage import UsagePanel

#: Like the time server's convert_time: a multi-line string, a one-line string, a multi-line one.
CONVERT = ToolSpec(
    "convert_time",
    "Convert time between timezones",
    {
        "type": "object",
        "properties": {
            "source_timezone": {"type": "string"},
            "time": {"type": "string", "maxLength": 5},
            "target_timezone": {"type": "string"},
        },
        "required": ["source_timezone", "time", "target_timezone"],
    },
)


def _burst(app: Any, keys: list[str]) -> None:
    """Deliver ``keys`` as a terminal does a fast burst: all queued before any is handled."""
    for key in keys:
        char = " " if key == "space" else (key if len(key) == 1 else None)
        event = events.Key(key, char)
        event.set_sender(app)
        app.post_message(event)


def _typed(text: str) -> list[str]:
    return ["space" if ch == " " else ch for ch in text]


class _BarHarness(Harness):
    """The recommendation bar alone over three recommended tools; what it posts as picked is
    appended to ``picked`` (the main screen opens that tool's form)."""

    def __init__(self, build: Any, engine: Any) -> None:
        super().__init__(build, engine)
        self.picked: list[str] = []
        self.left = 0  # RecommendationBar.Left received (the main screen then focuses the prompt)

    def on_recommendation_bar_picked(self, message: RecommendationBar.Picked) -> None:
        self.picked.append(message.hit.name)

    def on_recommendation_bar_left(self, message: RecommendationBar.Left) -> None:
        self.left += 1


@asynccontextmanager
async def _weather_bar() -> AsyncIterator[Any]:
    """A :class:`_BarHarness` pilot whose bar shows the tools recommended for "weather forecast"."""

    def build(engine: Any) -> RecommendationBar:
        return RecommendationBar(id="recommendations")

    async with widget_app(build, size=(80, 8), harness=_BarHarness, servers_first=True) as pilot:
        pilot.app.query_one(RecommendationBar).show_hits(recommended(pilot.app.engine, "weather forecast"))
        await pilot.pause()
        yield pilot


async def test_keys_typed_together_in_the_bar_pick_the_tool_they_reached() -> None:
    """Tab (the bar's first item), Down and Enter typed in one burst pick the item Down reached,
    and Enter right after the bar takes the focus picks its first item: the focus moves when
    the key is handled, not after the next refresh (before, Enter picked the item the focus was
    leaving, or reached the prompt)."""
    async with _weather_bar() as pilot:
        app = pilot.app
        bar = app.query_one(RecommendationBar)
        names = [h.name for h in bar.visible_hits]
        assert len(names) == 3
        assert bar.focus_first()
        _burst(app, ["enter"])
        await sc.settle(pilot, servers=False)
        _burst(app, ["down", "enter", "down", "down", "enter"])
        await sc.settle(pilot, servers=False)
        assert app.picked == [names[0], names[1], names[0]]  # Down wraps from the last to the first


async def test_the_bar_rebuilt_while_an_item_has_the_focus_focuses_its_first_new_item() -> None:
    """A new turn's tools replace the bar's while one of its old items has the focus (Enter then
    Tab in one burst: Tab reached the old bar before the turn's tools came): the focus moves to
    the first new item at once, so Enter right after picks it (before, the old item was removed
    and the focus left the bar: here, to nothing); a bar emptied while focused asks its screen to
    take the focus back (``Left``: the main screen puts it in the prompt)."""
    async with _weather_bar() as pilot:
        app = pilot.app
        bar = app.query_one(RecommendationBar)
        assert bar.focus_first()
        _burst(app, ["down"])
        await sc.settle(pilot, servers=False)
        old = app.focused
        assert isinstance(old, RecommendationItem) and old.index == 1
        new = recommended(app.engine, "git history")
        assert new and new[0].name not in {h.name for h in bar.hits}
        bar.show_hits(new)
        first = app.focused  # at once, not after a refresh
        assert isinstance(first, RecommendationItem) and first is not old and first.hit.name == new[0].name
        _burst(app, ["enter"])
        await sc.settle(pilot, servers=False)
        items = list(bar.query(RecommendationItem))  # the old ones are gone
        assert [i.hit for i in items] == bar.visible_hits and app.focused is first is items[0]
        assert app.picked == [new[0].name]
        assert app.left == 0

        bar.show_hits([])
        await sc.settle(pilot, servers=False)
        assert app.left == 1 and not bar.display


async def test_keys_after_enter_in_a_form_land_in_the_next_field() -> None:
    async with screen_app(lambda _engine: ArgumentFormScreen(CONVERT), size=(120, 36)) as pilot:
        app = pilot.app
        form = app.screen
        fields = list(form.query(".field"))
        assert [type(f).__name__ for f in fields] == ["MultiLineInput", "FieldInput", "MultiLineInput"]
        _burst(app, [*_typed("Europe/London"), "enter", *_typed("10:30"), "enter", *_typed("Asia/Tokyo")])
        await sc.settle(pilot, servers=False)
        assert [form._raw(spec) for spec in form.fields] == ["Europe/London", "10:30", "Asia/Tokyo"]
        assert app.focused is fields[2]
        assert "Europe/London" in sc.screen_text(app) and "Asia/Tokyo" in sc.screen_text(app)


async def test_typing_on_the_usage_panel_goes_to_the_prompt_and_panels_keep_their_own_keys() -> None:
    """Journey (full app): the main screen routes keys typed on a read-only panel (usage) to the
    prompt, one at a time or in one burst, and the sent text is shown; the catalog's filter, its
    tree's navigation and its ``d`` binding keep their keys (none reach the prompt)."""
    app = sc.make_app()
    async with app.run_test(size=(140, 42)) as pilot:
        await sc.settle(pilot)
        await pilot.press("f4")
        assert app.focused is app.screen.query_one("#usage")
        prompt = app.screen.query_one(PromptInput)
        await sc.type_text(pilot, "show me")  # one key at a time
        assert app.focused is prompt and prompt.text == "show me"
        await pilot.press("f4")
        _burst(app, _typed(" the git history"))  # and in one burst, none lost or reordered
        await sc.settle(pilot, servers=False)
        assert prompt.text == "show me the git history"
        await pilot.press("enter")
        await sc.settle(pilot, servers=False)
        assert prompt.text == "" and "show me the git history" in sc.screen_text(app)

        await pilot.press("f2")
        await sc.type_text(pilot, "forecast")  # the filter takes text
        assert app.screen.query_one("#catalog-filter", Input).value == "forecast"
        await pilot.press("down")
        tree = app.focused
        assert isinstance(tree, CatalogTree)
        line = tree.cursor_line
        await pilot.press("down")  # the tree's navigation
        assert tree.cursor_line == line + 1 and app.focused is tree
        for _ in range(10):
            if isinstance(tree.cursor_node.data, ToolSpec):
                break
            await pilot.press("down")
        assert isinstance(tree.cursor_node.data, ToolSpec)
        await pilot.press("d")  # the tree's binding, not the prompt
        await sc.settle(pilot, servers=False)
        assert isinstance(app.screen, ToolDetailScreen) and prompt.text == ""


async def test_keys_typed_while_the_app_starts_land_in_the_prompt() -> None:
    """Full app: a terminal hands over the keys typed during start-up as soon as the app reads
    input, before the main screen has its prompt. They wait for the prompt and land in it, in
    order; the app used to stop with ``NoMatches: No nodes match 'PromptInput'``."""
    app = sc.make_app()
    _burst(app, _typed("what time is it"))  # queued before the app runs: handled first
    async with app.run_test(size=(120, 36)) as pilot:
        await sc.settle(pilot)
        assert app.is_running
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "what time is it" and app.focused is prompt
        await sc.type_text(pilot, " in Lima")  # and typing goes on after it
        assert prompt.text == "what time is it in Lima"


async def test_a_question_typed_and_sent_while_the_app_starts_is_sent() -> None:
    """Text and its Enter typed right after launch (before the prompt exists): the question is
    sent, once (the Enter was dropped: the text waited in the prompt, 2 of 2 tries)."""
    app = sc.make_app()
    _burst(app, [*_typed("weather forecast"), "enter"])  # queued before the app runs: handled first
    async with app.run_test(size=(120, 36)) as pilot:
        await sc.settle(pilot)
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "" and app.focused is prompt
        sent = [str(e.render()) for e in app.screen.chat.query(UserEntry)]
        assert [t for t in sent if "weather forecast" in t] == sent and len(sent) == 1
        assert app.screen.chat.query(SearchEntry)  # and answered (offline: a ToolSearch)
        asked = [
            b["text"]
            for msg in app.session.messages
            if msg["role"] == "user"
            for b in msg["content"]
            if b.get("type") == "text" and not b["text"].startswith("<system-reminder>")
        ]
        # sent once; searched again once more if it was answered while the weather server connected
        assert set(asked) == {"weather forecast"} and len(asked) == app.session.turn <= 2


async def test_keys_typed_right_after_enter_on_a_recommended_tool_fill_its_form() -> None:
    """Enter on a recommended tool and the first argument typed at once (a burst, as under load):
    the form opens and the text is in its first field. Before, the keys moved the focus to the
    prompt before the Enter was handled: no form, and the text in the prompt (Enter there would
    send it as a message). Keys that reach the form while it is being built wait for its field."""
    app = sc.make_app()
    async with app.run_test(size=(140, 42)) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "weather forecast")
        await pilot.press("tab")
        item = app.focused
        assert isinstance(item, RecommendationItem)
        _burst(app, ["enter", *_typed("Paris"), "enter", "7"])
        await sc.settle(pilot, servers=False)
        form = app.screen
        assert isinstance(form, ArgumentFormScreen) and form.tool.name == item.hit.name
        fields = list(form.query(".field"))
        assert form._raw(form.fields[0]) == "Paris" and app.focused is fields[1]  # Enter: the next field
        assert "7" in form._raw(form.fields[1])
        assert app.main_screen.query_one(PromptInput).text == ""


async def test_a_report_that_came_while_the_usage_panel_had_no_room_shows_once_it_has() -> None:
    # The panel is laid out (no Show event later) but has zero area when the report arrives,
    # as in the side panel's first frames; growing it must draw the report (it kept
    # "counting tokens…" until shown again).
    # The panel alone (the side panel's size in a 140×42 app); the report comes as the main
    # screen hands it over when its thread finishes.
    async with widget_app(lambda _engine: UsagePanel(id="usage"), size=(67, 36)) as pilot:
        app = pilot.app
        usage = app.screen.query_one(UsagePanel)
        usage.styles.max_height = 0
        await sc.settle(pilot, servers=False)
        usage.show_report(app.engine.context_report(loaded_names=set(), usage_counts={}))
        await sc.settle(pilot, servers=False)
        assert usage.report is not None and usage.region.area == 0
        usage.styles.max_height = None
        await sc.settle(pilot, servers=False)
        assert usage.region.area > 0
        assert "counting tokens" not in sc.screen_text(app)
