"""The tool catalog: every tool the engine knows, built-in and MCP, with its projected schema.

Rooms: :mod:`.registry` (:class:`ToolCatalog`, deltas, core vs deferred), :mod:`.loaders`
(catalog files, ``tools/list`` dumps), :mod:`.instructions` (server instructions within a budget).
"""

from .loaders import CatalogFileError, load_catalog
from .registry import ALWAYS_CORE, CatalogDelta, ToolCatalog, ToolState

__all__ = ["ALWAYS_CORE", "CatalogDelta", "CatalogFileError", "ToolCatalog", "ToolState", "load_catalog"]
