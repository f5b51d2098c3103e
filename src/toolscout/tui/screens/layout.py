"""The main screen's layout and focus: which side panel shows, where the cursor goes, and keys
typed on a read-only panel (kept out of :mod:`.main`, which routes the controller's facts)."""

from __future__ import annotations

from textual import events
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TabbedContent

from ..widgets.prompt import PromptInput
from ..widgets.typeahead import typing_on_a_panel

PANELS = {"catalog": "tab-catalog", "scoring": "tab-scoring", "usage": "tab-usage"}


class SidePanels(Screen[None]):
    """Base of :class:`~.main.MainScreen`: the chat column and one side panel (``#sidebar``, a
    ``TabbedContent`` of catalog, scoring and usage) next to it, and the prompt (``PromptInput``)."""

    sidebar: reactive[bool | None] = reactive(None)
    """Side panel shown (True), hidden (False) or automatic by width (None)."""

    def watch_sidebar(self, value: bool | None) -> None:
        self.set_class(value is True, "-sidebar-shown")
        self.set_class(value is False, "-sidebar-hidden")

    @property
    def sidebar_visible(self) -> bool:
        """True when the side panel is on screen."""
        return self.query_one("#sidebar").display and self.query_one("#sidebar").region.width > 0

    def show_panel(self, name: str) -> None:
        """Show side panel ``name`` (catalog, scoring, usage) and focus it (already shown: it
        stays; Ctrl+B hides the panel)."""
        tabs = self.query_one("#sidebar", TabbedContent)
        target = {"catalog": "#catalog-filter", "scoring": "#scoring-query", "usage": "#usage"}[name]
        tabs.active = PANELS[name]
        self.sidebar = True
        self._focus_now(self.query_one(target))

    def _focus_now(self, widget: Widget) -> None:
        """Move focus to ``widget`` before whatever had it is hidden.

        Why: a focused widget that gets hidden hands focus to a sibling (Textual's
        ``Screen._reset_focus``); in a hidden tab pane that sibling's focus switches the tabs back
        (``TabPane.Focused``), so F4 from the scoring detail flipped back to Scoring, and keys typed
        before a deferred ``focus()`` landed nowhere.
        """
        self.set_focus(widget)

    def toggle_sidebar(self) -> None:
        """Show or hide the side panel."""
        if self.sidebar_visible:
            self._focus_now(self.query_one(PromptInput))
        self.sidebar = not self.sidebar_visible

    def action_focus_prompt(self) -> None:
        """Put the cursor in the prompt (on a narrow screen the side panel makes way for it)."""
        prompt = self.query_one(PromptInput)
        if self.has_class("-narrow") and self.sidebar_visible:
            self._focus_now(prompt)
            self.sidebar = False
        prompt.focus()

    def route_key(self, event: events.Key) -> None:
        """Before the focused widget gets ``event``: typing on a read-only panel moves the focus to the
        prompt now, so this key and every one after it land there in order."""
        if typing_on_a_panel(self, event):
            self.action_focus_prompt()
            self._focus_now(self.query_one(PromptInput))

