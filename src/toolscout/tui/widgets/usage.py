"""Token usage: per server, tokens if every tool were inline vs tokens actually sent.

:func:`context_renderable` is shared by the Token usage panel and the ``/context`` chat command,
so both always show the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from toolscout.core.engine.context import ContextReport
from toolscout.core.tokens import MODE_WORDS

from ..text import clean

BAR_WIDTH = 16


@dataclass
class CacheStats:
    """Prompt-cache figures of the session so far (tokens, requests).

    Attributes:
        prefix_hit_ratio: share of requests whose cache prefix (system prompt + tools array)
            matched the previous request's, as the session reports it; None before any request.
    """

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    prefix_hit_ratio: float | None = None

    @property
    def prompt_tokens(self) -> int:
        """Every prompt token, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


def bar(sent: int, inline: int, scale: int, width: int = BAR_WIDTH) -> Text:
    """``█`` for tokens sent, ``░`` for tokens saved; the full bar is ``scale`` tokens wide."""
    width = max(width, 1)
    if scale <= 0 or inline <= 0:
        return Text(" " * width)
    total = max(1, round(width * inline / scale))
    used = min(total, round(width * sent / scale))
    if sent and not used:
        used = 1
    out = Text()
    out.append("█" * used, style="bold cyan")
    out.append("░" * (total - used), style="green")
    out.append(" " * (width - total))
    return out


class UsageTable:
    """Per-server usage as two lines per server, sized to the space it is given.

    Line one: server, tool count, deferred/loaded. Line two: a bar (sent ``█``, saved ``░``,
    scaled to the largest server) and ``inline → sent · saved`` in tokens.
    """

    def __init__(self, report: ContextReport) -> None:
        self.report = report

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows = self.report.rows
        width = max(options.max_width, 40)
        scale = max((r.tokens_inline for r in rows), default=0)
        numbers = [f"{r.tokens_inline:,} → {r.tokens_sent:,}" for r in rows]
        num_width = max((len(n) for n in numbers), default=0)
        saved_width = max((len(f"{r.saved:,}") for r in rows), default=0)
        bar_width = max(8, width - num_width - saved_width - 12)
        for row, figures in zip(rows, numbers, strict=True):
            name = "built-in" if row.server is None else clean(row.server, single_line=True)
            head = Text(no_wrap=True, overflow="ellipsis")
            head.append(name, style="bold")
            head.append(
                f"  {row.tools} tool{'s' if row.tools != 1 else ''} · {row.deferred} deferred · {row.loaded} loaded",
                style="dim",
            )
            yield head
            line = Text("  ", no_wrap=True, overflow="ellipsis")
            line.append_text(bar(row.tokens_sent, row.tokens_inline, scale, bar_width))
            line.append(f" {figures:>{num_width}}")
            line.append(f"  saved {row.saved:>{saved_width},}", style="green")
            yield line
        total = Text()
        report = self.report
        total.append("total", style="bold")
        share = f" ({report.saved / report.tokens_inline:.0%})" if report.tokens_inline else ""
        total.append(
            f"  {sum(r.tools for r in rows)} tools · {report.tokens_inline:,} inline → {report.tokens_sent:,} sent · "
        )
        total.append(f"saved {report.saved:,}{share}", style="bold green")
        yield Text("─" * min(width, 60), style="dim")
        yield total


def cache_renderable(cache: CacheStats | None) -> Text:
    """``cache prefix hits 75% of 4 requests · 9,000 of 12,000 prompt tokens from cache``."""
    out = Text("cache prefix hits ", style="dim")
    if cache is None or cache.prefix_hit_ratio is None:
        out.append("n/a (no model request yet)", style="dim")
        return out
    out.append(f"{cache.prefix_hit_ratio:.0%}", style="bold")
    out.append(f" of {cache.requests} request{'s' if cache.requests != 1 else ''}", style="dim")
    if cache.prompt_tokens:
        out.append(
            f" · {cache.cache_read_tokens:,} of {cache.prompt_tokens:,} prompt tokens read from cache", style="dim"
        )
    return out


