"""Keys typed ahead of the focus: Enter in a form field moves on at once, and keys that were
already on their way to the field go to the field that has the focus now.

A terminal delivers a fast typist's keys in one burst. Textual hands each key to the widget
focused when the app reads it, so ``Europe/London⏎10:30`` queues every key on the first field
before its Enter is handled; moving the focus later (a ``Submitted`` message, ``call_later``)
lets ``10:30`` land in the wrong field. A field that uses these helpers moves the focus inside
its own key handler and passes on keys that reach it after the focus left. On the main screen,
printable keys typed while a read-only panel has the focus go to the prompt. Keys that reach a
screen before it has its focus wait for it (:class:`KeysWaitForFocus`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea

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


def typing_on_a_panel(screen: Screen[Any], event: events.Key) -> bool:
    """True for a printable key about to reach a widget that does not take text (a read-only
    panel: usage, a tree, a list, a table; or nothing focused) and that no binding in the focus
    chain has (the catalog's ``d``, a tree's space). Typing there should go to the prompt, as in
    Claude Code. Called before Textual hands the key on, so the focus can move first.
    """
    if not (event.is_printable and event.character) or event.key in screen.active_bindings:
        return False
    focused = screen.focused
    takes_text = isinstance(focused, Input) or (isinstance(focused, TextArea) and not focused.read_only)
    return not takes_text


class KeysWaitForFocus(Screen[Any]):
    """Mixin for a screen: keys that reach it before it has put the focus where typing goes
    (its prompt, its first field) wait, in order, and are handed to that widget once it has it.

    A terminal delivers keys typed during start-up, or right after the Enter that opens a form,
    before the screen is mounted; Textual hands them to the screen itself, which drops them (the
    Enter too: text typed right after launch lost its Enter, issue 24 item 3). The app holds them
    here (:meth:`hold_key`, called before Textual routes a key); the screen calls
    :meth:`keys_ready` once its focus is set. Keys given at construction (:attr:`keys_waiting`)
    come first: those typed for this screen before it was pushed.
    """

    #: Keys waiting for the focus, oldest first; None once :meth:`keys_ready` handed them on.
    keys_waiting: list[events.Key] | None = None

    def hold_key(self, event: events.Key) -> bool:
        """Keep ``event`` while the screen is not ready; False once it is (route it as usual)."""
        if self.keys_waiting is None:
            return False
        self.keys_waiting.append(event)
        return True

    def keys_ready(self) -> None:
        """The focus is where typing goes: hand it the waiting keys, in order, before any key
        that comes later (this runs before Textual routes the next one)."""
        keys, self.keys_waiting = self.keys_waiting or [], None
        target = self.focused or self
        for key in keys:
            target._forward_event(events.Key(key.key, key.character))
