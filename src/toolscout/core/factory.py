"""The one place an :class:`~toolscout.core.engine.Engine` is assembled for real use.

The CLI, the TUI and headless mode all call :func:`create_engine`, so a session started from
any of them sees the same built-ins, catalogs and servers.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .engine import Engine
from .settings import Settings


def create_engine(
    settings: Settings,
    *,
    catalog_paths: Iterable[str | Path] = (),
    mcp_config_paths: Iterable[str | Path] = (),
    connect_servers: bool = True,
    default_servers: bool = True,
    project_dir: str | Path | None = None,
) -> Engine:
    """Build an engine with the built-in tools, catalog files and MCP configuration.

    Args:
        catalog_paths: tool catalog files/directories (searchable, not executable).
        mcp_config_paths: extra MCP config files (``--mcp-config``), on top of discovered ones.
        connect_servers: False to skip MCP servers entirely (catalog-only runs).
        default_servers: start the embedded default servers when no server is configured.
    """
    builtins, core_names = _builtins()
    return Engine(
        settings,
        catalog_paths=catalog_paths,
        builtins=builtins,
        core_names=core_names,
        project_dir=project_dir,
    )


def _builtins() -> tuple[list[object], set[str]]:
    try:
        from .builtins.registry import builtin_tools, core_tool_names
    except ImportError:
        return [], set()
    return builtin_tools(), core_tool_names()
