"""A running tool call's progress on its chat entry: the bar and the server's message.

The MCP server of a long call may report progress (``notifications/progress``: a value, maybe a
total, maybe a message); the engine turns it into ``ToolCallProgress`` events and the chat entry
of the call (:class:`~.chat.ToolCallEntry`) shows it with this widget until the call ends.
"""

from __future__ import annotations

from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from ..text import plain

#: Most characters of a server's progress message shown beside the bar.
MAX_PROGRESS_CHARS = 200


class ToolProgress(Horizontal):
    """Textual's :class:`ProgressBar` (indeterminate while the server does not say the total)
    and the server's message, literal: it is untrusted text (no markup, no escapes, one line)."""

    def __init__(self) -> None:
        self.bar = ProgressBar(total=None, show_eta=False, classes="tool-progress-bar")
        self.message = Static("", classes="tool-progress-message")
        super().__init__(self.bar, self.message, classes="tool-progress")

    def show(self, progress: float, total: float | None, message: str | None) -> None:
        """Move the bar to ``progress`` of ``total`` (None or not > 0: indeterminate) and show
        ``message`` (None: no text)."""
        if total is not None and total > 0:
            self.bar.update(total=total, progress=min(progress, total))
        else:
            self.bar.update(total=None, progress=progress)
        self.message.update(plain(message or "", single_line=True, limit=MAX_PROGRESS_CHARS))
