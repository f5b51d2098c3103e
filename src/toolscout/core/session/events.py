"""Plain events a :class:`~toolscout.core.session.session.Session` emits (past-tense facts).

Delivered synchronously on the session's event loop to every subscriber; the TUI turns them into
Textual messages, headless mode prints them. Tool events always carry the *real* tool name and
arguments (never ``ExecuteTool``); ``via`` says how the model reached the tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.events import Event
from ..models import ToolResult
from ..search.results import SearchResult


@dataclass(frozen=True)
class UserMessageAdded(Event):
    """The person sent a message (the turn starts)."""

    text: str
    turn: int


@dataclass(frozen=True)
class AssistantTextDelta(Event):
    """A streamed piece of assistant text. Coalescable: consecutive deltas may be joined
    (``text`` concatenated) by a UI that cannot keep up."""

    text: str
    turn: int
    coalescable: bool = True


@dataclass(frozen=True)
class AssistantMessageDone(Event):
    """One model response is complete: its full text and the tool calls it asked for."""

    text: str
    tool_calls: int
    turn: int
    stop_reason: str | None = None


@dataclass(frozen=True)
class ToolCallStarted(Event):
    """A tool call began.

    Attributes:
        call_id: the ``tool_use`` id. tool_name: the real tool (``mcp__github__create_issue``).
        params: the real arguments. via: ``direct`` | ``ExecuteTool`` | ``ToolSearch``.
    """

    call_id: str
    tool_name: str
    params: dict[str, Any]
    via: str = "direct"


@dataclass(frozen=True)
class ToolCallFinished(Event):
    """A tool call ended (successfully, with an error, denied or cancelled)."""

    call_id: str
    tool_name: str
    params: dict[str, Any]
    result: ToolResult
    via: str = "direct"


@dataclass(frozen=True)
class SearchResultsReady(Event):
    """A ToolSearch call was answered. ``text`` is exactly what the model received."""

    call_id: str
    query: str
    result: SearchResult | None
    text: str
    loaded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recommendation:
    """One recommended deferred tool: name, server (None for built-ins), score in [0, 1], summary."""

    name: str
    server: str | None
    score: float
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecommendationsReady(Event):
    """Prefetch found deferred tools likely to help (shown in the UI; sent to the model next)."""

    tools: tuple[Recommendation, ...]
    query: str
    turn: int


@dataclass(frozen=True)
class AnnouncementSent(Event):
    """Deferred tools were announced to the model (``full`` list or an added/removed delta)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    full: bool


@dataclass(frozen=True)
class ToolSearchSwitched(Event):
    """Auto mode switched from inline to deferral mid-session (the one announced prompt-cache
    break): ``notice`` is for people (chat), ``reason`` the new mode decision's reason."""

    notice: str
    reason: str
    turn: int


@dataclass(frozen=True)
class UsageReported(Event):
    """Token usage and cache stability of one model request. All counts in tokens.

    Attributes:
        input_tokens: uncached input tokens. cache_read_tokens / cache_creation_tokens: as the
            provider reported them (0 when it reports nothing). output_tokens: generated tokens.
        prefix_hash: sha256 (first 16 hex) of system prompt + tools array bytes.
        prefix_hit: the hash equals the previous request's. hit_ratio: share of requests in the
            session whose prefix matched the previous one (the first request counts as a miss).
        load_tokens: tokens of tool-loading text (ToolSearch results) added since the last request.
    """

    turn: int
    request: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    prefix_hash: str
    prefix_hit: bool
    hit_ratio: float
    load_tokens: int = 0


@dataclass(frozen=True)
class TurnFinished(Event):
    """The turn ended normally; ``text`` is the final assistant answer."""

    turn: int
    text: str
    stop_reason: str | None = None


@dataclass(frozen=True)
class TurnCancelled(Event):
    """The turn was interrupted; unfinished tool calls got "cancelled" results."""

    turn: int


@dataclass(frozen=True)
class SessionError(Event):
    """Something stopped the turn (provider unreachable, bad key ...); ``message`` is for people."""

    message: str
    kind: str = "error"
