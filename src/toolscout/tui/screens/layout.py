"""The main screen's layout and focus: which side panel shows, where the cursor goes, and keys
typed on a read-only panel (kept out of :mod:`.main`, which routes the controller's facts)."""

from __future__ import annotations

from textual import events
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import TabbedContent

from ..mouse import SafeMouseScreen
from ..panels import side_panel
from ..widgets.prompt import PromptInput
from ..widgets.typeahead import KeysWaitForFocus, typing_on_a_panel

#: Longest wait for the form an Enter opens, keys typed meanwhile kept for it (s): a bound for
#: a pick that opened nothing after all, far above what opening a form takes on a loaded machine.
FORM_WAIT_S = 5.0


class SidePanels(SafeMouseScreen, KeysWaitForFocus, Screen[None]):
    """Base of :class:`~.main.MainScreen`: the chat column and one side panel (``#sidebar``, a
    ``TabbedContent`` of the registered panels: catalog, scoring, usage, …) next to it, and the
    prompt (``PromptInput``).

    Keys typed before the prompt is mounted wait for it (:class:`KeysWaitForFocus`: a terminal
    delivers keys typed during start-up at once), Enter included; keys typed after the Enter that
    opens a tool's form wait for the form (:meth:`route_key`)."""

    sidebar: reactive[bool | None] = reactive(None)
    """Side panel shown (True), hidden (False) or automatic by width (None)."""
    #: Keys typed since the Enter that opens a tool's form, for the form; None when no form opens.
    _for_form: list[events.Key] | None = None
    _form_wait: Timer | None = None

    def __init__(self) -> None:
        super().__init__()
        self.keys_waiting = []  # until the prompt has the focus (:meth:`keys_ready`)

    def watch_sidebar(self, value: bool | None) -> None:
        self.set_class(value is True, "-sidebar-shown")
        self.set_class(value is False, "-sidebar-hidden")

    @property
    def sidebar_visible(self) -> bool:
        """True when the side panel is on screen."""
        return self.query_one("#sidebar").display and self.query_one("#sidebar").region.width > 0

    def show_panel(self, name: str) -> None:
        """Show side panel ``name`` (a registered one: catalog, scoring, usage, …,
        :mod:`toolscout.tui.panels`) and focus it (already shown: it stays; Ctrl+B hides it)."""
        panel = side_panel(name)
        tabs = self.query_one("#sidebar", TabbedContent)
        tabs.active = panel.tab_id
        self.sidebar = True
        widget = self.query_one(f"#{panel.name}")
        self._focus_now(widget.query_one(panel.focus) if panel.focus else widget)

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
        """Before the focused widget gets ``event`` (the screen is ready: :class:`KeysWaitForFocus`):
        typing on a read-only panel moves the focus to the prompt now, so this key and every one
        after it land there in order. After an Enter that opens a tool's form (:meth:`opens_a_form`)
        the keys wait for the form, where they were meant to go (they reached the prompt, or
        moved the focus there before the Enter was handled, which then picked nothing): returns
        True for such a key (taken here; Textual must not hand it on)."""
        if self._for_form is not None:
            self._for_form.append(event)
            return True
        if event.key == "enter" and self.opens_a_form(self.focused):
            self._for_form = []
            self._form_wait = self.set_timer(FORM_WAIT_S, self.release_keys_for_form)
            return False
        if typing_on_a_panel(self, event):
            self.action_focus_prompt()
            self._focus_now(self.query_one(PromptInput))
        return False

    def opens_a_form(self, widget: Widget | None) -> bool:
        """True when Enter on ``widget`` opens a tool's argument form (the main screen knows)."""
        return False

    def take_keys_for_form(self) -> list[events.Key]:
        """The form opens now: the keys typed for it since the Enter (none when no Enter opened it)."""
        if self._form_wait is not None:
            self._form_wait.stop()
            self._form_wait = None
        keys, self._for_form = self._for_form or [], None
        return keys

    def release_keys_for_form(self) -> None:
        """No form opened after all (the tool is gone; or :data:`FORM_WAIT_S` passed): the keys
        kept for it go where they would have gone, in order."""
        for key in self.take_keys_for_form():
            key = events.Key(key.key, key.character)
            if not self.route_key(key):
                (self.focused or self)._forward_event(key)
