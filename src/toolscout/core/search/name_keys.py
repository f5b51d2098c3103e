"""Exact-name lookup for :class:`~.index.ToolIndex`: a query that is exactly a tool's full or bare
name (case-insensitive) ranks that tool first."""

from __future__ import annotations

from collections.abc import Iterable

from ..models import ToolSpec
from .matrices import Matrices

#: Longer texts are never looked up as names.
MAX_NAME_KEY = 300


def exact_keys(tool: ToolSpec) -> set[str]:
    """The lower-cased names a query may give ``tool`` by: its name, its server's original name,
    and the part after ``::`` of a ``server::tool`` name."""
    keys = {tool.name.lower(), (tool.original_name or tool.name).lower()}
    if "::" in tool.name:
        keys.add(tool.name.split("::", 1)[1].lower())
    return keys


class NameKeys:
    """Name key (:func:`exact_keys`) → names of the indexed tools with that key."""

    def __init__(self) -> None:
        self._names: dict[str, set[str]] = {}

    def add(self, tools: Iterable[ToolSpec]) -> None:
        """Register the keys of ``tools`` (indexed now)."""
        for tool in tools:
            for key in exact_keys(tool):
                self._names.setdefault(key, set()).add(tool.name)

    def forget(self, tools: Iterable[ToolSpec]) -> None:
        """Drop the keys of ``tools`` (removed or about to be replaced)."""
        for tool in tools:
            for key in exact_keys(tool):
                names = self._names.get(key)
                if names is not None:
                    names.discard(tool.name)
                    if not names:
                        del self._names[key]

    def may_name(self, text: str) -> bool:
        """True when ``text`` (stripped, any case) is some indexed tool's key."""
        key = text.strip().lower()
        return bool(key) and key in self._names

    def positions(self, m: Matrices, text: str) -> list[int]:
        """Live positions in ``m`` of the tools whose key is ``text`` (sorted)."""
        key = text.strip().lower()
        if not key or len(key) > MAX_NAME_KEY:
            return []
        found = (m.position(name) for name in self._names.get(key, ()))
        return sorted(p for p in found if p is not None)
