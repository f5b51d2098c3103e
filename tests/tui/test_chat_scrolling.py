"""Sending always shows what was sent and its answer, even when the view was left above the end."""

from __future__ import annotations

import tui_scenarios as sc

SIZE = (120, 36)


async def _fill(pilot) -> None:
    for _ in range(3):
        await sc.type_text(pilot, "/help")
        await pilot.press("enter")
    await sc.settle(pilot)


async def test_a_slash_command_and_a_message_scroll_to_the_end_after_the_view_moved() -> None:
    """One chat, moved away from its end twice: a slash command's output, then a message and its
    answer, each bring the view back to the end."""
    app = sc.make_app(session="model")
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await _fill(pilot)
        chat = app.screen.chat
        assert chat.max_scroll_y > 0
        chat.scroll_home(animate=False)  # as after a tool call grew or the terminal was resized
        await pilot.pause()
        assert not chat.is_vertical_scroll_end
        await sc.type_text(pilot, "/mcp")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert chat.is_vertical_scroll_end

        chat.scroll_to(y=chat.max_scroll_y - 5, animate=False)  # content grew under the view
        await pilot.pause()
        assert not chat.is_vertical_scroll_end
        await sc.type_text(pilot, "hello")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert chat.is_vertical_scroll_end
        assert "Hello from the model." in sc.screen_text(app)
