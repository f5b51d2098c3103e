"""Coalesced, rate-limited redraws for panels fed by bursts of engine events.

At 47 servers the engine reports hundreds of state changes and listings within tens of seconds.
A panel that recomputed on each one (read the whole catalog, relayout the screen) would keep the
UI loop busy and delay keystrokes (issue 12). :class:`Throttle` turns any number of requests
into one call after the next frame, and, while ``busy()`` is true (servers connecting), into at
most one call per ``interval``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from time import monotonic

from textual.message_pump import MessagePump
from textual.timer import Timer


class Throttle:
    """Run ``callback`` once per burst of :meth:`request` calls, rate-limited while busy.

    Args:
        owner: the widget or screen whose timers and after-refresh callbacks run it.
        callback: what to run (on the owner's loop, no arguments).
        interval: shortest time between two runs while ``busy()`` is true (s).
        busy: whether to rate-limit now (e.g. "any server is connecting").
    """

    def __init__(
        self, owner: MessagePump, callback: Callable[[], None], interval: float, busy: Callable[[], bool]
    ) -> None:
        self._owner = owner
        self._callback = callback
        self.interval = interval
        self._busy = busy
        self._pending = False
        self._last = float("-inf")
        #: the timer of a run postponed by the interval (None when none is waiting)
        self._timer: Timer | None = None
        _LIVE.add(self)

    @property
    def owner(self) -> MessagePump:
        """The widget or screen that runs the callback."""
        return self._owner

    @property
    def pending(self) -> bool:
        """True when a run is scheduled and has not happened yet."""
        return self._pending

    def request(self) -> None:
        """Ask for a run: after the next frame, or ``interval`` after the last one while busy.
        Requests made while a run is pending join it."""
        if self._pending:
            return
        self._pending = True
        wait = self._last + self.interval - monotonic() if self._busy() else 0.0
        if wait > 0:
            self._timer = self._owner.set_timer(wait, self._run)
        else:
            self._owner.call_after_refresh(self._run)

    def flush(self) -> None:
        """Run a run postponed by the interval now, on the owner's loop, as if the interval had
        passed (tests fast-forward it, like a fake clock; see ``tests/fixtures/tui_scenarios.py``).
        No-op when no run waits for its interval (one after the next frame comes anyway)."""
        timer, self._timer = self._timer, None
        if timer is not None and self._pending:
            timer.stop()
            self._owner.call_later(self._run)

    def _run(self) -> None:
        self._timer = None
        if not self._pending:
            return  # flushed already: the stopped timer's call came anyway
        self._pending = False
        self._last = monotonic()
        self._callback()

    @staticmethod
    def live() -> list[Throttle]:
        """Every throttle not yet garbage-collected (tests wait for their pending runs)."""
        return list(_LIVE)

    def ran(self) -> None:
        """Record a run made directly (not through :meth:`request`): the interval starts now."""
        self._last = monotonic()


_LIVE: weakref.WeakSet[Throttle] = weakref.WeakSet()
