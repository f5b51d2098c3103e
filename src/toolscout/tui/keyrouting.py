"""The app's key routing before Textual hands a key to the focused widget (kept out of app.py)."""

from __future__ import annotations

from textual import events
from textual.app import App

from .screens.main import MainScreen


class KeyRouting(App[int]):
    """Mixin for the app: the main screen sees each key before the focused widget gets it
    (:meth:`~toolscout.tui.screens.main.MainScreen.route_key`: typing on a read-only panel goes
    to the prompt, and so does typing before the prompt was mounted)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and isinstance(self.screen, MainScreen) and self.screen.route_key(event):
            return  # typed before the prompt existed: kept for it
        await super().on_event(event)
