"""Sending always shows what was sent and its answer, even when the view was left above the end.

Harness test (:class:`tui_harness.Harness`): the chat alone, moved away from its end, follows
again once :meth:`ChatView.stick` was called. That the main screen calls it when a slash command or
a message is sent is checked in the full-app journey
``test_turns.py::test_a_model_conversation_streams_follows_what_is_sent_and_esc_interrupts``.
"""

from __future__ import annotations

import tui_scenarios as sc
from tui_harness import Harness

from toolscout.tui.screens.slash import help_renderable
from toolscout.tui.widgets.chat import AssistantEntry, ChatView, NoticeEntry, UserEntry

#: The chat's area in a 120×36 app (the chat column, less the status bar, prompt and footer).
SIZE = (63, 31)


async def test_after_stick_a_notice_and_a_message_scroll_to_the_end_after_the_view_moved() -> None:
    """One chat, moved away from its end twice: a notice (a slash command's output), then a
    message and its answer, each shown at the end once the chat was told to stick (what the main
    screen does when something is sent)."""
    app = Harness(lambda: ChatView(id="chat"))
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        for _ in range(3):
            chat.add(NoticeEntry(help_renderable(), title="help"))
        await sc.chat_at_end(pilot, chat=chat)
        assert chat.max_scroll_y > 0
        chat.scroll_home(animate=False)  # as after a tool call grew or the terminal was resized
        await pilot.pause()
        assert not chat.is_vertical_scroll_end
        chat.stick()
        chat.add(NoticeEntry("servers", title="/mcp"))
        await sc.chat_at_end(pilot, chat=chat)

        chat.scroll_to(y=chat.max_scroll_y - 5, animate=False)  # content grew under the view
        await pilot.pause()
        assert not chat.is_vertical_scroll_end
        chat.stick()
        chat.add(UserEntry("hello"))
        chat.add(AssistantEntry("turn-1", "Hello from the model."))
        await sc.chat_at_end(pilot, chat=chat)
        assert "Hello from the model." in sc.screen_text(app)
