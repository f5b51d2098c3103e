"""Catalog files given to the engine (``--catalog``): each file's servers registered as if they
had connected (searchable, not executable), and each path that gave no tool remembered with why.

A mixin of :class:`~toolscout.core.engine.facade.Engine` (kept apart so the facade stays readable); it
uses the engine's ``catalog``, ``warn``, ``apply_delta`` and ``emit``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..catalog.loaders import CatalogFileError, load_catalog
from ..catalog.registry import CatalogDelta, ToolCatalog
from ..models import ServerState, ServerStatus
from .events import ServerStateChanged


class CatalogFiles:
    """Loading of catalog files into the engine (see the module docstring).

    Attributes:
        catalog_failures: each catalog path that gave no tool → why (unreadable, not a catalog,
            empty); the CLI fails a catalog-only run in which every path is here.
    """

    catalog: ToolCatalog
    _catalog_paths: list[Path]
    catalog_failures: dict[Path, str]
    #: server name → status of the servers that came from catalog files
    _file_servers: dict[str, ServerStatus]
    warn: Callable[..., None]
    apply_delta: Callable[[CatalogDelta], None]
    emit: Callable[[Any], None]

    @property
    def catalog_paths(self) -> list[Path]:
        """The catalog files/directories given to the engine (loaded by :meth:`start`)."""
        return list(self._catalog_paths)

    def load_catalog_file(self, path: str | Path) -> None:
        """Register every server in a catalog file/directory (bad entries become warnings; a
        path that gives no tool at all is also recorded in :attr:`catalog_failures`)."""
        try:
            loaded = load_catalog(path)
        except CatalogFileError as exc:
            self.warn(str(exc), "catalog")
            self.catalog_failures[Path(path)] = str(exc)
            return
        for message in loaded.warnings:
            self.warn(message, "catalog")
        if not any(group.tools for group in loaded.servers):
            why = (
                loaded.warnings[0]
                if loaded.warnings
                else "no tools in it (expected a tools/list dump, JSONL tool lines, or a directory of them)"
            )
            self.catalog_failures[Path(path)] = why if why.startswith(str(path)) else f"{path}: {why}"
        for group in loaded.servers:
            if group.name is None:
                for tool in group.tools:
                    self.catalog.add_builtin(tool)
                self.apply_delta(CatalogDelta(added=tuple(t.name for t in group.tools)))
                continue
            delta = self.catalog.set_server_tools(group.name, group.tools, group.instructions, group.description)
            status = ServerStatus(
                group.name,
                ServerState.CONNECTED,
                instructions=group.instructions,
                tool_count=len(group.tools),
                transport="file",
            )
            self._file_servers[group.name] = status
            self.apply_delta(delta)
            self.emit(ServerStateChanged(status))
