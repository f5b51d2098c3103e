"""The one place an :class:`~toolscout.core.engine.facade.Engine` is assembled for real use.

The CLI, the TUI and headless mode all call :func:`create_engine`, so a session started from
any of them sees the same built-ins, catalogs and servers.

MCP servers come from the user ``mcp.json``, the project ``.mcp.json`` and ``--mcp-config`` files
(:mod:`toolscout.core.mcp.config`); the project's servers (those of ``.mcp.json`` and of
``--mcp-config`` files inside the project folder, :mod:`toolscout.core.policy.trust_files`) start only
in a folder the person has approved (:mod:`toolscout.core.policy.trust`), otherwise they are listed as
not approved. With no configuration file at all, the embedded default
(the reference servers installed with toolscout: time, git, fetch) starts, so the first run
shows a real deferred catalog; a configuration file that is there but cannot be read or parsed
is a warning naming it, and the default does not start in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from .builtins.base import BuiltinTool
from .engine.facade import Engine
from .mcp.config import default_servers as embedded_default_servers
from .mcp.config import load_mcp_config
from .mcp.server_config import PROJECT_SCOPES, ServerConfig
from .policy.trust import FolderTrust, check_folder
from .policy.trust_files import PROJECT_FILE, project_key
from .settings.layers import Settings


def create_engine(
    settings: Settings,
    *,
    catalog_paths: Iterable[str | Path] = (),
    mcp_config_paths: Iterable[str | Path] = (),
    connect_servers: bool = True,
    default_servers: bool = True,
    project_dir: str | Path | None = None,
    server_filter: Callable[[list[ServerConfig]], list[ServerConfig]] | None = None,
    folder_trust: FolderTrust | None = None,
    with_builtins: bool = True,
) -> Engine:
    """Build an engine with the built-in tools, catalog files and MCP configuration.

    Args:
        catalog_paths: tool catalog files/directories (searchable, not executable).
        mcp_config_paths: extra MCP config files (``--mcp-config``), on top of discovered ones.
        connect_servers: False to skip MCP servers entirely (catalog-only runs).
        default_servers: start the embedded default servers when no MCP configuration file
            exists (user ``mcp.json``, project ``.mcp.json``) and no ``--mcp-config`` is given.
        project_dir: where ``.mcp.json`` is looked for (default: the current directory).
        server_filter: narrows the configured servers before any starts (``toolscout call``
            starts only the server of the tool it runs).
        folder_trust: the project folder's approval (:func:`toolscout.core.policy.trust.check_folder`,
            given ``mcp_config_paths``); None checks the stored approval and
            ``projectTrust.autoApprove``. Unapproved: the project's servers (``.mcp.json``, and
            ``mcp_config_paths`` inside the folder) are marked not approved and never start. A
            stored approval that did not cover one of those files is checked again with them.
        with_builtins: False leaves out the built-in tools (``toolscout serve`` serves only the
            configured servers' tools).
    """
    builtins, core_names = _builtins() if with_builtins else ([], set())
    project = Path(project_dir or Path.cwd())
    extra = list(mcp_config_paths)
    folder_trust = _covering(folder_trust, project, extra, settings)
    servers: list[ServerConfig] = []
    warnings: list[str] = []
    if connect_servers:
        owned = [p for p in extra if project_key(folder_trust.folder, p) is not None]
        config = load_mcp_config(project, extra, project_files=owned)
        servers = list(config.servers.values())
        warnings = config.warnings
        if default_servers and not config.files and not extra:
            if config.broken:  # a file that is there but broken is never silently replaced
                warnings = [
                    *warnings,
                    "the embedded default servers (time, git, fetch) do not start in place of "
                    f"{', '.join(config.broken)}: fix it, or move it away to get them",
                ]
            else:
                servers = embedded_default_servers(project)
        if not folder_trust.approved:
            servers = [replace(s, not_approved=True) if s.scope in PROJECT_SCOPES else s for s in servers]
        if server_filter is not None:
            servers = server_filter(servers)
    engine = Engine(
        settings,
        catalog_paths=catalog_paths,
        builtins=builtins,
        core_names=core_names,
        project_dir=project,
        mcp_servers=servers,
        mcp_warnings=warnings,
    )
    engine.folder_trust = folder_trust
    if not folder_trust.approved:
        engine.warnings.insert(0, folder_trust.notice())
    return engine


def _covering(trust: FolderTrust | None, project: Path, extra: list[str | Path], settings: Settings) -> FolderTrust:
    """``trust``, or the folder checked again with ``extra`` when ``trust`` is None or counts the
    folder approved from a stored record (or for having no project config) without having
    covered each of ``extra`` that is project config: such a file is never started on an
    approval that did not see it. ``--trust-project`` and ``projectTrust.autoApprove`` approve
    whatever the files are."""
    auto = bool(settings.get("projectTrust.autoApprove"))
    if trust is None:
        return check_folder(project, auto=auto, config_files=extra)
    covered = {key for key, _ in trust.configs} | {PROJECT_FILE}
    keys = {key for p in extra if (key := project_key(trust.folder, p)) is not None}
    if trust.approved and trust.how in ("approved", "no project config") and not keys <= covered:
        return check_folder(trust.folder, auto=auto, config_files=extra)
    return trust


def _builtins() -> tuple[list[BuiltinTool], set[str]]:
    from .builtins.registry import builtin_tools, core_tool_names

    return builtin_tools(), core_tool_names()
