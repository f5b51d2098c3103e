"""The main screen's handlers of tool-call messages: a call's chat entry, its progress, its result.

A mixin of :class:`~.main.MainScreen` (kept apart so the screen module stays within its size).
"""

from __future__ import annotations

from .. import messages as m
from ..widgets.chat import ChatView, ToolCallEntry


class ToolCallHandlers:
    """``on_tool_call_*`` of the main screen; :attr:`chat` is the screen's conversation."""

    @property
    def chat(self) -> ChatView:
        """The conversation the entries are in (the screen's)."""
        raise NotImplementedError

    def on_tool_call_started(self, message: m.ToolCallStarted) -> None:
        """A call began: its entry, running."""
        self.chat.add_tool_call(ToolCallEntry(message.call_id, message.tool_name, message.arguments))

    def on_tool_call_progressed(self, message: m.ToolCallProgressed) -> None:
        """The call's server reported progress: the entry's bar (none for an unknown call)."""
        entry = self.chat.tool_call(message.call_id)
        if entry is not None:
            entry.show_progress(message.progress, message.total, message.message)

    def on_tool_call_finished(self, message: m.ToolCallFinished) -> None:
        """The call ended: its result on its entry (one is made for a call not seen starting)."""
        entry = self.chat.tool_call(message.call_id)
        if entry is None:
            entry = self.chat.add_tool_call(ToolCallEntry(message.call_id, message.result.tool_name, {}))
        follow = self.chat.following
        entry.finish(message.result)
        self.chat.reveal(entry, follow=follow)
