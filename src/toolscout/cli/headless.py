"""Headless mode, ``toolscout -p PROMPT``: run one conversation and print the answer.

Nobody can be asked for permission here, so tools that would ask are refused with a message that
names the rule to add (``--allowed-tools NAME`` or ``permissions.allow``); those refusals are also
printed to stderr. ``--output-format json`` prints the whole transcript: messages, tool calls with
real names and arguments, search results, usage per request and cache figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..core.engine import Engine
from ..core.models import ToolErrorKind
from ..core.session.events import SearchResultsReady, ToolCallFinished
from ..core.session.providers import ProviderError, create_provider
from ..core.session.session import Session, SessionNotFound
from . import fail
from .common import make_engine, print_warnings, run_with_engine, settings_from_args


def run_headless(args: argparse.Namespace) -> int:
    """Run ``args.prompt`` to completion; returns the exit code (0 ok, 1 failure, 130 interrupted)."""
    settings = settings_from_args(args)
    try:
        provider = create_provider(settings)
    except ProviderError as exc:
        return fail(str(exc))
    if provider.name == "offline":
        return fail("toolscout -p needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass "
                    "--provider openai --base-url URL for a local OpenAI-compatible server.")
    engine = make_engine(args)
    calls: list[dict[str, Any]] = []
    searches: list[dict[str, Any]] = []

    def listen(event: Any) -> None:
        if isinstance(event, ToolCallFinished):
            r = event.result
            calls.append({"id": event.call_id, "tool": event.tool_name, "params": event.params, "via": event.via,
                          "is_error": r.is_error, "error_kind": r.error_kind.value if r.error_kind else None,
                          "output": r.text(), "duration_ms": round(r.duration_ms, 1)})
            if r.error_kind is ToolErrorKind.PERMISSION_DENIED:
                print(f"toolscout: {r.text()}", file=sys.stderr)
        elif isinstance(event, SearchResultsReady):
            searches.append({"id": event.call_id, "query": event.query, "loaded": list(event.loaded),
                             "result": event.result.to_json() if event.result is not None else None})

    async def body(engine: Engine) -> int:
        try:
            if args.resume is not None:
                session = Session.resume(engine, args.resume or None, provider=provider,
                                         strategy=getattr(args, "strategy", None))
            else:
                session = Session(engine, provider=provider)
        except SessionNotFound as exc:
            return fail(str(exc))
        session.subscribe(listen)
        try:
            outcome = await session.send(args.prompt)
        finally:
            await session.close()
        if args.output_format == "json":
            print(json.dumps({
                "session_id": session.id, "strategy": session.strategy, "provider": provider.name,
                "model": provider.model, "result": outcome.text, "error": outcome.error,
                "cancelled": outcome.cancelled, "stop_reason": outcome.stop_reason,
                "messages": session.messages, "tool_calls": calls, "searches": searches,
                "usage": [_usage(u) for u in session.usage_log], "cache": session.cache_stats(),
            }, ensure_ascii=False, indent=2))
        elif outcome.text:
            print(outcome.text)
        if outcome.error:
            return fail(outcome.error)
        return 130 if outcome.cancelled else 0

    try:
        code = run_with_engine(engine, body)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    print_warnings(engine)
    return code


def _usage(event: Any) -> dict[str, Any]:
    return {k: getattr(event, k) for k in event.__dataclass_fields__}
