"""``toolscout mcp add`` and ``toolscout mcp remove``: servers of the user MCP config, in Claude
Code's ``claude mcp add`` syntax::

    toolscout mcp add [-e KEY=VALUE ...] NAME -- COMMAND [ARGS...]
    toolscout mcp add --transport http|sse [--header 'Name: value' ...] NAME URL
    toolscout mcp remove NAME

The file is the user config (:func:`toolscout.core.mcp.config.user_config_path`); a project's
servers belong in its ``.mcp.json``, which these commands never edit (``--scope user`` is the
only scope). A name already in the file is refused, never overwritten. Values of ``-e`` and
``--header`` (secrets, often) go to the file only: the confirmation names the keys, not the
values. Exit status 0 when the file was changed, 1 when the change was refused (the message says
why), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import UsageError

#: Claude Code's scopes; ``user`` is the one toolscout writes.
SCOPES = ("user", "project", "local")


def register(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mcp add`` and ``mcp remove`` to the ``mcp`` subcommand group."""
    add = group.add_parser(
        "add",
        help="add a server to the user MCP config (claude mcp add syntax)",
        description="Add an MCP server to the user config (a stdio command after --, or an http/sse URL). "
        "Examples: toolscout mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/notes; "
        "toolscout mcp add --transport http sentry https://mcp.sentry.dev/mcp",
    )
    add.add_argument(
        "-t",
        "--transport",
        choices=("stdio", "http", "sse"),
        default="stdio",
        help="stdio (a command, the default), http or sse (a URL)",
    )
    add.add_argument(
        "-e",
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment variable of a stdio server; repeatable (VALUE may be ${VAR})",
    )
    add.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header of an http/sse server; repeatable (VALUE may be ${VAR})",
    )
    add.add_argument(
        "-s",
        "--scope",
        choices=SCOPES,
        default="user",
        help="user (the only scope toolscout writes; a project's servers go in its .mcp.json)",
    )
    add.add_argument("name", metavar="NAME", help="the server's name (letters, digits, - and _)")
    add.add_argument("target", metavar="COMMAND_OR_URL", help="the command (stdio) or the URL (http, sse)")
    add.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the command's arguments")
    add.set_defaults(func=_run_add)
    remove = group.add_parser(
        "remove",
        help="remove a server from the user MCP config",
        description="Remove an MCP server from the user config.",
    )
    remove.add_argument("-s", "--scope", choices=SCOPES, default="user", help="user (the only scope toolscout writes)")
    remove.add_argument("name", metavar="NAME", help="the server's name")
    remove.set_defaults(func=_run_remove)


def _check_scope(scope: str) -> None:
    if scope != "user":
        raise UsageError(
            f"--scope {scope}: toolscout writes the user config only; a project's servers go "
            "in its .mcp.json (Claude Code's `claude mcp add --scope project` writes that file)"
        )


def _pairs(values: list[str], sep: str, flag: str, example: str) -> dict[str, str]:
    """``KEY=VALUE`` (``sep`` ``=``) or ``Name: value`` (``sep`` ``:``) options as a mapping."""
    out: dict[str, str] = {}
    for value in values:
        key, found, rest = value.partition(sep)
        if not found or not key.strip():
            raise UsageError(f"{flag} {value.partition(sep)[0]!r}...: expected {example}")
        out[key.strip()] = rest.strip() if sep == ":" else rest
    return out


def _run_add(args: argparse.Namespace) -> int:
    from toolscout.core.mcp.config import user_config_path
    from toolscout.core.mcp.user_config import UserConfigError, add_server, server_entry

    _check_scope(args.scope)
    stray = [a for a in args.args if a.startswith("-")] if args.transport != "stdio" else []
    if stray:
        raise UsageError(
            f"{stray[0]} after the URL: options go before NAME "
            f"(toolscout mcp add --transport {args.transport} {stray[0]} ... NAME URL)"
        )
    env = _pairs(args.env, "=", "-e", "KEY=VALUE")
    headers = _pairs(args.header, ":", "--header", "'Name: value'")
    path = user_config_path()
    try:
        entry = server_entry(args.transport, args.target, args.args, env=env, headers=headers)
        add_server(path, args.name, entry)
    except UserConfigError as exc:
        return _refused(exc)
    what = " ".join([args.target, *args.args])
    keys = (f"; env: {', '.join(env)}" if env else "") + (f"; headers: {', '.join(headers)}" if headers else "")
    print(f"Added {args.transport} MCP server {args.name} to the user config {_shown(path)}: {what}{keys}")
    print(f"Check it with: toolscout mcp list · remove it with: toolscout mcp remove {args.name}")
    return 0


def _run_remove(args: argparse.Namespace) -> int:
    from toolscout.core.mcp.config import PROJECT_FILE, read_config_file, user_config_path
    from toolscout.core.mcp.user_config import UserConfigError, remove_server

    _check_scope(args.scope)
    path = user_config_path()
    try:
        remove_server(path, args.name)
    except UserConfigError as exc:
        project = Path.cwd() / PROJECT_FILE
        if args.name in read_config_file(project).servers:
            exc = UserConfigError(
                f"{exc}. It is in this folder's {PROJECT_FILE}, which toolscout does not edit: "
                f"remove it there (or with `claude mcp remove {args.name} --scope project`)"
            )
        return _refused(exc)
    print(f"Removed MCP server {args.name} from the user config {_shown(path)}")
    return _forget_login(args.name)


def _forget_login(name: str) -> int:
    """Remove the OAuth login kept for a removed server: its tokens are not left behind for a
    later server of the same name. 0, or 1 (said) when the file cannot be removed."""
    from toolscout.core.mcp.oauth_store import forget

    try:
        gone = forget(name)
    except OSError as exc:
        return _refused(OSError(f"{name}'s login could not be removed: {exc}"))
    if gone is not None:
        print(f"Removed its OAuth login {_shown(gone)}")
    return 0


def _refused(exc: Exception) -> int:
    from toolscout.core.sanitize import strip_controls

    print(f"toolscout: {strip_controls(exc)}", file=sys.stderr)
    return 1


def _shown(path: Path) -> str:
    """``path`` with the home folder as ``~``."""
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
