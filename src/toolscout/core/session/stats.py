"""Cache-stability accounting: prefix hash per request, hit ratio, and what loading tools cost.

The *stable prefix* is the system prompt plus the tools array (what a prompt cache can reuse
from one request to the next). A request whose prefix hash equals the previous request's is a
prefix hit; the first request of a session is a miss by definition. "Load tokens" are the tokens
of tool-loading text (ToolSearch results, self-healing definitions) first sent in a request:
uncached input that deferral costs instead of sending every schema up front.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ..tokens import TokenCounter, default_counter
from .events import UsageReported


class CacheMeter:
    """Per-session counters. ``measure`` before each request, ``report`` after its response."""

    def __init__(self, counter: TokenCounter | None = None) -> None:
        self.requests = 0
        self.hits = 0
        self.log: list[UsageReported] = []
        self._last: str | None = None
        self._hit = False
        self._load_tokens = 0
        self._counter = counter

    def measure(self, prefix_hash: str, new_load_texts: list[str]) -> None:
        """Record the prefix of the request about to be sent and the load text it first carries."""
        self.requests += 1
        self._hit = prefix_hash == self._last
        self.hits += int(self._hit)
        self._last = prefix_hash
        counter = self._counter or default_counter()
        self._load_tokens = sum(counter.count(t) for t in new_load_texts)

    def report(self, turn: int, usage: Any) -> UsageReported:
        """The usage event for the request last measured (``usage``: a providers ``Usage``)."""
        event = UsageReported(
            turn,
            self.requests,
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_creation_tokens,
            self._last or "",
            self._hit,
            self.ratio,
            self._load_tokens,
        )
        self.log.append(event)
        return event

    @property
    def ratio(self) -> float:
        """Share of requests whose prefix matched the previous request's (0 when none)."""
        return self.hits / self.requests if self.requests else 0.0

    def totals(self) -> dict[str, Any]:
        """Session totals (tokens) and the prefix-hit figures."""
        return {
            "requests": self.requests,
            "prefix_hits": self.hits,
            "prefix_hit_ratio": self.ratio,
            "input_tokens": sum(x.input_tokens for x in self.log),
            "cache_read_tokens": sum(x.cache_read_tokens for x in self.log),
            "cache_creation_tokens": sum(x.cache_creation_tokens for x in self.log),
            "output_tokens": sum(x.output_tokens for x in self.log),
            "load_tokens": sum(x.load_tokens for x in self.log),
        }


def usage_record(event: UsageReported) -> dict[str, Any]:
    """The transcript record of one usage event."""
    return {"type": "usage", **{f.name: getattr(event, f.name) for f in fields(event)}}
