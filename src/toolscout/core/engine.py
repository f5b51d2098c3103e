"""The async facade the CLI, the session and the TUI all use.

An :class:`Engine` owns the catalog, the search index, the MCP server pool and the tool
executor. It reports through plain :mod:`toolscout.core.events`; it never waits for a slow
server: :meth:`Engine.start` returns as soon as file catalogs and built-ins are registered, and
servers fill in as they connect.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .catalog import CatalogDelta, ToolCatalog
from .context import ContextReport, build_context_report
from .events import CatalogChanged, EngineWarning, Event, ServerStateChanged
from .loaders import CatalogFileError, load_catalog
from .models import ServerState, ServerStatus, ToolSpec
from .settings import Settings

log = logging.getLogger(__name__)

Listener = Callable[[Event], None]


class Engine:
    """Catalog + search + MCP servers + execution behind one async API.

    Args:
        settings: resolved settings (see :func:`toolscout.core.settings.load_settings`).
        catalog_paths: catalog files or directories to load as if they were servers
            (their tools are searchable but not executable).
        builtins: built-in tools to register (objects implementing ``BuiltinTool``).
        core_names: names of built-ins that are core (always loaded); the rest are deferred.
        project_dir: the working directory for built-ins and ``.mcp.json`` discovery.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        catalog_paths: Iterable[str | Path] = (),
        builtins: Iterable[Any] = (),
        core_names: Iterable[str] = (),
        project_dir: str | Path | None = None,
    ) -> None:
        from .search.tool_search import ToolSearch

        self.settings = settings
        self.project_dir = Path(project_dir or Path.cwd())
        self.catalog = ToolCatalog(core_names=core_names, always_load=settings["toolSearch.alwaysLoad"])
        self.search = ToolSearch(self.catalog, settings)
        self.builtins: dict[str, Any] = {}
        self._catalog_paths = [Path(p) for p in catalog_paths]
        self._file_servers: dict[str, ServerStatus] = {}
        self._listeners: list[Listener] = []
        self.warnings: list[str] = [str(w) for w in settings.warnings]
        for tool in builtins:
            self.builtins[tool.spec.name] = tool
            self.catalog.add_builtin(tool.spec)
        self.search.sync()

    # -- events ---------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber; a failing subscriber is logged, not raised."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - one broken listener must not stop the others
                log.exception("event listener failed on %r", event)

    def warn(self, message: str, source: str = "") -> None:
        """Record a warning and emit it."""
        self.warnings.append(f"{source}: {message}" if source else message)
        self.emit(EngineWarning(message, source))

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Load catalog files, then start servers in the background. Returns without waiting."""
        for path in self._catalog_paths:
            self.load_catalog_file(path)

    async def stop(self) -> None:
        """Disconnect every server and release resources. Safe to call twice."""

    def load_catalog_file(self, path: str | Path) -> None:
        """Register every server in a catalog file/directory (bad entries become warnings)."""
        try:
            loaded = load_catalog(path)
        except CatalogFileError as exc:
            self.warn(str(exc), "catalog")
            return
        for message in loaded.warnings:
            self.warn(message, "catalog")
        for group in loaded.servers:
            if group.name is None:
                for tool in group.tools:
                    self.catalog.add_builtin(tool)
                self.apply_delta(CatalogDelta(added=tuple(t.name for t in group.tools)))
                continue
            delta = self.catalog.set_server_tools(group.name, group.tools, group.instructions, group.description)
            status = ServerStatus(group.name, ServerState.CONNECTED, instructions=group.instructions,
                                  tool_count=len(group.tools), transport="file")
            self._file_servers[group.name] = status
            self.apply_delta(delta)
            self.emit(ServerStateChanged(status))

    def apply_delta(self, delta: CatalogDelta) -> None:
        """Update the search index incrementally and announce the change."""
        if delta:
            self.search.sync(delta)
            self.emit(CatalogChanged(delta))

    # -- queries --------------------------------------------------------------------------
    def server_statuses(self) -> list[ServerStatus]:
        """Every known server (configured MCP servers and file catalogs), in a stable order."""
        return list(self._file_servers.values())

    def pending_servers(self) -> list[str]:
        """Names of servers that are still connecting."""
        return [s.name for s in self.server_statuses() if s.state is ServerState.CONNECTING]

    def search_tools(self, query: str, limit: int | None = None):  # -> SearchResult
        """Run a ToolSearch query (grammar of :mod:`toolscout.core.search`). Never raises."""
        return self.search.search(query, limit, pending_servers=self.pending_servers())

    def context_report(self, *, model: str | None = None, strategy: str | None = None,
                       loaded_names: set[str] | None = None,
                       usage_counts: dict[str, int] | None = None) -> ContextReport:
        """Per-server token usage and the mode decision for the current catalog."""
        report = build_context_report(self.catalog, self.settings, model=model, strategy=strategy,
                                      loaded_names=loaded_names, usage_counts=usage_counts)
        report.warnings = list(dict.fromkeys([*report.warnings, *self.warnings]))
        return report

    def tool(self, name: str) -> ToolSpec | None:
        """The tool with this canonical name, or None."""
        return self.catalog.get(name)
