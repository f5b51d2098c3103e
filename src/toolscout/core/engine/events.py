"""Plain events the engine emits. The TUI turns them into Textual messages; the CLI prints them.

Events are past-tense facts (a server *connected*, the catalog *changed*), delivered synchronously
to every subscriber on the engine's event loop. Subscribers must not block.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..catalog.registry import CatalogDelta
from ..mcp.progress import fraction
from ..models import ServerStatus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """Base class of every engine and session event."""


Listener = Callable[[Event], None]


class EventSource:
    """Mixin: ``subscribe`` listeners and ``emit`` events to them, synchronously, in order.

    A failing listener is logged and skipped, never raised into the emitter. A class using it
    sets ``self._listeners = []`` in its ``__init__``.
    """

    _listeners: list[Listener]

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber; a failing subscriber is logged, not raised."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # one broken listener must not stop the others
                log.exception("event listener failed on %r", event)


@dataclass(frozen=True)
class ServerStateChanged(Event):
    """A server's connection state changed (connecting → connected/failed, or disconnected)."""

    status: ServerStatus


@dataclass(frozen=True)
class CatalogChanged(Event):
    """Tools were added or removed (a server connected, re-listed or went away)."""

    delta: CatalogDelta


@dataclass(frozen=True)
class EngineWarning(Event):
    """Something the user should know that did not stop anything (bad config entry, pagination loop)."""

    message: str
    source: str = ""


@dataclass(frozen=True)
class SettingsChanged(Event):
    """Settings were changed at run time (e.g. from the settings screen)."""

    changed: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorsProgress(Event):
    """Tool texts are being encoded for the dense ranker (first-time encoding of a catalog).

    Emitted a few times a second while encoding, and once with ``done == total`` at the end.
    """

    done: int
    total: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds still to go at the rate so far (None before the first text is done)."""
        if self.done <= 0 or self.elapsed_s <= 0:
            return None
        return self.elapsed_s / self.done * max(0, self.total - self.done)


@dataclass(frozen=True)
class RankerReady(Event):
    """The search ranking settled: the fused (dense) ranking took over once every tool text was
    encoded, or the index fell back to the lexical one. ``ranker`` is
    :attr:`Engine.ranker_status <toolscout.core.engine.facade.Engine.ranker_status>` at that moment."""

    ranker: str


@dataclass(frozen=True)
class ToolCallProgress(Event):
    """An MCP server reported progress on a tool call that is still running
    (``notifications/progress``; MCP spec, basic/utilities/progress).

    Emitted for calls made with a ``call_id`` (:meth:`Engine.call_tool
    <toolscout.core.engine.facade.Engine.call_tool>`), at most every
    :data:`~.progress.CALL_INTERVAL_S` per call (the newest report is sent when the interval is
    over), never after the call has returned.

    Attributes:
        call_id: the caller's id of the call (a session's ``tool_use`` id).
        tool_name: the tool as the caller named it.
        progress: how far the work is (grows with each event; the server's unit).
        total: what ``progress`` reaches at the end; None when the server does not know.
        message: the server's text for the current step, or None (untrusted: show it literally).
    """

    call_id: str
    tool_name: str
    progress: float
    total: float | None = None
    message: str | None = None

    @property
    def fraction(self) -> float | None:
        """``progress / total`` in 0..1, or None when the total is unknown (indeterminate)."""
        return fraction(self.progress, self.total)
