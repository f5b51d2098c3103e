"""ToolSearch: query grammar, tokenizer, index, ranking profiles and score explanations.

Public API: :class:`ToolSearch` (grammar + catalog-aware search), :class:`ToolIndex`
(ranked retrieval over a plain list of tools, used by eval and prefetch), the result records
in :mod:`toolscout.core.search.results`, :func:`render_for_model` (the ToolSearch
``tool_result`` text) and :func:`explain` (a hit's score breakdown).

Modules: ``tokenize`` (terms) → ``fields`` (what is indexed) → ``store`` (incremental term
store) → ``lexical`` / ``dense`` (signals) → ``profiles`` (fusion) → ``index`` (ToolIndex) →
``grammar`` + ``tool_search`` (ToolSearch) → ``render`` (text for the model and for people).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .grammar import ParsedQuery, parse_query
from .results import ScoredTool, SearchResult

if TYPE_CHECKING:
    from .index import ToolIndex
    from .profiles import PROFILES
    from .render import explain, render_for_model
    from .tool_search import ToolSearch

#: Imported on first use: the index pulls numpy, scipy and scikit-learn (~1 s), which the app's
#: first paint must not wait for (results and grammar are light).
_LAZY = {
    "ToolIndex": ".index",
    "PROFILES": ".profiles",
    "explain": ".render",
    "render_for_model": ".render",
    "ToolSearch": ".tool_search",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROFILES",
    "ParsedQuery",
    "ScoredTool",
    "SearchResult",
    "ToolIndex",
    "ToolSearch",
    "explain",
    "parse_query",
    "render_for_model",
]
