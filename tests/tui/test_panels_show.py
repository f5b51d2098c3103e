"""Panels never hang (issue 24 item 4): every side panel shows what it has as soon as it is on
screen, whatever brought it there, and follows what arrives later.

Journey (full app): the person scrolls the chat with the mouse wheel, then presses F4. The token
report had arrived while the usage panel was hidden (drawn once shown, to spare a hidden redraw).
Scrolling lays out only what is visible and leaves Textual's full map to be rebuilt on the next
region read; F4's focus move read one after the tab switch, so the panel was laid out before the
next layout and got neither Show nor Resize: it stayed on "counting tokens…" until the tab was
switched again. Every panel is checked the same way (F2, F3, F4 after a scroll)."""

from __future__ import annotations

import tui_scenarios as sc
from textual import events

from toolscout.tui.widgets.usage import UsagePanel

SIZE = (140, 42)


async def _scroll_the_chat(pilot: object, app: object) -> None:
    """Three wheel notches up over the chat, as the terminal sends them."""
    chat = app.screen.chat
    assert chat.max_scroll_y > 0
    for _ in range(3):
        sc.terminal_mouse(app, events.MouseScrollUp, chat.region.x + 5, chat.region.y + 5)
    await sc.settle(pilot, servers=False)
    assert not chat.is_vertical_scroll_end


async def test_f4_after_scrolling_the_chat_shows_the_report_and_every_panel_shows_its_content() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        for _ in range(3):
            await sc.ask(pilot, "/help")
        await sc.chat_at_end(pilot)
        usage = app.screen.query_one(UsagePanel)
        assert usage.report is not None  # it came while the panel was hidden

        await _scroll_the_chat(pilot, app)
        await pilot.press("f4")
        await sc.settle(pilot, servers=False)
        text = " ".join(sc.screen_text(app).split())
        assert "counting tokens" not in text
        assert "tool search always on" in text and "total" in text  # the report itself

        for key, shown in (("f2", "weather"), ("f3", "type to rank the deferred tools")):
            await _scroll_the_chat(pilot, app)
            await pilot.press(key)
            await sc.settle(pilot, servers=False)
            assert shown in sc.screen_text(app)
        await _scroll_the_chat(pilot, app)
        await pilot.press("f4")
        await sc.settle(pilot, servers=False)
        assert "counting tokens" not in sc.screen_text(app)
