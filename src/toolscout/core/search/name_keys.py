"""Exact-name lookup for :class:`~.index.ToolIndex`: a query that is exactly a tool's full or bare
name (case-insensitive), or spells that name in words ("find symbol" for ``find_symbol``, "list
issues" for ``list_issues``, "github create issue" for ``mcp__github__create_issue``), ranks that
tool first."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from ..models import ToolSpec
from .matrices import Matrices
from .segments import FIELD_INDEX
from .tokenize import analyze, stem, words

#: Longer texts are never looked up as names.
MAX_NAME_KEY = 300
#: The characters of a tool name that may be spelled in words: MCP's tool-name characters
#: (letters, digits, ``_``, ``-``, ``.``; SEP-986) and the ``::`` of ``server::tool``.
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.:\-]+")


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


def spelled(text: str, *, stemmed: bool = True) -> str:
    """``text`` as the words of a name, space-separated, each stemmed unless ``stemmed`` is
    False: ``"find_symbol"``, ``"findSymbol"`` and ``"Find symbols"`` all give ``"find symbol"``.
    Every word counts (stop words too: ``create_or_update_file`` is spelled "creat or updat
    file"); ``""`` for text without words."""
    found = words(text)
    return " ".join(map(stem, found) if stemmed else found)


def spelled_keys(tool: ToolSpec, *, stemmed: bool = True) -> set[str]:
    """The spellings (:func:`spelled`) of every name of ``tool``, read before lower-casing so that
    camelCase splits (``"list issu"`` and ``"github list issu"`` for ``mcp__github__list_issues``,
    ``"search repositori"`` for ``searchRepositories``). Only names made of the characters of
    MCP tool names (:data:`_NAME_CHARS`) are spelled: ``weather_[forecast]`` is not the name
    "weather forecast" spells, and a query of common words does not put it first."""
    names = (n for n in _names(tool) if _NAME_CHARS.fullmatch(n))
    return {key for key in (spelled(n, stemmed=stemmed) for n in names) if key}


class NameKeys:
    """Names of the indexed tools by name key (:func:`exact_keys`), by name words
    (:func:`spelled_keys` unstemmed) and by stemmed name words.

    A text names the tools of the first of these that has it: "browser network requests" names
    ``browser_network_requests`` alone (its words), not also ``browser_network_request`` (the
    same stems); "list issue" names ``list_issues`` (stems).
    """

    def __init__(self) -> None:
        self._tables: tuple[dict[str, set[str]], ...] = ({}, {}, {})

    @staticmethod
    def _keys(tool: ToolSpec) -> tuple[set[str], ...]:
        return exact_keys(tool), spelled_keys(tool, stemmed=False), spelled_keys(tool)

    def add(self, tools: Iterable[ToolSpec]) -> None:
        """Register the keys of ``tools`` (indexed now)."""
        for tool in tools:
            for table, keys in zip(self._tables, self._keys(tool), strict=True):
                for key in keys:
                    table.setdefault(key, set()).add(tool.name)

    def forget(self, tools: Iterable[ToolSpec]) -> None:
        """Drop the keys of ``tools`` (removed or about to be replaced)."""
        for tool in tools:
            for table, keys in zip(self._tables, self._keys(tool), strict=True):
                for key in keys:
                    names = table.get(key)
                    if names is not None:
                        names.discard(tool.name)
                        if not names:
                            del table[key]

    def _matches(self, text: str) -> set[str]:
        text = text.strip()
        if not text or len(text) > MAX_NAME_KEY:
            return set()
        names, plain, stems = self._tables
        return names.get(text.lower()) or plain.get(spelled(text, stemmed=False)) or stems.get(spelled(text)) or set()

    def may_name(self, text: str) -> bool:
        """True when ``text`` (stripped, any case) is some indexed tool's key or spells one."""
        return bool(self._matches(text))

    def positions(self, m: Matrices, text: str) -> list[int]:
        """Live positions in ``m`` of the tools ``text`` names (sorted; see the class)."""
        found = (m.position(name) for name in self._matches(text))
        return sorted(p for p in found if p is not None)


def required_mask(vocab: dict[str, int], m: Matrices, required: Sequence[str]) -> np.ndarray | None:
    """bool[N]: the tools whose *name* holds every word of ``required`` (after tokenising and
    stemming; ToolSearch's ``+word``), or None when ``required`` has no word.

    Args:
        vocab: the store's term → id map. m: the matrices ranked. required: the words.
    """
    terms = [t.term for r in required for t in analyze(r)]
    if not terms:
        return None
    mask = np.ones(m.n_rows, dtype=bool)
    for term in dict.fromkeys(terms):
        tid = vocab.get(term)
        if tid is None:
            return np.zeros(m.n_docs, dtype=bool)
        p = m.postings(np.asarray([tid]))
        in_name = np.zeros(m.n_rows, dtype=bool)
        in_name[p.rows[p.field == FIELD_INDEX["name"]]] = True
        mask &= in_name
    return m.live(mask)
