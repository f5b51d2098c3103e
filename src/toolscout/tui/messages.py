"""Textual messages: past-tense facts the controller posts down, and the requests screens post up.

Facts (engine and session events turned into messages by :mod:`toolscout.tui.bridge`, and what
the :class:`~toolscout.tui.controller.SessionController` itself reports) go to the main screen,
which hands each to the widget that shows it; widgets never call the engine, an MCP server or a
provider themselves. Messages that arrive in bursts (streamed text, catalog changes, token
reports) carry the *whole* current state and set ``can_replace`` so a queued stale one is dropped.

Requests (the ``…Requested`` messages at the end) bubble from the main screen to the app, which
hands them to the controller: a screen never calls the app or the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from toolscout.core.engine.context import ContextReport
from toolscout.core.models import ServerStatus, ToolResult, ToolSpec
from toolscout.core.search.results import SearchResult
from toolscout.core.session.events import Recommendation


@dataclass
class EngineStarted(Message):
    """The engine finished :meth:`~toolscout.core.engine.facade.Engine.start` (servers may still connect)."""


@dataclass
class ServerStatusChanged(Message):
    """One server's connection state changed."""

    status: ServerStatus


@dataclass
class CatalogChanged(Message):
    """Tools were added or removed; panels that list tools should refresh."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def can_replace(self, message: Message) -> bool:  # a refresh covers every earlier one
        return isinstance(message, CatalogChanged)


@dataclass
class RankerChanged(Message):
    """The search ranking settled (the fused ranking took over, or a fallback); ``ranker`` is
    the engine's ranker status line."""

    ranker: str


@dataclass
class VectorsProgressed(Message):
    """Tool texts are being encoded for the dense ranker: ``done`` of ``total``, ``eta_s`` to go."""

    done: int
    total: int
    eta_s: float | None = None

    def can_replace(self, message: Message) -> bool:  # only the latest count matters
        return isinstance(message, VectorsProgressed)


@dataclass
class WarningRaised(Message):
    """The engine or the session recorded a warning; ``source`` is the server it concerns, if any."""

    text: str
    source: str = ""


@dataclass
class SettingsApplied(Message):
    """Settings changed at run time (already persisted); ``changed`` maps key → new value."""

    changed: dict[str, Any] = field(default_factory=dict)


@dataclass
class ContextReportReady(Message):
    """A fresh token-usage report was computed (in a worker); ``generation`` orders requests."""

    report: ContextReport
    generation: int = 0

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ContextReportReady)


# -- session ---------------------------------------------------------------------------------
@dataclass
class AssistantTextUpdated(Message):
    """Streamed assistant text; ``text`` is everything so far for block ``key``."""

    key: str
    text: str
    done: bool = False

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AssistantTextUpdated) and message.key == self.key and not message.done


@dataclass
class ToolCallStarted(Message):
    """A tool call began. ``tool_name`` is the real tool, never the ExecuteTool proxy."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolCallProgressed(Message):
    """The MCP server of a running call reported progress (``total`` None: not known; ``message``
    is the server's untrusted text). A newer one replaces an older one of the same call still queued."""

    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ToolCallProgressed) and message.call_id == self.call_id


@dataclass
class ToolCallFinished(Message):
    """A tool call produced ``result`` (errors included)."""

    call_id: str
    result: ToolResult


@dataclass
class ToolSearchRan(Message):
    """The model (or the person) ran ToolSearch.

    ``result`` is the ranked result (None when the call failed before searching); ``text`` is
    exactly what the model received; ``loaded`` the deferred tools the call loaded.
    """

    call_id: str
    query: str
    result: SearchResult | None
    text: str = ""
    loaded: tuple[str, ...] = ()


@dataclass
class RecommendationsChanged(Message):
    """The session's recommended deferred tools for the next message (best first)."""

    tools: list[Recommendation] = field(default_factory=list)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RecommendationsChanged)


@dataclass
class UsageUpdated(Message):
    """One model request's token usage (tokens) and the session's prefix-hit ratio so far.

    ``hit_ratio`` is the share of the session's requests whose cache prefix (system prompt +
    tools array) matched the previous request's.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    hit_ratio: float | None = None
    requests: int = 0


@dataclass
class TurnStarted(Message):
    """The session started working on a message (the person's text, as the session recorded it)."""

    text: str = ""


@dataclass
class TurnEnded(Message):
    """The turn finished; ``cancelled`` when the person interrupted it."""

    cancelled: bool = False


@dataclass
class ErrorReported(Message):
    """Something failed and the person should see it in the chat."""

    text: str


@dataclass
class NoticeReported(Message):
    """Something the person should read in the chat (not an error): ``text`` under ``title``."""

    text: str
    title: str = ""


@dataclass
class BusyChanged(Message):
    """A tool the person picked started (True) or finished (False) running."""

    busy: bool


@dataclass
class ConversationStarted(Message):
    """A new conversation replaced the old one (``/clear``): everything it knew starts from zero;
    ``notice`` says so (and where the old one is saved)."""

    notice: str


# -- requests: the main screen → the app → the controller -----------------------------------
@dataclass
class TurnRequested(Message):
    """The person sent ``text`` to the model (or, offline, to the search)."""

    text: str


@dataclass
class InterruptRequested(Message):
    """Esc while a turn or tool call runs: stop it."""


@dataclass
class NewConversationRequested(Message):
    """``/clear``: start a new conversation."""


@dataclass
class PermissionsRequested(Message):
    """``/permissions``: show the rules in force (and remove a saved answer)."""


@dataclass
class QuitRequested(Message):
    """``/exit`` or ``/quit``: leave the app (the conversation stays saved, as with ctrl+q)."""


@dataclass
class ToolUseRequested(Message):
    """The person picked tool ``name`` (recommendation bar, a search hit): load it for the model,
    or offline fill in its arguments and run it."""

    name: str


@dataclass
class ToolRunRequested(Message):
    """Fill in ``tool``'s arguments and run it (Enter in the catalog with no model)."""

    tool: ToolSpec


@dataclass
class SettingsRequested(Message):
    """``/settings``: open the settings screen."""


@dataclass
class ToolSearchOnRequested(Message):
    """``/toolsearch on``: switch tool search on for this session."""


@dataclass
class ServerReconnectRequested(Message):
    """``/mcp reconnect NAME`` or the palette's "Reconnect server NAME": reconnect server ``name``."""

    name: str


@dataclass
class ServerLoginRequested(Message):
    """``/mcp login NAME`` or the palette's "Log in to NAME": log in to remote server ``name``
    (OAuth: the browser opens), then reconnect it."""

    name: str
