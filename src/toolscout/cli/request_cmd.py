"""``toolscout request --json``: print the exact body of a session's first model request.

Shows what deferred loading sends: the system prompt, the tools array (execute-proxy: core tools
plus ToolSearch and ExecuteTool; stub: plus one stub per deferred tool) and the first user message
with its announcement reminder. The body is the one the configured provider would send
(Anthropic format when offline).
"""

from __future__ import annotations

import argparse

from toolscout.core.engine.facade import Engine
from toolscout.core.sanitize import dumps_json
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import choices

from .common import (
    add_config_options,
    add_trust_flag,
    make_engine,
    print_warnings,
    provider_or_exit_code,
    run_with_engine,
    settings_from_args,
)
from .context_cmd import add_tool_search_flag, note_if_inline


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``request`` subcommand."""
    p = sub.add_parser("request", help="print the exact first-turn request body (system, tools, announcements)")
    add_config_options(p)
    p.add_argument("--strategy", choices=choices("session.strategy"), help="request projection")
    p.add_argument("--prompt", default="(your first message)", help="text of the first user message")
    p.add_argument("--json", action="store_true", help="print JSON (the default and only format)")
    add_tool_search_flag(p)
    add_trust_flag(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    provider = provider_or_exit_code(settings)
    if isinstance(provider, int):
        return provider
    engine = make_engine(args)

    async def body(engine: Engine) -> int:
        session = Session(engine, provider=provider, persist=False)
        print(dumps_json(session.request_body(args.prompt), indent=2))
        note_if_inline(session.mode_decision)
        return 0

    code = run_with_engine(engine, body, needs_a_catalog=True)
    print_warnings(engine)
    return code
