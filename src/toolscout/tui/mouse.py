"""Mouse events never stop the app (issue 21 item 7).

Textual 8.2.8 (the newest release) routes a mouse event by the screen's last layout. While a
widget re-renders, that layout can still hold widgets that were just removed or not styled yet:
the assistant's Markdown removes and mounts its blocks on every streamed piece, so a press on a
block just removed raises ``AttributeError`` (``container.region`` of a widget with no parent),
and a look-up of a widget no longer laid out raises ``NoWidget`` or ``KeyError`` (component styles
not applied yet), all out of ``Screen._forward_event``: the app stopped with a traceback.

The guard drops such an event (the next one is routed by the next layout) and logs it. It sits
on every screen of the app (:class:`SafeMouseScreen`), where both what the terminal sends (through
``App.on_event``) and Pilot's clicks are routed. Only Textual's synchronous routing runs inside it:
widgets handle the event later, from their own queues, outside the guard. Textual's own screens
(the command palette) are not guarded: they remove no widgets while they re-render.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from textual import events
from textual.errors import NoWidget
from textual.screen import Screen

log = logging.getLogger(__name__)

#: What routing a mouse event over a re-rendering screen raises in Textual 8.2.8.
STALE_LAYOUT_ERRORS: tuple[type[Exception], ...] = (NoWidget, KeyError, AttributeError)


@contextmanager
def dropped_if_stale(event: events.Event) -> Iterator[None]:
    """Run the routing of ``event``; a mouse event whose routing fails on a stale layout
    (:data:`STALE_LAYOUT_ERRORS`) is dropped and logged instead of stopping the app. Other events,
    and other errors, propagate unchanged."""
    if not isinstance(event, events.MouseEvent):
        yield
        return
    try:
        yield
    except STALE_LAYOUT_ERRORS:
        log.debug(
            "dropped %s at (%s, %s): the screen was re-rendering", type(event).__name__, event.x, event.y, exc_info=True
        )


class SafeMouseScreen(Screen[Any]):
    """Mixin for the app's screens: :func:`dropped_if_stale` around Textual's mouse routing."""

    def _forward_event(self, event: events.Event) -> None:
        with dropped_if_stale(event):
            super()._forward_event(event)
