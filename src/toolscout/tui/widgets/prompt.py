"""The prompt: multi-line text (Enter sends, Shift+Enter or Ctrl+J a new line, a paste keeps every
line), Up/Down walk the history from the first/last line, Tab hops into the recommendation bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from .multiline import MultiLineInput


class PromptInput(MultiLineInput):
    """The prompt, with history.

    Up on the first line recalls older entries, Down on the last line newer ones (and finally the
    unsent draft); elsewhere they move the cursor between lines. Tab asks the screen to move into
    the recommendation bar (:class:`PromptInput.TabPressed`); the screen decides where focus goes.
    Enter posts :class:`~toolscout.tui.widgets.multiline.MultiLineInput.Submitted`.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "leave_prompt", "Recommendations", show=False, id="prompt.tab"),
    ]

    @dataclass
    class TabPressed(Message):
        """Tab was pressed in the prompt."""

        prompt: PromptInput

    def __init__(
        self, *, sent: list[str] | None = None, placeholder: str = "", id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(placeholder=placeholder, id=id, classes=classes)
        #: what was sent, oldest first (``history`` is TextArea's undo history)
        self.sent: list[str] = list(sent or [])
        self._cursor: int | None = None
        self._draft = ""

    def remember(self, text: str) -> None:
        """Add ``text`` to the history (consecutive duplicates are kept once)."""
        if text.strip() and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._cursor = None
        self._draft = ""

    def action_cursor_up(self, select: bool = False) -> None:
        """Up: the line above; from the first line, the previous history entry."""
        if select or self.cursor_location[0] > 0:
            super().action_cursor_up(select)
        else:
            self.action_history_previous()

    def action_cursor_down(self, select: bool = False) -> None:
        """Down: the line below; from the last line, the next history entry."""
        if select or self.cursor_location[0] < self.document.line_count - 1:
            super().action_cursor_down(select)
        else:
            self.action_history_next()

    def action_history_previous(self) -> None:
        """Show the previous (older) history entry."""
        if not self.sent:
            return
        if self._cursor is None:
            self._draft = self.value
            self._cursor = len(self.sent)
        self._cursor = max(self._cursor - 1, 0)
        self.value = self.sent[self._cursor]

    def action_history_next(self) -> None:
        """Show the next (newer) history entry, then the draft."""
        if self._cursor is None:
            return
        self._cursor += 1
        if self._cursor >= len(self.sent):
            self._cursor = None
            self.value = self._draft
        else:
            self.value = self.sent[self._cursor]

    def action_leave_prompt(self) -> None:
        """Tab: let the screen decide where focus goes."""
        self.post_message(self.TabPressed(self))
