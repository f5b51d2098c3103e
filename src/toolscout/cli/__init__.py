"""Command-line interface. Each subcommand lives in its own module with ``register(subparsers)``.

``toolscout`` with no subcommand (and no ``-p``) starts the Textual app.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from toolscout import __version__
from toolscout.core.settings.layers import choices
from toolscout.core.settings.provider_registry import provider_names

from .parser import Parser

#: Modules that add subcommands; a module that fails to import is reported, not fatal.
COMMAND_MODULES = (
    "search_cmd",
    "context_cmd",
    "eval_cmd",
    "mcp_cmd",
    "call_cmd",
    "request_cmd",
    "index_cmd",
    "serve_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (top-level app/headless options plus subcommands)."""
    parser = Parser(
        prog="toolscout",
        description="Deferred tool loading for LLM agents: search, inspect and run MCP tools.",
    )
    parser.add_argument("--version", action="version", version=f"toolscout {__version__}")
    add_session_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f".{name}", __name__).register(sub)
    return parser


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """Options of the app and of headless mode (``-p``)."""
    parser.add_argument(
        "-p", "--print", dest="prompt", metavar="PROMPT", help="run one conversation headless and print the answer"
    )
    parser.add_argument("--provider", choices=provider_names(), help="model provider")
    parser.add_argument("--model", help="model name")
    parser.add_argument("--base-url", help="API base URL (OpenAI-compatible gateways, proxies)")
    parser.add_argument("--strategy", choices=choices("session.strategy"), help="request projection")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--allowed-tools", help="comma-separated allow patterns for this run")
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder besides the project that Read/Glob/Grep may read without asking; repeatable",
    )
    parser.add_argument("--resume", nargs="?", const="", metavar="ID", help="continue a session")
    parser.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="PATH",
        help="MCP config file (Claude Code .mcp.json or Claude Desktop format); repeatable",
    )
    parser.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="PATH",
        help="load a tool catalog file or directory (searchable, not executable)",
    )
    parser.add_argument(
        "--no-default-servers",
        action="store_true",
        help="do not start the embedded default MCP servers when nothing is configured",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="trust this folder's servers (.mcp.json, --mcp-config files inside it) and "
        "permissions.allow rules for this run",
    )


def run(argv: list[str]) -> int:
    """Parse ``argv`` and run; returns the exit code (2 for usage errors)."""
    from .common import UsageError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command or args.prompt is not None:
            from .output import sanitised_output

            with sanitised_output():  # server, tool and model text reach the terminal inert
                if args.command:
                    return int(args.func(args) or 0)
                from .headless import run_headless

                return run_headless(args)
        from .app_cmd import run_app

        return run_app(args)
    except UsageError as exc:
        from toolscout.core.sanitize import strip_controls

        return fail(strip_controls(exc), 2)


def fail(message: str, code: int = 1) -> int:
    """Print ``toolscout: message`` to stderr and return ``code``."""
    print(f"toolscout: {message}", file=sys.stderr)
    return code
