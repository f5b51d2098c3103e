"""Prepare a server's tool listing off the event loop (issue 12: adding 47 servers' ~1,700 tools
on the UI loop cost ~0.1 s of CPU per server: schema projection, token counting, search terms).

:func:`prepare_listing` runs on the MCP pool's relay thread before a listing is delivered: it
projects every schema (:func:`~toolscout.core.catalog.registry.projected`, which the catalog then keeps as
is) and fills the process-wide memos that the event loop will read when it adds the tools (token
counts of the full definitions, analysed search-field terms). The loop then mostly looks up.
"""

from __future__ import annotations

from dataclasses import replace

from ..catalog.registry import projected
from ..models import ToolSpec
from ..names import mcp_tool_name
from ..tokens import tool_tokens


def prepare_listing(server: str, tools: list[ToolSpec], server_description: str | None = None) -> list[ToolSpec]:
    """``tools`` with their schemas projected; memos warmed for their canonical form.

    Thread-safe (pure functions and locked memos). Canonical names are the uncontested ones
    (``mcp__<server>__<tool>``); a tool renamed by a collision later just misses the memo.
    """
    from ..search.store import warm_terms  # numpy: imported here, on the relay thread

    out: list[ToolSpec] = []
    for tool in tools:
        ready = projected(tool)
        out.append(ready)
        original = ready.original_name or ready.name
        canonical = replace(ready, name=mcp_tool_name(server, original), server=server, original_name=original)
        tool_tokens(canonical)
        warm_terms(canonical, server_description)
    return out
