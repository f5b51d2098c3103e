"""Engine and session events → Textual messages.

The core reports through plain callbacks (:meth:`Engine.subscribe`); this module turns each
event into a message from :mod:`toolscout.tui.messages` and posts it to the app.
``App.post_message`` is thread-safe (it hops to the app's loop when called from another thread),
so a callback may fire from an MCP task, a worker thread or the app's own loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from textual.message import Message
from textual.message_pump import MessagePump

from toolscout.core.engine import events as core_events
from toolscout.core.engine.events import EventSource

from . import messages as m

log = logging.getLogger(__name__)


def translate(event: object) -> Message | None:
    """The message for one engine event, or None for events the UI ignores."""
    if isinstance(event, core_events.ServerStateChanged):
        return m.ServerStatusChanged(event.status)
    if isinstance(event, core_events.CatalogChanged):
        return m.CatalogChanged(tuple(event.delta.added), tuple(event.delta.removed))
    if isinstance(event, core_events.EngineWarning):
        text = f"{event.source}: {event.message}" if event.source else event.message
        return m.WarningRaised(text, event.source or "")
    if isinstance(event, core_events.VectorsProgress):
        return m.VectorsProgressed(event.done, event.total, event.eta_s)
    if isinstance(event, core_events.SettingsChanged):
        return m.SettingsApplied(dict(event.changed))
    if isinstance(event, core_events.RankerReady):
        return m.RankerChanged(event.ranker)
    if isinstance(event, core_events.ToolCallProgress):
        return m.ToolCallProgressed(event.call_id, event.progress, event.total, event.message)
    return None


class SessionTranslator:
    """Session events → messages. Keeps the streamed text of the current assistant message.

    Streamed deltas are joined here and posted as the *whole* text so far
    (:class:`~toolscout.tui.messages.AssistantTextUpdated` replaces a queued older one), so a
    burst of tokens costs the UI one repaint.
    """

    def __init__(self) -> None:
        self._text = ""
        self._block = 0

    def _key(self, turn: int) -> str:
        return f"{turn}.{self._block}"

    def __call__(self, event: object) -> Message | list[Message] | None:
        from toolscout.core.session import events as se

        if isinstance(event, se.UserMessageAdded):
            self._text = ""
            return m.TurnStarted(event.text)
        if isinstance(event, se.AssistantTextDelta):
            self._text += event.text
            return m.AssistantTextUpdated(self._key(event.turn), self._text)
        if isinstance(event, se.AssistantMessageDone):
            key, text = self._key(event.turn), event.text or self._text
            self._text = ""
            self._block += 1
            return m.AssistantTextUpdated(key, text, done=True) if text.strip() else None
        if isinstance(event, se.ToolCallStarted):
            return m.ToolCallStarted(event.call_id, event.tool_name, dict(event.params))
        if isinstance(event, se.ToolCallFinished):
            return m.ToolCallFinished(event.call_id, event.result)
        if isinstance(event, se.SearchResultsReady):
            return m.ToolSearchRan(event.call_id, event.query, event.result, event.text, tuple(event.loaded))
        if isinstance(event, se.RecommendationsReady):
            return m.RecommendationsChanged(list(event.tools))
        if isinstance(event, se.UsageReported):
            return m.UsageUpdated(
                event.input_tokens,
                event.output_tokens,
                event.cache_read_tokens,
                event.cache_creation_tokens,
                event.hit_ratio,
                event.request,
            )
        if isinstance(event, se.TurnFinished):
            return m.TurnEnded(cancelled=False)
        if isinstance(event, se.TurnCancelled):
            return m.TurnEnded(cancelled=True)
        if isinstance(event, se.SessionError):
            return m.ErrorReported(event.message)
        if isinstance(event, se.ToolSearchSwitched):  # the one announced prompt-cache break
            return m.WarningRaised(event.notice)
        return translate(event)


class Bridge:
    """Subscribes a message target to an engine (and, when there is one, a session).

    Args:
        target: where messages are posted (the app).
        engine: the core engine.
        session: the agent session, or None.
        session_translate: turns a session event into messages (default: a :class:`SessionTranslator`).
    """

    def __init__(
        self,
        target: MessagePump,
        engine: EventSource,
        session: EventSource | None = None,
        session_translate: Callable[[object], Message | list[Message] | None] | None = None,
    ) -> None:
        self._target = target
        self._engine = engine
        self._session = session
        self._session_translate = session_translate or SessionTranslator()
        self._unsubscribe: list[Callable[[], Any]] = []

    def connect(self) -> None:
        """Start forwarding events. Safe to call once."""
        self._unsubscribe.append(self._engine.subscribe(self._on_engine_event))
        if self._session is not None:
            self._unsubscribe.append(self._session.subscribe(self._on_session_event))

    def disconnect(self) -> None:
        """Stop forwarding events."""
        while self._unsubscribe:
            stop = self._unsubscribe.pop()
            try:
                stop()
            except Exception:
                log.debug("unsubscribe failed", exc_info=True)

    def _post(self, message: Message | list[Message] | None) -> None:
        if message is None:
            return
        for item in message if isinstance(message, list) else [message]:
            self._target.post_message(item)

    def _on_engine_event(self, event: object) -> None:
        self._post(translate(event))

    def _on_session_event(self, event: object) -> None:
        self._post(self._session_translate(event))
