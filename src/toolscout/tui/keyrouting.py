"""The app's key routing before Textual hands a key to the focused widget (kept out of app.py)."""

from __future__ import annotations

from textual import events
from textual.app import App

from .screens.main import MainScreen
from .widgets.typeahead import KeysWaitForFocus


class KeyRouting(App[int]):
    """Mixin for the app: a screen still setting its focus keeps the keys that reach it
    (:class:`~toolscout.tui.widgets.typeahead.KeysWaitForFocus`: typing before the prompt or a
    form's first field exists), and the main screen sees each key before the focused widget gets
    it (:meth:`~toolscout.tui.screens.main.MainScreen.route_key`: typing on a read-only panel
    goes to the prompt, typing after the Enter that opens a form to the form)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            screen = self.screen
            if isinstance(screen, KeysWaitForFocus) and screen.hold_key(event):
                return  # kept for the widget the screen is about to focus
            if isinstance(screen, MainScreen) and screen.route_key(event):
                return  # kept for the form being opened
        await super().on_event(event)
