"""A question answered "still connecting" is searched again once its servers are up (issue 24
item 3).

Offline, the person's message is a ToolSearch. Sent while servers still connect (right after
launch, typed before the app was up), it is answered from the servers connected so far and says
"still connecting: …"; the tools the person asked for may be on a server that connects a moment
later, and the question stayed unanswered. :class:`SearchAgain` remembers the newest such
question and, once every server it waited for has settled and one of them connected, says which
question to run again: once, and only while it is still the person's latest (a newer message, or
a tool run in between, drops it). The main screen says so in the chat and sends it again.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolscout.core.models import ServerState, ServerStatus


class SearchAgain:
    """The newest question answered while servers connected, until it is searched again."""

    def __init__(self) -> None:
        self._question: str | None = None
        self._waiting: frozenset[str] = frozenset()
        #: the question being sent again (its turn shows no second copy of it)
        self.repeating: str | None = None

    def searched(self, question: str, pending: Iterable[str]) -> None:
        """``question`` was searched; ``pending``: the servers it said are still connecting. A
        question searched again is not remembered a second time (once)."""
        waiting = frozenset(pending)
        if question == self.repeating or not waiting:
            self._question, self._waiting = None, frozenset()
            return
        self._question, self._waiting = question, waiting

    def moved_on(self, text: str | None = None) -> None:
        """The person sent ``text`` (or ran a tool, ``None``): an older question is not run again."""
        if text is None or text != self.repeating:
            self._question, self._waiting = None, frozenset()
            self.repeating = None

    def due(self, statuses: dict[str, ServerStatus]) -> tuple[str, list[str]] | None:
        """The question to search again now and the servers it waited for that connected, given
        every server's status: once every one of them has settled and one connected; None
        otherwise (or when there is none)."""
        if self._question is None:
            return None
        known = {name: statuses[name].state for name in sorted(self._waiting) if name in statuses}
        if any(state is ServerState.CONNECTING for state in known.values()):
            return None
        question, self._question, self._waiting = self._question, None, frozenset()
        connected = [name for name, state in known.items() if state is ServerState.CONNECTED]
        if not connected:
            return None  # they failed: nothing new to find
        self.repeating = question
        return question, connected
