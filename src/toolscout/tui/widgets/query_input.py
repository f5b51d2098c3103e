"""An :class:`~textual.widgets.Input` whose typing does not lay out the whole screen again.

Why: in Textual 8.2 ``Input`` sets its virtual size to the width of its text on every change, and
``virtual_size`` is a layout reactive, so each keystroke reflowed every widget on the screen
(7–12 ms with the catalog and the scoring panel mounted, on the keystroke → ranked table path
of live scoring). Here the virtual width is at least the visible width, so it only changes
(and only then lays out) once the text is wider than the box and has to scroll.

``before_change`` runs in the same callback that changes the value, before anything can paint
the new text: the scoring panel takes its frame hold there, so no repaint falls between the echo
of a key and the panel hearing of it (``Input.Changed`` arrives a message later).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.geometry import Size
from textual.widgets import Input


class QueryInput(Input):
    """A single-line query box of a fixed width (not ``width: auto``); looks and behaves
    exactly like :class:`~textual.widgets.Input`.

    Args:
        before_change: called with no arguments whenever the value changes, before the new
            value is laid out or painted and before ``Input.Changed`` is posted.
    """

    def __init__(self, *args: Any, before_change: Callable[[], None] | None = None, **kwargs: Any) -> None:
        self._before_change = before_change
        super().__init__(*args, **kwargs)

    def _watch_value(self, value: str) -> None:
        if self._before_change is not None:
            self._before_change()
        super()._watch_value(value)

    def on_resize(self) -> None:
        # Input sets its virtual size only when the value changes: start from the box's width so
        # the first keystroke does not change it either. Only scrolling reads it (no scrollbars):
        # set without asking for another layout.
        self.set_reactive(QueryInput.virtual_size, Size(self.content_width, 1))

    @property
    def content_width(self) -> int:
        """The text's width plus the cursor cell, but never less than the visible width (cells).
        The placeholder counts as empty: it is cut to the box, never scrolled."""
        visible = self.scrollable_content_region.width
        if not self.value:
            return visible
        return max(super().content_width, visible)
