"""``toolscout serve``: deferred tool loading for any MCP client (the gateway of
:mod:`toolscout.core.gateway`), over stdio (default) or streamable HTTP (``--http``).

The configuration is the app's: the same MCP config files (``.mcp.json``, user ``mcp.json``,
``--mcp-config``), settings and permission rules. The gateway asks nothing: in a folder that is
not approved (:mod:`toolscout.core.policy.trust`) the project's servers (``.mcp.json`` and
``--mcp-config`` files inside the folder) are never started; stderr says so, with how to approve
the folder, and so does each such server's error that a client sees (a call to one of its tools,
the catalog resource, a search's notes). Nothing but the MCP protocol goes to stdout;
warnings and the HTTP address go to stderr.

The gateway answers its client at once: the upstream servers and the search index start
alongside (:meth:`toolscout.core.gateway.server.Gateway.run`). Over stdio, SIGTERM and SIGINT
end it promptly and cleanly (its upstream servers are stopped first); a second signal while it
stops is ignored (the stop is bounded). Over HTTP, SIGTERM and SIGINT drain the gateway
(:mod:`toolscout.core.gateway.drain`: ``/readyz`` 503, then requests in flight finish) and it exits 0.

Exit status 0 when the client disconnects or an HTTP gateway has drained, 2 for usage errors,
128 + the signal's number on SIGINT (130) or SIGTERM (143) over stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import os
import signal
import sys
from typing import Any

from toolscout.core.engine.events import EngineWarning
from toolscout.core.sanitize import strip_controls

from .common import UsageError, add_server_options, add_trust_flag, make_engine
from .parser import add_repeatable

#: Default wait of a client's searches and calls (from its first request) for servers still connecting (s).
DEFAULT_WAIT_S = 5.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` subcommand."""
    from toolscout.core.gateway.http import TOKEN_ENV

    p = sub.add_parser(
        "serve",
        help="serve your MCP servers to any MCP client through search + call tools",
        description="Run an MCP server in front of the configured MCP servers: a search tool and a "
        "call tool instead of every tool's schema.",
    )
    p.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to 127.0.0.1)",
    )
    p.add_argument(
        "--token",
        action="append",
        metavar="TOKEN",
        help=f"bearer token HTTP clients must send (default ${TOKEN_ENV}, several separated by spaces); "
        "repeatable: each token is a client of its own; required for a non-loopback HOST",
    )
    p.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP without sessions (replicas behind a load balancer); not with --expose dynamic",
    )
    p.add_argument(
        "--expose",
        choices=("static", "dynamic"),
        default="static",
        help="dynamic: tools found by search are added to the served list (tools/list_changed)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="another Host/Origin name clients use to reach a non-loopback bind; repeatable",
    )
    p.add_argument(
        "--wait-servers",
        type=float,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="a client's searches and calls wait for servers still connecting until this long after "
        f"its first request (default {DEFAULT_WAIT_S:g}); tools/list never waits",
    )
    _add_ops_options(p)
    add_server_options(p)
    add_trust_flag(p)
    add_repeatable(p, "--catalog", metavar="PATH", help="tool catalog file or directory (searchable, not callable)")
    p.add_argument(
        "--index",
        metavar="DIR",
        help="serve from a prebuilt index (toolscout index --out DIR): searchable at once, only "
        "tools changed since are encoded",
    )
    p.set_defaults(func=_run)


def _add_ops_options(p: argparse.ArgumentParser) -> None:
    """The operator's flags of ``--http`` (docs/deployment.md)."""
    from toolscout.core.gateway.ops_options import DEFAULT_DRAIN_DELAY_S, DEFAULT_DRAIN_TIMEOUT_S, METRICS_TOKEN_ENV

    p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="json: one JSON object per request (and per warning) on stderr (--http only)",
    )
    p.add_argument(
        "--metrics-token",
        metavar="TOKEN",
        default=_env_token(os.environ.get(METRICS_TOKEN_ENV)),
        help=f"bearer token /metrics needs instead of the MCP token (default ${METRICS_TOKEN_ENV}; "
        "without either, /metrics is authenticated as MCP requests are)",
    )
    p.add_argument(
        "--drain-delay",
        type=float,
        default=DEFAULT_DRAIN_DELAY_S,
        metavar="SECONDS",
        help="on SIGTERM, /readyz answers 503 this long before the listener closes, while requests "
        f"are still served (default {DEFAULT_DRAIN_DELAY_S:g}; above the balancer's check interval)",
    )
    p.add_argument(
        "--drain-timeout",
        type=float,
        default=DEFAULT_DRAIN_TIMEOUT_S,
        metavar="SECONDS",
        help=f"on SIGTERM, requests in flight get this long to finish (default {DEFAULT_DRAIN_TIMEOUT_S:g})",
    )


