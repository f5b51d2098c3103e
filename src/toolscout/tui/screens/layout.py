"""The main screen's layout and focus: which side panel shows, where the cursor goes, and keys
typed on a read-only panel (kept out of :mod:`.main`, which routes the controller's facts)."""

from __future__ import annotations

from textual import events
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TabbedContent

from ..mouse import SafeMouseScreen
from ..widgets.prompt import PromptInput
from ..widgets.typeahead import typing_on_a_panel

PANELS = {"catalog": "tab-catalog", "scoring": "tab-scoring", "usage": "tab-usage"}


class SidePanels(SafeMouseScreen, Screen[None]):
    """Base of :class:`~.main.MainScreen`: the chat column and one side panel (``#sidebar``, a
    ``TabbedContent`` of catalog, scoring and usage) next to it, and the prompt (``PromptInput``)."""

    sidebar: reactive[bool | None] = reactive(None)
    """Side panel shown (True), hidden (False) or automatic by width (None)."""
    #: Text typed before the prompt was mounted, for the prompt (:meth:`route_key`); None once
    #: :meth:`take_early_text` gave it to the prompt.
    _typed_early: str | None = ""

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

    def take_typed_text(self, text: str) -> None:
        """Put ``text``, typed while a prompt over this screen was up, in the prompt at its
        cursor, and the focus there (as if it had been typed here)."""
        prompt = self.query_one(PromptInput)
        prompt.insert(text)
        self._focus_now(prompt)

    def route_key(self, event: events.Key) -> bool:
        """Before the focused widget gets ``event``: typing on a read-only panel moves the focus to the
        prompt now, so this key and every one after it land there in order. Text typed before this
        screen has its prompt (a terminal delivers keys typed during start-up at once) is kept for
        it: returns True for such a key (taken here; Textual must not hand it on)."""
        if self._typed_early is not None:  # the prompt is not mounted yet
            if event.is_printable and event.character:
                self._typed_early += event.character
                return True
            return False
        if typing_on_a_panel(self, event):
            self.action_focus_prompt()
            self._focus_now(self.query_one(PromptInput))
        return False

    def take_early_text(self) -> None:
        """The prompt is mounted: put the text typed before (see :meth:`route_key`) in it; keys
        go on to the focused widget from now on."""
        text, self._typed_early = self._typed_early, None
        if text:
            self.take_typed_text(text)

