"""A text box for more than one line, built on Textual's :class:`~textual.widgets.TextArea`.

Enter submits (:class:`MultiLineInput.Submitted`); Shift+Enter inserts a newline, and so does
Ctrl+J for terminals that cannot send Shift+Enter. A bracketed paste arrives as one
:class:`~textual.events.Paste` whose text TextArea inserts whole, every line kept (an
:class:`~textual.widgets.Input` keeps only the first). The box grows with its lines up to its
``max-height`` (CSS), then scrolls.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from .typeahead import Advance, advance_on_enter, pass_on

#: Keys that insert a newline instead of submitting.
NEWLINE_KEYS = ("shift+enter", "ctrl+j")


class MultiLineInput(TextArea):
    """Multi-line text with Input-like submit. ``value`` reads and replaces the whole text.

    ``advance`` (a form field's): Enter moves the focus on at once instead of submitting, and keys
    that arrive after the focus left go to the focused widget (:mod:`.typeahead`).
    """

    advance: Advance | None = None

    @dataclass
    class Submitted(Message):
        """Enter was pressed; ``value`` is the whole text."""

        input: MultiLineInput
        value: str

        @property
        def control(self) -> MultiLineInput:
            """The box (for ``@on(MultiLineInput.Submitted, "#id")``)."""
            return self.input

    def __init__(
        self, text: str = "", *, placeholder: str = "", id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(
            text,
            id=id,
            classes=classes,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=placeholder,
        )

    @property
    def value(self) -> str:
        """The text (lines joined with ``\\n``)."""
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own _on_key, which prevent_default() skips: Enter would insert.
        if self.advance is not None and (pass_on(self, event) or advance_on_enter(self, event, self.advance)):
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
        elif event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()

    def action_newline(self) -> None:
        """Insert a newline at the cursor (replacing a selection)."""
        self.replace("\n", *self.selection, maintain_selection_offset=False)
