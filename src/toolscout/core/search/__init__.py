"""ToolSearch: query grammar, tokenizer, index, ranking profiles and score explanations.

Public API: :class:`ToolSearch` (grammar + catalog-aware search), :class:`ToolIndex`
(ranked retrieval over a plain list of tools, used by eval and prefetch), and the result records
in :mod:`toolscout.core.search.results`.
"""
