"""The prompt input: one line, Up/Down walk the history, Tab hops into the recommendation bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class PromptInput(Input):
    """Single-line prompt with history.

    Up recalls older entries, Down newer ones (and finally the unsent draft). Tab asks the
    screen to move into the recommendation bar (:class:`PromptInput.TabPressed`); the screen
    decides whether the bar is visible, else focus simply moves on.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history_previous", "Previous", show=False, id="prompt.history_previous"),
        Binding("down", "history_next", "Next", show=False, id="prompt.history_next"),
        Binding("tab", "leave_prompt", "Recommendations", show=False, id="prompt.tab"),
    ]

    @dataclass
    class TabPressed(Message):
        """Tab was pressed in the prompt."""

        prompt: PromptInput

    def __init__(self, *, history: list[str] | None = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.history: list[str] = list(history or [])
        self._cursor: int | None = None
        self._draft = ""

    def remember(self, text: str) -> None:
        """Add ``text`` to the history (consecutive duplicates are kept once)."""
        if text.strip() and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._cursor = None
        self._draft = ""

    def action_history_previous(self) -> None:
        """Show the previous (older) history entry."""
        if not self.history:
            return
        if self._cursor is None:
            self._draft = self.value
            self._cursor = len(self.history)
        self._cursor = max(self._cursor - 1, 0)
        self._show(self.history[self._cursor])

    def action_history_next(self) -> None:
        """Show the next (newer) history entry, then the draft."""
        if self._cursor is None:
            return
        self._cursor += 1
        if self._cursor >= len(self.history):
            self._cursor = None
            self._show(self._draft)
        else:
            self._show(self.history[self._cursor])

    def action_leave_prompt(self) -> None:
        """Tab: let the screen decide where focus goes."""
        self.post_message(self.TabPressed(self))

    def _show(self, text: str) -> None:
        self.value = text
        self.cursor_position = len(text)
