"""Keys typed ahead of the focus: Enter in a form field moves on at once, and keys that were
already on their way to the field go to the field that has the focus now.

A terminal delivers a fast typist's keys in one burst. Textual hands each key to the widget
focused when the app reads it, so ``Europe/London⏎10:30`` queues every key on the first field
before its Enter is handled; moving the focus later (a ``Submitted`` message, ``call_later``)
lets ``10:30`` land in the wrong field. A field that uses these helpers moves the focus inside
its own key handler and passes on keys that reach it after the focus left.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.widget import Widget

#: Moves the focus on from the given field; False when there is nowhere to go (the last field).
Advance = Callable[[Widget], bool]


def pass_on(widget: Widget, event: events.Key) -> bool:
    """Send a key that reached ``widget`` after the focus left it to the focused widget.

    Args:
        widget: the field whose key handler runs.
        event: the key; stopped and consumed here when passed on.

    Returns:
        True when the key was passed on (the caller does nothing more with it).
    """
    focused = widget.app.focused
    # Not widget.has_focus: it turns False only when the Blur queued behind these keys is handled.
    if focused is None or focused is widget or focused.screen is not widget.screen:
        return False
    event.stop()
    event.prevent_default()
    focused.post_message(events.Key(event.key, event.character))
    return True


def advance_on_enter(widget: Widget, event: events.Key, advance: Advance | None) -> bool:
    """Enter: move the focus on now (``advance``), before the next queued key is handled.

    Returns:
        True when the focus moved (the key is consumed); False for other keys, with no
        ``advance``, or from the last field (the caller submits as usual).
    """
    if event.key != "enter" or advance is None or not advance(widget):
        return False
    event.stop()
    event.prevent_default()
    return True
