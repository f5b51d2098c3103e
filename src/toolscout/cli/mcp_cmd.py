"""``toolscout mcp list [--json]``: the configured MCP servers, their state, tools and errors;
``mcp add`` and ``mcp remove`` (:mod:`.mcp_edit`) change the user config; ``mcp login`` and
``mcp logout`` (:mod:`.mcp_login`) log in to a remote server with OAuth and out again."""

from __future__ import annotations

import argparse
from typing import Any

from toolscout.core.engine.facade import Engine
from toolscout.core.models import ServerState, ServerStatus
from toolscout.core.sanitize import dumps_json

from .common import add_config_options, add_trust_flag, make_engine, print_warnings, run_with_engine


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` subcommand group (``mcp list``, ``add``, ``remove``, ``login``, ``logout``)."""
    from . import mcp_edit, mcp_login

    p = sub.add_parser(
        "mcp", help="MCP servers: list them and their state, add or remove one (user config), log in to one"
    )
    group = p.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    ls = group.add_parser(
        "list",
        help="connect to every configured server and show its state",
        description="Connect to every configured MCP server and show its state, tools and errors. "
        "Exit status 1 when a server failed to connect or disconnected (servers of a "
        "folder not yet approved are listed, not counted as failed), else 0.",
    )
    add_config_options(ls, catalog=False)
    ls.add_argument(
        "--no-default-servers",
        action="store_true",
        default=argparse.SUPPRESS,
        help="do not start the embedded default servers when nothing is configured",
    )
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_trust_flag(ls)
    ls.set_defaults(func=_run_list)
    mcp_edit.register(group)
    mcp_login.register(group)


def status_json(status: ServerStatus, source: str | None, warnings: list[str] | None = None) -> dict[str, Any]:
    """One server as JSON: name, state, transport, tool count, instructions, resources, error,
    whether it needs a login (OAuth), source, and its warnings (dropped tools, schema repairs,
    stray output)."""
    return {
        "name": status.name,
        "state": status.state.value,
        "needs_login": status.needs_login,
        "transport": status.transport,
        "tool_count": status.tool_count,
        "has_instructions": bool(status.instructions),
        "instructions": status.instructions,
        "has_resources": status.has_resources,
        "error": status.error,
        "source": source,
        "warnings": list(warnings or []),
    }


def format_statuses(rows: list[dict[str, Any]]) -> str:
    """A plain table, one server per line, errors on their own indented line."""
    if not rows:
        return "No MCP servers configured (.mcp.json, the user mcp.json, or --mcp-config)."
    width = max(len("SERVER"), *(len(r["name"]) for r in rows))
    lines = [f"{'SERVER'.ljust(width)}  {'STATE':<12} {'TOOLS':>5}  INSTR  RES  TRANSPORT  SOURCE"]
    for r in rows:
        state = "needs login" if r.get("needs_login") else r["state"]
        lines.append(
            f"{r['name'].ljust(width)}  {state:<12} {r['tool_count']:>5}  "
            f"{'yes' if r['has_instructions'] else 'no':<5}  {'yes' if r['has_resources'] else 'no':<3}  "
            f"{r['transport']:<9}  {r['source'] or ''}"
        )
        if r["error"]:
            lines.append(f"{' ' * width}  ! {r['error']}")
        lines.extend(f"{' ' * width}  ~ {w}" for w in r.get("warnings", ()))
    return "\n".join(lines)


#: States that make ``mcp list`` exit 1: the server was meant to run and does not.
BROKEN_STATES = frozenset({ServerState.FAILED, ServerState.DISCONNECTED})


def _run_list(args: argparse.Namespace) -> int:
    args.catalog = []
    engine = make_engine(args, with_servers=True)

    async def body(engine: Engine) -> int:
        rows = []
        broken = False
        for status in engine.mcp_statuses():
            cfg = engine.server_config(status.name)
            # a folder's server not yet approved is not broken, even when its entry is invalid
            broken |= status.state in BROKEN_STATES and not (cfg is not None and cfg.not_approved)
            row = status_json(status, cfg.source if cfg else None, engine.server_warnings(status.name))
            if cfg is not None:  # the spelling in the file, and what starting the server runs, as
                # the file writes it: ${VAR} shown, the person's value never (CI logs keep output)
                row.update(configured_name=cfg.configured_name or cfg.name, command=cfg.command_line(as_written=True))
            rows.append(row)
        payload = {"servers": rows, "warnings": list(dict.fromkeys(engine.warnings))}
        print(dumps_json(payload, indent=2) if args.json else format_statuses(rows))
        return 1 if broken else 0

    code = run_with_engine(engine, body)
    if not args.json:  # warnings already shown under their server are not repeated
        shown = {f"{name}: {w}" for name in engine.server_names for w in engine.server_warnings(name)}
        print_warnings(engine, skip=shown)
    return code
