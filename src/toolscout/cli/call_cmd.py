"""``toolscout call TOOL --params JSON``: run one tool through the proxy (the ExecuteTool path).

Headless: tools that would ask for permission are refused unless ``--allowed-tools`` (or a
``permissions.allow`` rule) allows them. Exit status 0 on success, 1 when the result is an
error (the message goes to stderr), 2 for usage errors. While an MCP tool runs, the progress its
server reports is drawn on stderr when stderr is a terminal (one line, erased at the end).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from toolscout.core.engine.facade import Engine
from toolscout.core.models import ToolResult
from toolscout.core.sanitize import dumps_json

from .common import add_server_options, add_trust_flag, make_engine, print_warnings, run_with_engine
from .progress import call_progress

if TYPE_CHECKING:
    from toolscout.core.mcp.server_config import ServerConfig


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``call`` subcommand."""
    p = sub.add_parser("call", help="run one tool (built-in or MCP) through the proxy and print the result")
    p.add_argument("tool", help="canonical tool name, e.g. mcp__time__get_current_time or Read")
    p.add_argument("--params", default="{}", help="arguments as a JSON object (default {})")
    add_server_options(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_trust_flag(p)
    p.set_defaults(func=_run)


def servers_for(tool: str, servers: list[ServerConfig]) -> list[ServerConfig]:
    """Only the servers a call to ``tool`` can need: the one named in ``mcp__<server>__...``, none
    for a built-in, all of them otherwise (a bare name is looked up across servers)."""
    from toolscout.core.builtins.registry import builtin_tools
    from toolscout.core.names import normalise_server_name, split_mcp_name

    parts = split_mcp_name(tool)
    if parts is not None:
        named = [s for s in servers if parts[0] in (s.name, s.configured_name)]
        wanted = normalise_server_name(parts[0])
        named = named or [s for s in servers if normalise_server_name(s.name) == wanted]
        return named or servers
    if tool in {b.spec.name for b in builtin_tools()}:
        return []
    return servers


def result_json(result: ToolResult) -> dict[str, Any]:
    """The result as JSON: content blocks as MCP content exactly as the server sent them
    (camelCase, every field: ``annotations``, ``_meta``, a resource link's ``title`` ...),
    structured content, the result's ``_meta`` (``meta``, when sent), error kind, duration in ms."""
    out: dict[str, Any] = {
        "tool": result.tool_name,
        "is_error": result.is_error,
        "error_kind": result.error_kind.value if result.error_kind else None,
        "content": [b.as_mcp() for b in result.content],
        "structured": result.structured,
        "duration_ms": round(result.duration_ms, 3),
    }
    if result.meta is not None:
        out["meta"] = result.meta
    return out


def _run(args: argparse.Namespace) -> int:
    try:
        params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        print(f"toolscout: --params is not valid JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(params, dict):
        print("toolscout: --params must be a JSON object", file=sys.stderr)
        return 2
    args.catalog = []
    engine = make_engine(args, with_servers=True, server_filter=lambda servers: servers_for(args.tool, servers))

    engine.set_search_advice('Find tools with: toolscout search "what the tool does"')

    async def body(engine: Engine) -> ToolResult:
        with call_progress(engine, args.tool) as call_id:  # the server's progress, on a terminal
            return await engine.call_tool(args.tool, params, call_id=call_id)

    result = run_with_engine(engine, body)
    if args.json:
        print(dumps_json(result_json(result), indent=2))
    elif result.is_error:
        print(f"toolscout: {result.text()}", file=sys.stderr)
    else:
        print(result.text())
    print_warnings(engine)
    return 1 if result.is_error else 0
