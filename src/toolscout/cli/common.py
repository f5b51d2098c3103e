"""Shared CLI plumbing: settings from args, building and running an engine."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from toolscout.core.engine.facade import Engine
from toolscout.core.policy.trust import FolderTrust, check_folder
from toolscout.core.settings.layers import Settings, load_settings

from .parser import add_repeatable

if TYPE_CHECKING:
    from toolscout.core.session.providers.base import Provider

T = TypeVar("T")


def add_trust_flag(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """``--trust-project``: approve this folder's ``.mcp.json`` and allow rules for this run."""
    parser.add_argument(
        "--trust-project",
        action="store_true",
        default=False if top_level else argparse.SUPPRESS,
        help="trust this folder's servers (.mcp.json, --mcp-config files inside it) and "
        "permissions.allow rules for this run",
    )


def folder_trust(args: argparse.Namespace) -> FolderTrust:
    """Whether the current folder's own config applies (stored approval, ``--trust-project`` or
    ``projectTrust.autoApprove``), its ``--mcp-config`` files inside the folder included;
    computed once per run and kept on ``args``."""
    cached = getattr(args, "folder_trust", None)
    if not isinstance(cached, FolderTrust):
        auto = bool(load_settings().get("projectTrust.autoApprove"))
        cached = check_folder(
            Path.cwd(),
            flag=bool(getattr(args, "trust_project", False)),
            auto=auto,
            config_files=list(getattr(args, "mcp_config", None) or []),
        )
        args.folder_trust = cached
        if not cached.approved:  # said up front: a long -p run prints its warnings at the end
            print(f"toolscout: {cached.notice()}", file=sys.stderr)
    return cached


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Load layered settings (a project's grants only in an approved folder, see
    :func:`folder_trust`) and apply CLI flags (flags win over files and env)."""
    settings = load_settings(project_trusted=folder_trust(args).approved)
    overrides: dict[str, Any] = {}
    for flag, key in (
        ("strategy", "session.strategy"),
        ("provider", "provider.name"),
        ("model", "provider.model"),
        ("base_url", "provider.baseUrl"),
        ("ranker", "toolSearch.ranker"),
        ("tool_search", "toolSearch.enabled"),
    ):
        value = getattr(args, flag, None)
        if value:
            overrides[key] = value
    allowed = getattr(args, "allowed_tools", None)
    if allowed:
        overrides["permissions.allow"] = [p.strip() for p in allowed.split(",") if p.strip()]
    if getattr(args, "add_dir", None):
        overrides["permissions.additionalDirectories"] = list(args.add_dir)
    return settings.with_overrides(overrides) if overrides else settings


#: ``--mcp-config``'s help, wherever it is taken.
MCP_CONFIG_HELP = "MCP config file (Claude Code .mcp.json or Claude Desktop format); repeatable"


def add_config_options(p: argparse.ArgumentParser, *, catalog: bool = True) -> None:
    """``--mcp-config`` (and, unless ``catalog`` is False, ``--catalog``) on a subcommand: the
    values add to those given before the subcommand (:func:`~.parser.add_repeatable`)."""
    add_repeatable(p, "--mcp-config", metavar="PATH", help=MCP_CONFIG_HELP)
    if catalog:
        add_repeatable(
            p,
            "--catalog",
            metavar="PATH",
            help="tool catalog file or directory (searchable, not executable); repeatable",
        )


def add_server_options(p: argparse.ArgumentParser) -> None:
    """``--mcp-config``, ``--allowed-tools`` and ``--no-default-servers`` on a subcommand (left
    unset unless given, so the same options before the subcommand still count)."""
    add_config_options(p, catalog=False)
    p.add_argument(
        "--allowed-tools",
        default=argparse.SUPPRESS,
        help="comma-separated allow patterns for this run (tool names, servers, globs)",
    )
    p.add_argument(
        "--no-default-servers",
        action="store_true",
        default=argparse.SUPPRESS,
        help="do not start the embedded default servers when nothing is configured",
    )


class UsageError(Exception):
    """A command-line argument that cannot be used (the message says which and why); exit 2."""


def make_engine(
    args: argparse.Namespace,
    *,
    with_servers: bool | None = None,
    server_filter: Callable[[list[Any]], list[Any]] | None = None,
    with_builtins: bool = True,
) -> Engine:
    """Build the engine the CLI uses: settings, built-ins, catalogs and (unless only catalogs
    were given) the configured MCP servers.

    Raises:
        UsageError: as :func:`check_config_paths`.
    """
    from toolscout.core.factory import create_engine

    check_config_paths(args)
    catalogs = list(getattr(args, "catalog", []) or [])
    mcp_configs = list(getattr(args, "mcp_config", []) or [])
    settings = settings_from_args(args)
    if with_servers is None:
        with_servers = not catalogs or bool(mcp_configs)
    return create_engine(
        settings,
        catalog_paths=catalogs,
        mcp_config_paths=mcp_configs,
        connect_servers=with_servers,
        default_servers=not getattr(args, "no_default_servers", False),
        server_filter=server_filter,
        folder_trust=folder_trust(args),
        with_builtins=with_builtins,
    )


def check_config_paths(args: argparse.Namespace) -> None:
    """Check the files named on the command line before anything starts.

    Raises:
        UsageError: a ``--catalog`` path does not exist, or a ``--mcp-config`` file cannot be
            used (missing, unreadable, malformed JSON, not ``{"mcpServers": {...}}``): the
            command stops rather than run without the file's servers (or, with no other
            config, on the embedded default servers instead).
    """
    from toolscout.core.mcp.config import config_file_problem

    for path in getattr(args, "catalog", None) or []:
        if not Path(path).exists():
            raise UsageError(f"--catalog {path}: no such file or directory")
    for path in getattr(args, "mcp_config", None) or []:
        problem = config_file_problem(path)
        if problem is not None:
            raise UsageError(f"--mcp-config {path}: {problem}; nothing was started (fix the file or leave it out)")


def provider_or_exit_code(settings: Settings) -> Provider | int:
    """The model provider ``settings`` ask for, or the exit code after printing why it cannot be
    created (a missing key, an unknown provider): the one "create a provider or fail" of the
    commands that talk to a model.
    """
    from toolscout.core.session.providers import ProviderError, create_provider

    try:
        return create_provider(settings)
    except ProviderError as exc:
        from . import fail

        return fail(str(exc))


def run_with_engine(
    engine: Engine, body: Callable[[Engine], Awaitable[T]], *, wait_servers: bool = True, needs_a_catalog: bool = False
) -> T:
    """Start ``engine``, (optionally) wait for servers to settle, run ``body``, stop the engine.

    Args:
        needs_a_catalog: the command reports on the catalog (``search``, ``context``,
            ``request``, ``index``): see :func:`require_a_catalog`. A headless ``-p`` run still
            has the built-in tools, so an unreadable catalog stays a warning there.

    Raises:
        UsageError: ``needs_a_catalog`` and no ``--catalog`` could be read.
    """

    async def main() -> T:
        # No index warm-up: a command that searches builds it on its first query, the others
        # (context, call, mcp list) never need it.
        await engine.start(warm_search=False)
        try:
            if needs_a_catalog:
                require_a_catalog(engine)
            if wait_servers:
                await engine.wait_for_servers()
            return await body(engine)
        finally:
            await engine.stop()

    return asyncio.run(main())


def require_a_catalog(engine: Engine) -> None:
    """Fail a catalog-only run (``--catalog`` given, no MCP server to connect) in which no
    catalog gave a single tool: answering "no good match" from the built-ins alone would hide it.

    Raises:
        UsageError: naming each catalog path and why it gave no tool (after printing the run's
            other warnings).
    """
    paths, failures = engine.catalog_paths, engine.catalog_failures
    if not paths or engine.server_names or any(path not in failures for path in paths):
        return
    print_warnings(engine, skip={w for w in engine.warnings if w.startswith("catalog: ")})
    reasons = "; ".join(failures[path] for path in paths)
    raise UsageError(f"no catalog could be read: {reasons}")


def print_warnings(engine: Engine, skip: set[str] | frozenset[str] = frozenset()) -> None:
    """Print collected warnings to stderr, one per line (except those in ``skip``, and the folder
    trust notice, which :func:`folder_trust` printed first). Catalog warnings are summarised
    (:func:`~toolscout.core.search.evaluation.summarise`): a wrong file skips every one of its lines."""
    from toolscout.core.search.evaluation import summarise

    trust = engine.folder_trust
    said = trust.notice() if trust is not None else None
    shown = [w for w in dict.fromkeys(engine.warnings) if w not in skip and w != said]
    catalog = [w for w in shown if w.startswith("catalog: ")]
    rest = [w for w in shown if not w.startswith("catalog: ")]
    for warning in [*summarise(catalog, what="catalog warnings"), *rest]:
        print(f"warning: {warning}", file=sys.stderr)
