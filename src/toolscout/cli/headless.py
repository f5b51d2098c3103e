"""Headless mode, ``toolscout -p PROMPT``: run one conversation and print the answer.

Nobody can be asked for permission here, so tools that would ask are refused with a message that
names the rule to add (``--allowed-tools NAME`` or ``permissions.allow``); those refusals, and
network tools refused a private address, are also printed to stderr. ``--output-format json`` prints the whole transcript: messages, every tool call
the model made (see :func:`tool_call_log`), search results, usage per request and cache figures.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toolscout.core.engine.facade import Engine
from toolscout.core.models import ToolErrorKind
from toolscout.core.sanitize import dumps_json
from toolscout.core.session.events import SearchResultsReady, ToolCallFinished
from toolscout.core.session.session import Session, SessionNotFound
from toolscout.core.session.transcript import result_text, tool_results, tool_uses
from toolscout.core.settings.provider_registry import OFFLINE

from . import fail
from .common import (
    check_config_paths,
    make_engine,
    print_warnings,
    provider_or_exit_code,
    run_with_engine,
    settings_from_args,
)


def run_headless(args: argparse.Namespace) -> int:
    """Run ``args.prompt`` to completion; returns the exit code (0 ok, 1 failure, 130 interrupted).

    Raises:
        UsageError: a ``--mcp-config`` or ``--catalog`` file cannot be used (said before the model is).
    """
    check_config_paths(args)
    settings = settings_from_args(args)
    provider = provider_or_exit_code(settings)
    if isinstance(provider, int):
        return provider
    if provider.name == OFFLINE:
        return fail(
            "toolscout -p needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass "
            "--provider openai --base-url URL for a local OpenAI-compatible server."
        )
    engine = make_engine(args)
    finished: dict[str, ToolCallFinished] = {}
    searches: list[dict[str, Any]] = []

    def listen(event: Any) -> None:
        if isinstance(event, ToolCallFinished):
            finished[event.call_id] = event
            if event.result.error_kind in (ToolErrorKind.PERMISSION_DENIED, ToolErrorKind.PRIVATE_HOST_REFUSED):
                print(f"toolscout: {event.result.text()}", file=sys.stderr)
        elif isinstance(event, SearchResultsReady):
            searches.append(
                {
                    "id": event.call_id,
                    "query": event.query,
                    "loaded": list(event.loaded),
                    "result": event.result.to_json() if event.result is not None else None,
                }
            )

    async def body(engine: Engine) -> int:
        try:
            if args.resume is not None:
                session = Session.resume(
                    engine, args.resume or None, provider=provider, strategy=getattr(args, "strategy", None)
                )
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
            print(
                dumps_json(
                    {
                        "session_id": session.id,
                        "strategy": session.strategy,
                        "provider": provider.name,
                        "model": provider.model,
                        "result": outcome.text,
                        "error": outcome.error,
                        "cancelled": outcome.cancelled,
                        "stop_reason": outcome.stop_reason,
                        "messages": session.messages,
                        "tool_calls": tool_call_log(session.messages, finished),
                        "searches": searches,
                        "usage": [_usage(u) for u in session.usage_log],
                        "cache": session.cache_stats(),
                    },
                    indent=2,
                )
            )
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


#: ``outcome`` of a call by the kind of error it ended with.
_OUTCOMES = {
    ToolErrorKind.INVALID_PARAMS: "invalid",
    ToolErrorKind.PERMISSION_DENIED: "denied",
    ToolErrorKind.UNKNOWN_TOOL: "rejected",
    ToolErrorKind.DISABLED: "rejected",
    ToolErrorKind.NOT_LOADED: "rejected",
    ToolErrorKind.CANCELLED: "cancelled",
    ToolErrorKind.PRIVATE_HOST_REFUSED: "refused",
}


def tool_call_log(messages: list[dict[str, Any]], finished: dict[str, ToolCallFinished]) -> list[dict[str, Any]]:
    """Every ``tool_use`` block of the transcript, in order, with what became of it.

    Built from the transcript itself (so a call is listed even if nothing ran it) and completed
    from the call's :class:`ToolCallFinished` event when there is one.

    Returns:
        One dict per call: ``id``; ``name`` and ``arguments`` exactly as the model sent them
        (``ExecuteTool``, ``ToolSearch`` or a direct tool); ``tool`` and ``params``, the real
        target and its arguments; ``via``; ``outcome``: ``ok`` | ``error`` | ``invalid`` |
        ``denied`` | ``refused`` (a private address) | ``rejected`` (unknown, disabled, not
        loaded) | ``cancelled`` |
        ``unanswered`` (no result in the transcript); ``is_error``, ``error_kind``, ``output``
        (the text the model got back) and ``duration_ms``.
    """
    results = tool_results(messages)
    log: list[dict[str, Any]] = []
    for block in tool_uses(messages):
        name, arguments, call_id = block.get("name"), block.get("input"), str(block.get("id"))
        event, answer = finished.get(call_id), results.get(call_id)
        entry: dict[str, Any] = {"id": block.get("id"), "name": name, "arguments": arguments}
        if event is not None:
            r = event.result
            outcome = (_OUTCOMES.get(r.error_kind, "error") if r.error_kind else "error") if r.is_error else "ok"
            entry.update(
                tool=event.tool_name,
                params=event.params,
                via=event.via,
                outcome=outcome,
                is_error=r.is_error,
                error_kind=r.error_kind.value if r.error_kind else None,
                duration_ms=round(r.duration_ms, 1),
            )
        else:  # ToolSearch, or a call nothing ran
            entry.update(
                tool=name,
                params=arguments,
                via="direct",
                outcome="unanswered" if answer is None else ("error" if answer.get("is_error") else "ok"),
                is_error=bool(answer and answer.get("is_error")),
                error_kind=None,
                duration_ms=None,
            )
        entry["output"] = _text(answer)
        log.append(entry)
    return log


def _text(answer: dict[str, Any] | None) -> str | None:
    return None if answer is None else result_text(answer.get("content"))
