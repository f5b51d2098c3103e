"""The offline flow end to end: pick a tool, fill its form, answer the permission prompt, read
the result. The form's fields are boxed and Enter walks them; the newest tool call is expanded;
the duration shown is the tool's own time. The form alone is tested in a harness app
(:func:`tui_harness.screen_app`); the run is a full-app journey."""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from textual.widgets import Static
from tui_harness import screen_app

from fixtures.listener import Listener
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.widgets.chat import ToolCallEntry
from toolscout.tui.widgets.multiline import MultiLineInput

SIZE = (120, 36)


async def _until(pilot, msgs: sc.Messages, screen_type: type) -> None:
    """Wait (bounded) for the message after which ``screen_type`` is the active screen."""
    await msgs.wait_for(pilot, lambda _message: isinstance(pilot.app.screen, screen_type), timeout_s=10)


async def _pick_forecast(pilot, msgs: sc.Messages) -> None:
    await sc.type_text(pilot, "weather forecast")
    await pilot.press("enter")
    await sc.settle(pilot)
    await pilot.press("tab", "enter")  # the first recommendation: get_forecast
    await _until(pilot, msgs, ArgumentFormScreen)


def form_app(tool: str, size: tuple[int, int] = SIZE):
    """The argument form of ``tool`` alone, pushed in a harness app over the fixture engine
    (the form the first recommendation opens: picking it is the journey below)."""
    return screen_app(lambda engine: ArgumentFormScreen(engine.tool(tool)), size=size)


async def test_form_fields_are_boxed_and_enter_walks_them() -> None:
    async with form_app("mcp__weather__get_forecast") as pilot:
        app = pilot.app
        form = app.screen
        city = form.query_one("#arg-0", MultiLineInput)  # a string with no one-line constraint
        assert app.focused is city
        assert city.styles.border_top[0] != "" and city.styles.border_bottom[0] != ""  # a visible box
        await sc.type_text(pilot, "Paris")
        await pilot.press("enter")  # not the last field: on to the next one
        assert isinstance(app.screen, ArgumentFormScreen)
        assert app.focused is form.query_one("#arg-1")
        focused_row = form.query_one("#arg-1").parent
        assert focused_row.has_class("field-row") and focused_row.has_focus_within


async def test_form_scrolls_and_keeps_its_buttons_at_80x24() -> None:
    async with form_app("mcp__weather__post_alert", size=(80, 24)) as pilot:
        app = pilot.app
        form = app.screen
        assert isinstance(form, ArgumentFormScreen)
        screen_region = form.region
        for wid in ("#run", "#cancel", "#form-title"):
            assert screen_region.contains_region(form.query_one(wid).region), wid
        fields = form.query_one("#form-fields")
        assert fields.max_scroll_y > 0  # the fields scroll instead of pushing the buttons off screen
        await pilot.press("ctrl+s")  # missing values: errors shown, buttons still on screen
        await pilot.pause()
        assert "required property" in sc.screen_text(app)
        assert screen_region.contains_region(form.query_one("#run").region)


async def test_a_number_that_is_not_whole_is_kept_as_typed_and_refused_in_an_integer_field() -> None:
    """``2.5`` typed in an integer field stays ``2.5`` (before, Textual's integer filter dropped the
    dot and the tool ran with 25); Run shows why it is refused, naming the field, and runs nothing;
    a whole number then runs."""
    async with form_app("mcp__weather__get_forecast") as pilot:
        app = pilot.app
        form = app.screen
        await sc.type_text(pilot, "Paris")
        await pilot.press("enter")
        days = form.query_one("#arg-1")  # days: integer, default 3
        assert app.focused is days and days.value == "3"
        await pilot.press("backspace", *"2.5")
        assert days.value == "2.5"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ArgumentFormScreen) and app.results == []  # nothing sent
        assert "✗ days: expected an integer" in sc.screen_text(app)
        assert days.has_class("-invalid") and days.value == "2.5"
        await pilot.press("backspace", "backspace", "ctrl+s")
        await asyncio.wait_for(app.dismissed.wait(), 10)
        assert app.results == [{"city": "Paris", "days": 2, "units": "metric", "hourly": False}]


async def test_run_shows_the_newest_call_expanded_with_the_tools_own_time(fake_clock) -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        app.engine.executor.clock = fake_clock
        for city in ("Paris", "Oslo"):
            await _pick_forecast(pilot, msgs)
            await sc.type_text(pilot, city)
            await pilot.press("ctrl+s")
            await _until(pilot, msgs, PermissionScreen)
            fake_clock.advance(0.6)  # the person reads the prompt
            await pilot.press("y")
            await sc.settle(pilot)
        calls = [e for e in app.screen.chat.children if isinstance(e, ToolCallEntry)]
        assert [c.collapsed for c in calls] == [True, False]  # the newest is open, older ones fold
        text = sc.screen_text(app)
        assert "Oslo: sunny" in text
        took = int(str(calls[-1].title).split("done · ")[1].split(" ms")[0].replace(",", ""))
        assert took < 500  # the tool's own time, not the 600 ms spent on the prompt


async def test_allow_once_then_a_refused_private_address_says_so_not_permission_denied() -> None:
    """WebFetch to a loopback listener, run by hand: "Allow once" lets the call run, and the
    address guard refuses the host. The call's entry names that refusal (not
    ``permission_denied``, which read as if the Allow had been ignored) and the settings rule
    that would allow the host; the listener receives nothing."""
    app = sc.make_app()
    with Listener() as sink:
        async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
            await sc.settle(pilot)
            app.run_by_hand(app.engine.tool("WebFetch"))  # what picking it in the bar or the palette opens
            await _until(pilot, msgs, ArgumentFormScreen)
            await sc.type_text(pilot, f"{sink.url}/leak")
            await pilot.press("ctrl+s")
            await _until(pilot, msgs, PermissionScreen)
            await pilot.press("y")  # Allow once
            await sc.settle(pilot)
            (call,) = [e for e in app.screen.chat.children if isinstance(e, ToolCallEntry)]
            assert "failed (private_host_refused)" in str(call.title)
            assert "permission_denied" not in sc.screen_text(app)
            shown = str(call.query_one(".tool-result", Static).render())  # the whole result, unwrapped
            assert '"WebFetch(domain:127.0.0.1)" to permissions.allow' in shown
        assert sink.received == []


async def test_a_number_json_cannot_carry_is_refused_not_sent_as_null() -> None:
    """``inf``, ``nan`` and ``1e400`` in a number field: Python reads each as a float, which the
    MCP SDK serialises as ``null``, so the tool ran with ``tail: null`` (before, the form sent
    them). Run now says why each is refused, naming the field, and sends nothing; a number runs."""
    async with form_app("mcp__filesystem__read_text_file") as pilot:
        app = pilot.app
        form = app.screen
        await sc.type_text(pilot, "notes.txt")
        await pilot.press("enter")
        tail = form.query_one("#arg-1")  # tail: number, no default
        assert app.focused is tail
        for typed in ("inf", "nan", "1e400", "-Infinity"):
            await sc.type_text(pilot, typed)
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ArgumentFormScreen) and app.results == [], typed  # nothing sent
            assert f"✗ tail: {typed} is not a number JSON can carry" in sc.screen_text(app), typed
            await pilot.press(*["backspace"] * len(typed))
        await sc.type_text(pilot, "5")
        await pilot.press("ctrl+s")
        await asyncio.wait_for(app.dismissed.wait(), 10)
        assert app.results == [{"path": "notes.txt", "tail": 5}]