def _check(args: argparse.Namespace) -> tuple[Any, list[str]]:
    from toolscout.core.gateway.http import TOKEN_ENV, BindError, check_allowed_host, check_exposure, parse_bind

    env = os.environ.get(TOKEN_ENV)
    token: list[str] = list(args.token or []) or (env.split() if env else [])
    if env and not env.strip() and not args.token:
        token = [env]  # refused below: a blank token would refuse every request
    if args.stateless and not args.http:
        raise UsageError("--stateless applies to --http only")
    if args.stateless and args.expose == "dynamic":
        raise UsageError("--expose dynamic needs sessions: it cannot be combined with --stateless")
    if args.wait_servers < 0:
        raise UsageError(f"--wait-servers {args.wait_servers:g}: must be 0 or more")
    for flag, value in (("--drain-delay", args.drain_delay), ("--drain-timeout", args.drain_timeout)):
        if not 0 <= value <= 3600:
            raise UsageError(f"{flag} {value:g}: must be between 0 and 3600 seconds")
    if not args.http and args.log_format == "json":
        raise UsageError("--log-format json applies to --http only")
    if not args.http:
        return None, token
    try:
        bind = parse_bind(args.http)
        args.allowed_host = [check_allowed_host(name) for name in args.allowed_host]
        check_exposure(bind, token or None)
        if args.metrics_token is not None:
            from toolscout.core.gateway.ops_options import METRICS_TOKEN_ENV

            check_exposure(bind, args.metrics_token, f"--metrics-token or {METRICS_TOKEN_ENV}")
    except BindError as exc:
        raise UsageError(str(exc)) from None
    return bind, token


def _run(args: argparse.Namespace) -> int:
    from toolscout.core.gateway.selfref import without_gateway

    bind, token = _check(args)
    prebuilt = _read_index(args.index) if args.index else None
    json_log = None
    if args.log_format == "json":
        from toolscout.core.gateway.access_log import JsonLog

        json_log = JsonLog(token)

    def warn(text: str) -> None:  # server-supplied text: inert on the terminal (JSON escapes it)
        if json_log is not None:
            json_log.event("warning", level=logging.WARNING, text=text)
        else:
            print(f"toolscout serve: warning: {strip_controls(text)}", file=sys.stderr, flush=True)

    engine = make_engine(args, with_builtins=False, server_filter=without_gateway(warn))
    if prebuilt is not None:
        engine.use_prebuilt_index(prebuilt)
        created = prebuilt.manifest.get("created", "?")
        if json_log is not None:
            json_log.event(
                "index",
                path=str(prebuilt.path),
                tools=prebuilt.tool_count,
                servers=len(prebuilt.servers),
                built=created,
            )
        else:
            print(
                f"toolscout serve: index {prebuilt.path}: {prebuilt.tool_count:,} tools of {len(prebuilt.servers)} "
                f"servers, built {created}",
                file=sys.stderr,
                flush=True,
            )

    def report(event: Any) -> None:
        if isinstance(event, EngineWarning):
            warn(f"{event.source}: {event.message}" if event.source else event.message)

    signalled: list[int] = []

    def on_signal(number: int, task: asyncio.Task[Any]) -> None:
        if not signalled:  # the first one stops the gateway; the stop is bounded, later ones wait for it
            signalled.append(number)
            task.cancel()

    async def main() -> None:
        from toolscout.core.gateway.http import serve_http
        from toolscout.core.gateway.server import Gateway
        from toolscout.core.gateway.stdio import serve_stdio

        said = engine.folder_trust.notice() if engine.folder_trust is not None else ""
        for warning in dict.fromkeys(engine.warnings):
            if warning != said:  # the folder's notice was printed first (make_engine)
                warn(warning)
        engine.subscribe(report)
        task = asyncio.current_task()
        if bind is None and task is not None:
            for number in (signal.SIGTERM, signal.SIGINT):
                asyncio.get_running_loop().add_signal_handler(number, on_signal, number, task)
        engine.forward_questions()  # upstream servers' questions reach the gateway's clients
        gateway = Gateway(engine, expose=args.expose, stateless=args.stateless, first_list_wait=args.wait_servers)
        if bind is None:
            await gateway.run(lambda: serve_stdio(gateway), start_at_once=False)
        else:
            from toolscout.core.gateway.http import exposure_notice

            for line in exposure_notice(bind, token, on_command_line=bool(args.token)):
                warn(line)
            from toolscout.core.gateway.ops_options import OpsOptions

            ops = OpsOptions(args.log_format, args.metrics_token, args.drain_timeout, args.drain_delay)
            await gateway.run(
                lambda: serve_http(
                    gateway, bind, token=token, stateless=args.stateless, allowed_hosts=args.allowed_host, ops=ops
                )
            )

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 128 + (signalled[0] if signalled else signal.SIGINT)
    except OSError as exc:
        text = str(exc)
        if bind is not None and exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            text = f"--http {args.http}: cannot listen there: {exc.strerror}"
        if json_log is not None:  # the failure in the log's own shape: a shipper parses every line
            json_log.event("error", level=logging.ERROR, text=text)
        else:
            print(f"toolscout serve: {strip_controls(text)}", file=sys.stderr)
        return 1
    return 0


def _env_token(value: str | None) -> str | None:
    """A token from the environment without the surrounding whitespace a secret file leaves (its
    final newline); None when unset or empty; a value of blanks only is kept (and refused)."""
    if not value:
        return None
    return value.strip() or value


def _read_index(path: str) -> Any:
    """The prebuilt index in folder ``path`` (:func:`~toolscout.core.engine.index_files.read_index`).

    Raises:
        UsageError: it cannot be used (one line: the folder, the problem, how to rebuild it).
    """
    from toolscout.core.engine.index_files import IndexDirError, read_index

    try:
        return read_index(path)
    except IndexDirError as exc:
        raise UsageError(f"--index {strip_controls(exc)}") from None
