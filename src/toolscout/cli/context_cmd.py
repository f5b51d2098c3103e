"""``toolscout context``: per-server token usage and the tool-search mode decision."""

from __future__ import annotations

import argparse
import sys

from toolscout.core.engine.context import ContextReport
from toolscout.core.engine.facade import Engine
from toolscout.core.sanitize import dumps_json
from toolscout.core.session.providers import provider_of
from toolscout.core.settings.layers import choices
from toolscout.core.tokens import MODE_WORDS, ModeDecision, ToolLimit

from .common import add_config_options, add_trust_flag, make_engine, print_warnings, run_with_engine


def add_tool_search_flag(p: argparse.ArgumentParser) -> None:
    """``--tool-search auto|true|false``: ``toolSearch.enabled`` for this run."""
    p.add_argument(
        "--tool-search",
        choices=choices("toolSearch.enabled"),
        help="tool search for this run: true always defers, false never, auto by threshold",
    )


def note_if_inline(decision: ModeDecision | None) -> None:
    """One stderr line when tool search is off (why, and how to switch it on); nothing otherwise.
    The output of ``context`` and ``request`` depends on that decision, and stdout stays clean."""
    if decision is not None and not decision.defer:
        print(
            f"note: {decision.summary}; to see deferral pass --tool-search true "
            "(or set toolSearch.enabled: true, env TOOLSCOUT_TOOL_SEARCH=true)",
            file=sys.stderr,
        )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``context`` subcommand."""
    p = sub.add_parser("context", help="token cost per server and the tool-search mode decision")
    add_config_options(p)
    p.add_argument("--model", help="model whose context window decides auto mode")
    p.add_argument("--strategy", choices=choices("session.strategy"), help="request projection")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_tool_search_flag(p)
    add_trust_flag(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    engine = make_engine(args)

    async def body(engine: Engine) -> int:
        name, base_url = provider_of(engine.settings)
        provider = None if name == "offline" else name
        model = args.model or engine.settings.get("provider.model") or default_model(name)
        report = engine.context_report(
            model=model, strategy=args.strategy, tool_limit=provider_limit(engine), provider=provider, base_url=base_url
        )
        print(dumps_json(report.to_json(), indent=2) if args.json else format_report(report))
        note_if_inline(report.decision)
        return 0

    code = run_with_engine(engine, body, needs_a_catalog=True)
    if not args.json:
        print_warnings(engine)
    return code


def provider_limit(engine: Engine) -> ToolLimit:
    """The tool limit of the provider a session would use now (``--provider``, the keys set,
    ``provider.maxTools``), without building the provider."""
    from toolscout.core.session.providers import provider_name
    from toolscout.core.session.providers.limits import tool_limit

    return tool_limit(provider_name(engine.settings), engine.settings)


def default_model(provider: str) -> str | None:
    """The model ``provider`` uses when none is configured (what its session would send)."""
    from toolscout.core.session.providers.anthropic_provider import DEFAULT_MODEL as ANTHROPIC
    from toolscout.core.session.providers.openai_provider import DEFAULT_MODEL as OPENAI

    return {"anthropic": ANTHROPIC, "openai": OPENAI}.get(provider)


def format_report(report: ContextReport) -> str:
    """Plain-text table of a context report."""
    head = f"{'server':<28} {'tools':>5} {'defer':>5} {'load':>5} {'inline':>9} {'sent':>8} {'saved':>9}"
    lines = [f"token counter: {report.counter}   strategy: {report.strategy}", head, "-" * len(head)]
    for r in report.rows:
        name = r.server or "(built-in)"
        lines.append(
            f"{name[:28]:<28} {r.tools:>5} {r.deferred:>5} {r.loaded:>5} "
            f"{r.tokens_inline:>9,} {r.tokens_sent:>8,} {r.saved:>9,}"
        )
    lines.append("-" * len(head))
    pct = 100 * report.saved / report.tokens_inline if report.tokens_inline else 0.0
    lines.append(
        f"{'total':<28} {sum(r.tools for r in report.rows):>5} "
        f"{sum(r.deferred for r in report.rows):>5} {sum(r.loaded for r in report.rows):>5} "
        f"{report.tokens_inline:>9,} {report.tokens_sent:>8,} {report.saved:>9,}  ({pct:.1f}% saved)"
    )
    for name, (state, reason) in sorted(report.states.items(), key=lambda kv: kv[0].casefold()):
        if state != "connected" or not any(r.server == name for r in report.rows):
            lines.append(f"{name[:28]:<28} {state}" + (f": {reason}" if reason else ""))
    words = MODE_WORDS.get(report.decision.mode, report.decision.mode)
    lines.append(f"tool search: {words} — {report.decision.reason}")
    d = report.decision
    if d.limit is not None and d.limit.max_tools is not None:
        verdict = "more than fit, so the limit decided" if d.limited else "within it"
        lines.append(f"tool limit: {d.limit.words}; {d.tool_count:,} tools inline would be {verdict}")
    if report.native is not None and report.decision.defer:
        lines.append(f"deferral path: {report.native.reason}")
    lines.extend(f"suggestion: {s}" for s in report.suggestions)
    lines.extend(
        f"private-address grant: {g['rule']} lets {g['tool']} reach {g['host']} even at a loopback, "
        "link-local or private address (remove the rule from permissions.allow to stop it)"
        for g in report.private_grants
    )
    return "\n".join(lines)