def context_renderable(report: ContextReport, cache: CacheStats | None = None) -> RenderableType:
    """Servers, totals, the mode decision, cache hits, suggestions and warnings."""
    d = report.decision
    lines: list[RenderableType] = [UsageTable(report), Text("")]
    mode = Text()
    mode.append("tool search ", style="dim")
    mode.append(MODE_WORDS.get(d.mode, d.mode), style="bold")
    if d.deciding:  # auto, servers still connecting: the verdict can still change
        n = len(d.pending)
        mode.append(f" · deciding: {n} server{'s' if n != 1 else ''} connecting", style="bold yellow")
    elif d.limited:  # more tools than one request may carry: the provider's limit decided
        mode.append(" · deferral on: tool limit", style="bold yellow")
    else:
        mode.append(f" · deferral {'on' if d.defer else 'off'}", style="bold green" if d.defer else "bold yellow")
    mode.append(f" · {report.strategy} · {clean(report.model or 'default model', single_line=True)}", style="dim")
    lines.append(mode)
    lines.append(
        Text(
            f"auto threshold {d.threshold_ratio:.0%} × {d.context_window:,} = {d.threshold_tokens:,} "
            f"tokens; deferred schemas {d.deferred_schema_tokens:,} tokens",
            style="dim",
        )
    )
    if d.limit is not None and d.limit.max_tools is not None:
        verdict = "more than fit: the limit decided" if d.limited else "they fit"
        lines.append(
            Text(
                f"tool limit: {clean(d.limit.words, single_line=True)}; {d.tool_count:,} tools inline, {verdict}",
                style="bold yellow" if d.limited else "dim",
            )
        )
    lines.append(Text(clean(d.reason), style="dim italic"))
    if report.native is not None and d.defer:  # which deferral path this provider and model take
        lines.append(Text(clean(report.native.reason), style="dim italic"))
    if not d.defer and not d.deciding:  # why nothing is deferred, and how to see it
        from .welcome import mode_line

        lines.append(mode_line(d))
    lines.append(cache_renderable(cache))
    lines.append(Text(f"counted with {report.counter}", style="dim"))
    for suggestion in report.suggestions:
        lines.append(Text("→ " + clean(suggestion, single_line=True), style="cyan"))
    for grant in report.private_grants:  # what "Always allow" of WebFetch to a private host saved
        lines.append(
            Text(
                f"! private-address grant: {clean(grant['rule'], single_line=True)} lets {grant['tool']} "
                f"reach {clean(grant['host'], single_line=True)} even at a loopback, link-local or private "
                "address (remove it from permissions.allow to stop it)",
                style="bold yellow",
            )
        )
    for warning in report.warnings:
        lines.append(Text("! " + clean(warning, single_line=True), style="yellow"))
    return Group(*lines)


class UsagePanel(VerticalScroll, can_focus=True):
    """The Token usage panel (scrolls when the table is taller than the panel)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report: ContextReport | None = None
        self.cache = CacheStats()
        self._stale = False

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("counting tokens…", style="dim"), id="usage-body")

    def show_report(self, report: ContextReport) -> None:
        """Show ``report``."""
        self.report = report
        self._redraw()

    def set_cache(self, cache: CacheStats) -> None:
        """Update the session's prompt-cache figures."""
        self.cache = cache
        self._redraw()

    def _redraw(self) -> None:
        """Draw now when on screen; otherwise once it is (a hidden panel's update would still
        lay out the whole screen, once per report while servers connect)."""
        if self.report is None:
            return
        if not self.is_mounted or not self.region.area:
            self._stale = True
            return
        self._stale = False
        self.query_one("#usage-body", Static).update(context_renderable(self.report, self.cache))

    def on_mount(self) -> None:
        # Drawn after the first layout that gives it room, whatever brought it on screen. Show
        # and Resize do not always come: a region read between the tab switch and the next
        # layout (after the chat scrolled) lays the panel out early, and it kept
        # "counting tokens…" until the tab was switched again (issue 24 item 4).
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out)

    def _laid_out(self, _screen: object) -> None:
        if self._stale:
            self._redraw()
