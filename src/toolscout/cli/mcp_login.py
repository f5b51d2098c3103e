"""``toolscout mcp login NAME`` and ``toolscout mcp logout NAME``: OAuth for a remote (http/sse)
MCP server (:mod:`toolscout.core.mcp.login`).

``login`` opens the authorization page in the browser (Python's ``webbrowser``: ``$BROWSER`` is
honoured), waits for its redirect on a loopback port, stores the tokens in the user config dir
(``oauth/NAME.json``, readable only by the person) and lists the server's tools. A server of a
folder not yet approved is not logged in to (its URL came from the project). ``logout`` removes
the stored tokens and client registration. Exit status 0 on success, 1 when the login failed or
there was nothing to log out of, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys

from .common import UsageError, add_config_options, add_trust_flag, make_engine


def register(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mcp login`` and ``mcp logout`` to the ``mcp`` subcommand group."""
    login = group.add_parser(
        "login",
        help="log in to a remote (http/sse) server with OAuth: opens your browser",
        description="Log in to a remote MCP server with OAuth 2.1: discover its authorization server, "
        "register toolscout there when needed, open the login page in your browser ($BROWSER is "
        "honoured) and wait for it on a loopback port; the tokens are kept in the user config dir, "
        "readable only by you.",
    )
    login.add_argument("name", metavar="NAME", help="the server's name")
    add_config_options(login, catalog=False)
    add_trust_flag(login)
    login.set_defaults(func=_run_login)
    logout = group.add_parser(
        "logout",
        help="forget the OAuth login of a remote server (its stored tokens and registration)",
        description="Remove the stored OAuth tokens and client registration of a remote MCP server.",
    )
    logout.add_argument("name", metavar="NAME", help="the server's name")
    logout.set_defaults(func=_run_logout)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _run_login(args: argparse.Namespace) -> int:
    import anyio

    from toolscout.core.mcp.login import LoginError, log_in
    from toolscout.core.mcp.oauth_store import FileTokenStorage, login_file
    from toolscout.core.models import ServerState

    from .mcp_edit import _shown

    args.catalog = []
    engine = make_engine(args, with_servers=True)
    configs = [engine.server_config(n) for n in engine.server_names]
    config = next((c for c in configs if c is not None and args.name in (c.name, c.configured_name)), None)
    if config is None:
        known = ", ".join(engine.server_names) or "none is configured"
        raise UsageError(f"there is no MCP server {args.name!r} (servers: {known})")
    if config.not_approved:
        _say(
            f"toolscout: {config.name} comes from this folder's config, which you have not approved; "
            f"it would log in to {config.url}. Approve the folder first (--trust-project, or start "
            "toolscout here and approve it)."
        )
        return 1
    try:
        status = anyio.run(lambda: log_in(config, notify=_say))
    except LoginError as exc:
        _say(f"toolscout: {exc}")
        return 1
    if status.state is not ServerState.CONNECTED:
        _say(f"toolscout: not logged in to {config.name}: {status.error or status.state.value}")
        return 1
    tools = f"{status.tool_count} tool{'s' if status.tool_count != 1 else ''}"
    if not FileTokenStorage(config.name, config.url).has_login():
        print(f"{config.name} ({config.url}) asked for no login: connected without one, {tools}.")
        return 0
    print(f"Logged in to {config.name} ({config.url}): {tools}.")
    print(f"The login is kept in {_shown(login_file(config.name))} (readable only by you).")
    print(f"Log out with: toolscout mcp logout {config.name}")
    return 0


def _run_logout(args: argparse.Namespace) -> int:
    from toolscout.core.mcp.login import log_out

    from .mcp_edit import _shown

    try:
        removed = log_out(args.name)
    except OSError as exc:
        _say(f"toolscout: the login of {args.name} could not be removed: {exc}")
        return 1
    if removed is None:
        _say(f"toolscout: no login is stored for {args.name}")
        return 1
    print(f"Logged out of {args.name}: removed {_shown(removed)}")
    return 0
