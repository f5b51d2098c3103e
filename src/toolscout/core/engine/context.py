"""The ``/context`` report: per-server token usage, the mode decision, suggestions and warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..catalog.registry import ALWAYS_CORE, ToolCatalog
from ..models import ToolSpec
from ..rules.match import server_rule
from ..rules.specs import parse_rule, private_grant_host
from ..settings.layers import Settings
from ..tokens import (
    MODE_SETTING,
    ModeDecision,
    ServerUsage,
    TokenCounter,
    ToolLimit,
    context_window,
    decide_mode,
    default_counter,
    tool_tokens,
    usage_by_server,
)
from .native_choice import NativeChoice, choose


@dataclass
class ContextReport:
    """Token usage of a catalog under the current settings. All figures in tokens.

    Attributes:
        rows: one :class:`ServerUsage` per server (None = built-ins), catalog order.
        decision: the explained mode decision.
        strategy: ``execute-proxy`` or ``stub``.
        counter: which token counter produced the numbers.
        model: the model the window was taken for.
        suggestions: plain-language hints (e.g. always-load a server that is always used).
        warnings: settings and catalog warnings, as text.
        states: server name → ``(state, reason)`` for every known server (connected, connecting,
            failed, disconnected); servers without tools (still connecting, failed) get a row of
            their own in :meth:`to_json`.
        private_grants: allow rules that let a network built-in reach their host even where it is
            a loopback, link-local or private address (:func:`private_grants`), each
            ``{"rule", "tool", "host"}``.
    """

    rows: list[ServerUsage]
    decision: ModeDecision
    strategy: str
    counter: str
    model: str | None
    suggestions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    states: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: the deferral path for the provider the report was made for (None: no provider given)
    native: NativeChoice | None = None
    private_grants: list[dict[str, str]] = field(default_factory=list)

    @property
    def tokens_inline(self) -> int:
        """Tokens if every tool were sent in full."""
        return sum(r.tokens_inline for r in self.rows)

    @property
    def tokens_sent(self) -> int:
        """Tokens actually sent for tool definitions and announcements."""
        return sum(r.tokens_sent for r in self.rows)

    @property
    def saved(self) -> int:
        """Tokens saved by deferral."""
        return self.tokens_inline - self.tokens_sent

    def server_rows(self) -> list[dict[str, Any]]:
        """One JSON row per server: built-ins first (``server`` null), then every known server
        sorted by configured name (case-insensitive), those without tools included, each with
        its ``state`` and ``reason`` (the failure, or null)."""
        by_name = {r.server: r for r in self.rows}
        names = sorted(
            {*(r.server for r in self.rows if r.server is not None), *self.states}, key=lambda n: (n.casefold(), n)
        )
        out = []
        for name in [None, *names] if None in by_name else names:
            r = by_name.get(name) or ServerUsage(name)
            state, reason = self.states.get(name, ("connected", None)) if name else ("builtin", None)
            out.append(
                {
                    "server": r.server if name is None else name,
                    "state": state,
                    "reason": reason,
                    "tools": r.tools,
                    "deferred": r.deferred,
                    "loaded": r.loaded,
                    "tokens_inline": r.tokens_inline,
                    "tokens_sent": r.tokens_sent,
                    "saved": r.saved,
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """Stable JSON of ``toolscout context --json``. ``mode.mode`` is the internal name
        (``tst``, ``tst-auto``, ``standard``); ``mode.tool_search`` the UI's word for it
        (``on``, ``auto``, ``off``: :data:`~toolscout.core.tokens.MODE_SETTING`); ``mode.defer``
        whether tools are deferred now."""
        d = self.decision
        return {
            "model": self.model,
            "counter": self.counter,
            "strategy": self.strategy,
            "mode": {
                "mode": d.mode,
                "tool_search": MODE_SETTING.get(d.mode, d.mode),
                "defer": d.defer,
                "deferred_schema_tokens": d.deferred_schema_tokens,
                "context_window": d.context_window,
                "threshold_ratio": d.threshold_ratio,
                "threshold_tokens": d.threshold_tokens,
                "reason": d.reason,
                "deciding": d.deciding,
                "estimated_tokens": d.estimated_tokens,
                "unknown_size": list(d.unknown),
                "tool_limit": d.limit.to_json(d.tool_count, d.limited) if d.limit else None,
            },
            "pending": list(d.pending),
            "servers": self.server_rows(),
            "total": {"tokens_inline": self.tokens_inline, "tokens_sent": self.tokens_sent, "saved": self.saved},
            "suggestions": self.suggestions,
            "warnings": self.warnings,
            "native": None if self.native is None else {"native": self.native.native, "reason": self.native.reason},
            "private_grants": self.private_grants,
        }


def build_context_report(
    catalog: ToolCatalog,
    settings: Settings,
    *,
    model: str | None = None,
    strategy: str | None = None,
    loaded_names: set[str] | None = None,
    usage_counts: dict[str, int] | None = None,
    counter: TokenCounter | None = None,
    pending: dict[str, int | None] | None = None,
    tool_limit: ToolLimit | None = None,
    provider: str | None = None,
    base_url: str | None = None,
) -> ContextReport:
    """Compute the report for ``catalog`` under ``settings``.

    Args:
        loaded_names: deferred tools a search has loaded this session.
        usage_counts: tool name → calls this session; servers whose tools are called in most
            turns are suggested for ``alwaysLoad``.
        pending: servers still connecting → last known schema tokens (None: unknown), counted
            by the auto decision (:func:`~toolscout.core.tokens.decide_mode`).
        tool_limit: the most tools one request to the session's provider may carry
            (:func:`toolscout.core.session.providers.limits.tool_limit`); None: no limit known.
            Past it auto mode defers, and ``off`` keeps inline only what fits (:func:`inline_fit`).
        provider, base_url: the session's provider (``anthropic`` …) and endpoint: the report
            then says whether it defers natively (:func:`.native_choice.choose`).
    """
    counter = counter or default_counter()
    model = model or settings.get("provider.model")
    strategy = strategy or settings["session.strategy"]
    tools = catalog.tools()
    deferrable = [t for t in tools if catalog.is_deferred(t)]
    deferred_tokens = sum(tool_tokens(t, counter) for t in deferrable)
    window = context_window(model, settings.get("provider.contextWindow"))
    inline_count = sum(1 for t in tools if t.name not in ALWAYS_CORE)
    decision = decide_mode(
        settings.mode,
        deferred_tokens,
        window,
        settings["toolSearch.thresholdRatio"],
        pending,
        tool_count=inline_count,
        limit=tool_limit,
    )
    max_tools = tool_limit.max_tools if tool_limit else None
    fit = inline_fit(catalog, max_tools) if decision.mode == "standard" and decision.limited else []
    rows = usage_by_server(
        tools,
        catalog.is_deferred,
        strategy=strategy,
        defer=decision.defer,
        loaded_names={*(loaded_names or ()), *(t.name for t in fit)},
        counter=counter,
        max_tools=max_tools,
    )
    suggestions = _suggest(rows, usage_counts or {}, catalog)
    warnings = [str(w) for w in settings.warnings]
    if decision.mode == "standard" and decision.limited:
        warnings.append(decision.reason)
    native = choose(str(settings["toolSearch.native"]), provider, model, base_url) if provider else None
    return ContextReport(
        rows,
        decision,
        strategy,
        counter.name,
        model,
        suggestions,
        warnings,
        native=native,
        private_grants=private_grants(settings["permissions.allow"]),
    )


def private_grants(allow: list[str]) -> list[dict[str, str]]:
    """The allow rules that lift the private-address guard of network built-ins for a host
    (:func:`~toolscout.core.rules.specs.private_grant_host`, such as the rule "Always allow"
    saves for ``WebFetch`` to ``localhost``): each ``{"rule", "tool", "host"}``, in rule order."""
    out = []
    for rule in dict.fromkeys(allow):
        host = private_grant_host(rule)
        if host is not None:
            out.append({"rule": rule, "tool": parse_rule(rule).name, "host": host})
    return out


def inline_fit(catalog: ToolCatalog, max_tools: int | None) -> list[ToolSpec]:
    """The deferrable tools that fit inline, in catalog order, beside the tools a deferred
    request always carries (core, always-load, ToolSearch, ExecuteTool), when
    ``toolSearch.enabled`` is off but more tools exist than ``max_tools`` lets one request
    carry: the first ones, as Cursor sends the first tools of a catalog too large for it (the
    rest stay reachable through ToolSearch and ExecuteTool). Every deferrable tool if no limit."""
    deferrable = [t for t in catalog.tools() if catalog.is_deferred(t)]
    if max_tools is None:
        return deferrable
    return deferrable[: max(max_tools - len(catalog.loaded_tools()), 0)]


def _suggest(rows: list[ServerUsage], usage: dict[str, int], catalog: ToolCatalog) -> list[str]:
    out: list[str] = []
    for row in rows:
        if row.server is None:
            continue
        calls = sum(n for name, n in usage.items() if (t := catalog.get(name)) and t.server == row.server)
        if calls >= 3 and row.tokens_inline < 2_000:
            out.append(
                f"{row.server}: used {calls} times this session and costs only {row.tokens_inline:,} tokens "
                f'inline; consider "toolSearch.alwaysLoad": ["{server_rule(row.server)}"]'
            )
    big = max((r for r in rows if r.server), key=lambda r: r.tokens_inline, default=None)
    if big and big.tokens_inline > 10_000 and not usage:
        out.append(
            f"{big.server} is the largest server ({big.tokens_inline:,} tokens inline): deferral saves the most there"
        )
    return out
