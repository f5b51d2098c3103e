"""ToolSearch: query grammar, tokenizer, index, ranking profiles and score explanations.

Public API: :class:`ToolSearch` (grammar + catalog-aware search), :class:`ToolIndex`
(ranked retrieval over a plain list of tools, used by eval and prefetch), the result records
in :mod:`toolscout.core.search.results`, :func:`render_for_model` (the ToolSearch
``tool_result`` text) and :func:`explain` (a hit's score breakdown).

Modules: ``tokenize`` (terms) → ``fields`` (what is indexed) → ``store`` (incremental term
store) → ``lexical`` / ``dense`` (signals) → ``profiles`` (fusion) → ``index`` (ToolIndex) →
``grammar`` + ``tool_search`` (ToolSearch) → ``render`` (text for the model and for people).
"""

from .grammar import ParsedQuery, parse_query
from .index import ToolIndex
from .profiles import PROFILES
from .render import explain, render_for_model
from .results import ScoredTool, SearchResult
from .tool_search import ToolSearch

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
