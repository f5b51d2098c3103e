"""Exact-name lookup for :class:`~.index.ToolIndex`: a query that is exactly a tool's full or bare
name (case-insensitive), or spells that name in words ("find symbol" for ``find_symbol``, "list
issues" for ``list_issues``, "github create issue" for ``mcp__github__create_issue``), ranks that
tool first."""

from __future__ import annotations

from collections.abc import Iterable

from ..models import ToolSpec
from .matrices import Matrices
from .tokenize import stem, words

#: Longer texts are never looked up as names.
MAX_NAME_KEY = 300


def _names(tool: ToolSpec) -> set[str]:
    """The names a query may give ``tool`` by, as written: its name, its server's original name,
    and the part after ``::`` of a ``server::tool`` name."""
    names = {tool.name, tool.original_name or tool.name}
    if "::" in tool.name:
        names.add(tool.name.split("::", 1)[1])
    return names


def exact_keys(tool: ToolSpec) -> set[str]:
    """The lower-cased names a query may give ``tool`` by (see :func:`_names`)."""
    return {name.lower() for name in _names(tool)}


def spelled(text: str) -> str:
    """``text`` as the words of a name, each stemmed, space-separated: ``"find_symbol"``,
    ``"findSymbol"`` and ``"Find symbols"`` all give ``"find symbol"``. Every word counts (stop
    words too: ``create_or_update_file`` is spelled "create or update file"); ``""`` for text
    without words."""
    return " ".join(stem(w) for w in words(text))


def spelled_keys(tool: ToolSpec) -> set[str]:
    """The spellings (:func:`spelled`) of every name of ``tool``, read before lower-casing so that
    camelCase splits (``"list issu"`` and ``"github list issu"`` for ``mcp__github__list_issues``,
    ``"search repositori"`` for ``searchRepositories``)."""
    return {key for key in map(spelled, _names(tool)) if key}


class NameKeys:
    """Name key (:func:`exact_keys`) or spelled name (:func:`spelled_keys`) → names of the
    indexed tools with it."""

    def __init__(self) -> None:
        self._names: dict[str, set[str]] = {}
        self._spelled: dict[str, set[str]] = {}

    def add(self, tools: Iterable[ToolSpec]) -> None:
        """Register the keys of ``tools`` (indexed now)."""
        for tool in tools:
            for table, keys in ((self._names, exact_keys(tool)), (self._spelled, spelled_keys(tool))):
                for key in keys:
                    table.setdefault(key, set()).add(tool.name)

    def forget(self, tools: Iterable[ToolSpec]) -> None:
        """Drop the keys of ``tools`` (removed or about to be replaced)."""
        for tool in tools:
            for table, keys in ((self._names, exact_keys(tool)), (self._spelled, spelled_keys(tool))):
                for key in keys:
                    names = table.get(key)
                    if names is not None:
                        names.discard(tool.name)
                        if not names:
                            del table[key]

    def _matches(self, text: str) -> set[str]:
        key = text.strip().lower()
        if not key or len(key) > MAX_NAME_KEY:
            return set()
        named = self._names.get(key)
        if named:
            return named
        return self._spelled.get(spelled(key)) or set()

    def may_name(self, text: str) -> bool:
        """True when ``text`` (stripped, any case) is some indexed tool's key or spells one."""
        return bool(self._matches(text))

    def positions(self, m: Matrices, text: str) -> list[int]:
        """Live positions in ``m`` of the tools whose key ``text`` is (or spells; an exact key
        wins over a spelling, sorted)."""
        found = (m.position(name) for name in self._matches(text))
        return sorted(p for p in found if p is not None)
