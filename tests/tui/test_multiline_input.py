"""Multi-line input (issue 14): the prompt and the argument form's free-text fields keep every
line of what is typed (Shift+Enter, Ctrl+J) or pasted (bracketed paste: one ``Paste`` event), and
the model receives all of it. Enter still sends, slash commands and history still work.

Harness tests (:mod:`tui_harness`): the prompt alone (:class:`~tui_harness.PromptHarness`: lines,
the box growing, paste, history) and the argument form alone (:func:`~tui_harness.screen_app`).
One full-app journey: what the main screen does with a multi-line prompt (sends it whole to the
model, shows it in the chat, clears the prompt, keeps slash commands in the history)."""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from textual import events
from textual.widgets import Input
from tui_harness import PromptHarness, screen_app, submit

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.widgets.chat import NoticeEntry, UserEntry
from toolscout.tui.widgets.multiline import MultiLineInput
from toolscout.tui.widgets.prompt import PromptInput

SIZE = (120, 36)
QUESTION = "Summarise this report:\nline two of it\n\n- and a bullet"


def _sent_text(provider: sc.ScriptedProvider, request: int) -> str:
    """The person's text in the provider's ``request``-th request (the last text block of the
    last user message; a system reminder may come before it)."""
    user = [msg for msg in provider.requests[request].messages if msg["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else [b["text"] for b in content if b["type"] == "text"][-1]


async def test_shift_enter_and_ctrl_j_add_lines_and_the_box_grows() -> None:
    """The prompt alone in a harness app (:class:`tui_harness.PromptHarness`): Shift+Enter and
    Ctrl+J add lines, the box grows with them, Enter submits every line."""
    async with PromptHarness().run_test(size=SIZE) as pilot:
        app = pilot.app
        prompt = app.query_one(PromptInput)
        await sc.type_text(pilot, "first")
        await pilot.press("shift+enter")
        await sc.type_text(pilot, "second")
        await pilot.press("ctrl+j")  # for terminals that cannot send Shift+Enter
        await sc.type_text(pilot, "third")
        assert prompt.value == "first\nsecond\nthird"
        await pilot.pause()
        screen = sc.screen_text(app)
        assert all(word in screen for word in ("first", "second", "third"))  # the box grew
        assert prompt.region.height == 5  # three lines between the borders
        await submit(pilot)
        assert app.submitted == ["first\nsecond\nthird"]


async def test_a_bracketed_paste_keeps_every_line() -> None:
    """The prompt alone in a harness app: a bracketed paste (one ``Paste`` event) keeps every
    line, and Enter submits all of them."""
    async with PromptHarness().run_test(size=SIZE) as pilot:
        app = pilot.app
        app.post_message(events.Paste(QUESTION))  # what the driver posts for a bracketed paste
        await pilot.pause()
        assert app.query_one(PromptInput).value == QUESTION
        await submit(pilot)
        assert app.submitted == [QUESTION]


async def test_typed_and_pasted_lines_all_reach_the_model_and_the_chat() -> None:
    """Journey (full app, model session): what the main screen does with a multi-line prompt.
    Typed lines (Shift+Enter, Ctrl+J) and a pasted text are sent whole to the model, shown whole
    in the chat, and the prompt is cleared; a slash command still works and goes to the history."""
    provider = sc.ScriptedProvider("ok")
    app = sc.make_app(session="model", provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        prompt = app.screen.query_one(PromptInput)
        await sc.type_text(pilot, "first")
        await pilot.press("shift+enter")
        await sc.type_text(pilot, "second")
        await pilot.press("ctrl+j")
        await sc.type_text(pilot, "third")
        assert prompt.value == "first\nsecond\nthird"
        await pilot.press("enter")
        await sc.settle(pilot)
        assert prompt.value == ""
        assert _sent_text(provider, 0) == "first\nsecond\nthird"
        assert "first\nsecond\nthird" in str(
            [e for e in app.screen.chat.children if isinstance(e, UserEntry)][-1].render()
        )

        app.post_message(events.Paste(QUESTION))  # what the driver posts for a bracketed paste
        await pilot.pause()
        assert prompt.value == QUESTION
        await pilot.press("enter")
        await sc.settle(pilot)
        assert prompt.value == ""
        assert _sent_text(provider, 1) == QUESTION

        await sc.ask(pilot, "/help")  # slash commands still work, and go to the history
        help_entry = list(app.screen.chat.children)[-1]
        assert isinstance(help_entry, NoticeEntry) and help_entry.border_title == "help"
        await sc.chat_at_end(pilot)
        assert "ctrl+b" in sc.screen_text(app)  # the help's end (the footer says ^b)
        await pilot.press("up")
        assert prompt.value == "/help"


async def test_history_up_and_down_from_the_first_and_last_line() -> None:
    """The prompt alone in a harness app answered as the main screen answers it (slash commands
    in the history, and what a sent prompt starts: the journey above and test_turns.py)."""
    async with PromptHarness().run_test(size=SIZE) as pilot:
        prompt = pilot.app.query_one(PromptInput)
        await submit(pilot, "one")
        await sc.type_text(pilot, "two")
        await pilot.press("shift+enter")
        await submit(pilot, "three")
        assert pilot.app.submitted == ["one", "two\nthree"]
        await sc.type_text(pilot, "draft")
        await pilot.press("up")
        assert prompt.value == "two\nthree" and prompt.cursor_location == (1, 5)
        await pilot.press("up")  # not on the first line yet: the cursor moves up
        assert prompt.value == "two\nthree" and prompt.cursor_location[0] == 0
        await pilot.press("up")
        assert prompt.value == "one"
        await pilot.press("down")
        assert prompt.value == "two\nthree"
        await pilot.press("down")  # on the last line: back to the draft
        assert prompt.value == "draft"


async def test_a_free_text_argument_takes_several_lines_and_short_ones_stay_single() -> None:
    """The form alone in a harness app: what Ctrl+S dismisses it with is what the app runs the
    tool with (the run itself: test_offline_run.py's journey)."""
    async with screen_app(
        lambda engine: ArgumentFormScreen(engine.tool("mcp__weather__get_forecast")), size=SIZE
    ) as pilot:
        app = pilot.app
        form = app.screen
        city = form.query_one("#arg-0")
        assert isinstance(city, MultiLineInput) and app.focused is city
        assert isinstance(form.query_one("#arg-1"), Input)  # days: a number stays one line
        app.post_message(events.Paste("Paris\nFrance"))
        await pilot.pause()
        await pilot.press("shift+enter", "E", "U")
        assert city.value == "Paris\nFrance\nEU"
        await pilot.press("enter")  # Enter still moves on to the next field
        assert app.focused is form.query_one("#arg-1")
        await pilot.press("ctrl+s")
        await asyncio.wait_for(app.dismissed.wait(), 10)
        (arguments,) = app.results
        assert arguments["city"] == "Paris\nFrance\nEU"
