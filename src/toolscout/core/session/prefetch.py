"""Prefetch: recommend deferred tools from the recent conversation, without delaying anything.

After each assistant response (and, with ``recommendations.onFirstMessage``, on the first user
message) the session starts a background search over the deferred tools with text from the
last messages. It keeps at most ``recommendations.max`` tools scoring at least
``recommendations.minScore`` that were neither recommended nor discovered before, emits them as
:class:`RecommendationsReady`, and leaves them for the next request's ``tool_discovery``
reminder. Requests never wait for it; a prefetch still running when a new turn starts is
cancelled (its text is stale). ``recommendations.enabled = false`` turns all of it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..models import ToolSpec
from .events import Recommendation, RecommendationsReady

if TYPE_CHECKING:
    from ..engine.facade import Engine
    from ..search.results import ScoredTool
    from ..settings.layers import Settings

#: The remembered-recommendations set is trimmed from this size ...
SEEN_LIMIT = 500
#: ... down to this many most recent names.
SEEN_KEEP = 400
#: Characters of conversation text used as the query (the newest text wins).
QUERY_CHARS = 2000

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def query_text(messages: list[dict[str, Any]], limit: int = QUERY_CHARS) -> str:
    """Text of the last user and assistant messages (reminders and tool output left out)."""
    parts: list[str] = []
    roles_seen: set[str] = set()
    for message in reversed(messages):
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        text = " ".join(
            _REMINDER.sub(" ", b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
        ).strip()
        if text and role not in roles_seen:
            parts.append(text)
            roles_seen.add(str(role))
        if roles_seen >= {"user", "assistant"}:
            break
    return " ".join(reversed(parts))[-limit:]


class Prefetcher:
    """Owns the one background recommendation task of a session.

    Args:
        engine: ranks the deferred tools (:meth:`~toolscout.core.engine.facade.Engine.rank`).
        settings: ``recommendations.*`` values.
        is_deferred: ``callable(tool) -> bool`` for the session's projection.
        emit: delivers :class:`RecommendationsReady`.
    """

    def __init__(
        self, engine: Engine, settings: Settings, is_deferred: Callable[[ToolSpec], bool], emit: Callable[[Any], None]
    ) -> None:
        self.engine = engine
        self.apply_settings(settings)
        self.is_deferred = is_deferred
        self.emit = emit
        self.seen: dict[str, None] = {}
        self.pending: list[Recommendation] = []
        self.latest: list[Recommendation] = []
        self._task: asyncio.Task[None] | None = None

    def apply_settings(self, settings: Settings) -> None:
        """Take the ``recommendations.*`` values of ``settings`` (used from the next prefetch)."""
        self.enabled = bool(settings["recommendations.enabled"])
        self.on_first_message = bool(settings["recommendations.onFirstMessage"])
        self.max = int(settings["recommendations.max"])
        self.min_score = float(settings["recommendations.minScore"])

    def remember(self, names: Iterable[str]) -> None:
        """Mark names as already recommended/discovered (bounded: trimmed 500 → 400)."""
        for name in names:
            self.seen.pop(name, None)
            self.seen[name] = None
        if len(self.seen) > SEEN_LIMIT:
            for name in list(self.seen)[: len(self.seen) - SEEN_KEEP]:
                del self.seen[name]

    def start(self, text: str, turn: int, exclude: Iterable[str] = ()) -> None:
        """Start a background prefetch for ``text`` (cancelling any running one)."""
        self.cancel()
        if not self.enabled or not text.strip():
            return
        self._task = asyncio.get_running_loop().create_task(self._run(text, turn, set(exclude)))

    def cancel(self) -> None:
        """Cancel a running prefetch (a new turn makes it stale)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def wait(self) -> None:
        """Wait for the running prefetch, if any (tests and the offline driver use it)."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def take(self) -> list[Recommendation]:
        """Recommendations not yet sent to the model (clears them)."""
        out, self.pending = self.pending, []
        return out

    def rank(self, text: str, limit: int) -> list[ScoredTool]:
        """Scored hits for ``text`` over the deferred index (:meth:`Engine.rank
        <toolscout.core.engine.facade.Engine.rank>`)."""
        return self.engine.rank(text, limit)

    async def _run(self, text: str, turn: int, exclude: set[str]) -> None:
        await asyncio.sleep(0)  # yield first: the caller is about to send a request
        hits = self.rank(text, max(self.max * 4, 10))
        picked: list[Recommendation] = []
        for hit in hits:
            tool = hit.tool
            if (
                hit.score < self.min_score
                or tool.name in self.seen
                or tool.name in exclude
                or not self.is_deferred(tool)
            ):
                continue
            picked.append(Recommendation(tool.name, tool.server, float(hit.score), tool.description, tool.input_schema))
            if len(picked) >= self.max:
                break
        if not picked:
            return
        self.remember(r.name for r in picked)
        self.pending = [*self.pending, *picked][-self.max * 2 :]
        self.latest = picked
        self.emit(RecommendationsReady(tuple(picked), text, turn))
