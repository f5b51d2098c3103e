"""``select:`` queries of :class:`~.tool_search.ToolSearch`: load tools by name, in any form the
catalog resolves (:meth:`~toolscout.core.catalog.registry.ToolCatalog.resolve`), with "did you mean"
suggestions for names that match nothing and a note for servers still connecting."""

from __future__ import annotations

import difflib

from ..catalog.registry import ToolCatalog
from ..names import sanitize, split_mcp_name
from .grammar import MAX_SELECT, ParsedQuery
from .results import ScoredTool, SearchResult

#: Close names offered for a name that matches no tool.
MAX_SUGGESTIONS = 3


def select_tools(catalog: ToolCatalog, parsed: ParsedQuery, result: SearchResult, pending: set[str]) -> None:
    """Fill ``result`` for the ``select:`` query ``parsed``: a hit (score 1.0) per deferred tool
    named, ``already_loaded`` for loaded ones, ``missing`` (with ``suggestions``) for names that
    match no tool or several, and errors saying why.

    Args:
        pending: servers still connecting (a missing name of theirs may come soon).
    """
    if not parsed.names:
        result.errors.append("select: needs one or more tool names, e.g. select:mcp__github__create_issue")
        return
    if parsed.truncated:
        result.errors.append(f"select: takes at most {MAX_SELECT} names; the rest were ignored")
    seen: set[str] = set()
    for name in parsed.names:
        matches = catalog.resolve(name)
        if len(matches) > 1:
            result.missing.append(name)
            result.ambiguous.append(name)
            result.suggestions[name] = [t.name for t in matches][:10]
            shown = ", ".join(result.suggestions[name][:5]) + (", …" if len(matches) > 5 else "")
            result.errors.append(
                f"{name!r} is ambiguous: {len(matches)} tools have that name ({shown}); use the full name"
            )
            continue
        if not matches:
            result.missing.append(name)
            close = suggest(catalog, name)
            if close:
                result.suggestions[name] = close
            server = _server_of(name)
            if server is not None and (server in pending or server in {sanitize(p) for p in pending}):
                result.errors.append(f"server {server} is still connecting; {name} may be available shortly")
            continue
        tool = matches[0]
        if tool.name in seen:
            continue
        seen.add(tool.name)
        if not catalog.is_deferred(tool):
            result.already_loaded.append(tool.name)
            continue
        result.hits.append(
            ScoredTool(tool=tool, score=1.0, components={"select": 1.0}, raw={"select": 1.0}, exact_name=True)
        )


def suggest(catalog: ToolCatalog, name: str) -> list[str]:
    """Up to :data:`MAX_SUGGESTIONS` tool names close to ``name`` (full or bare, any case)."""
    by_key: dict[str, str] = {}
    for tool in catalog.tools():
        by_key.setdefault(tool.name.lower(), tool.name)
        by_key.setdefault(tool.bare_name.lower(), tool.name)
    close = difflib.get_close_matches(name.lower()[:200], list(by_key), n=MAX_SUGGESTIONS * 2, cutoff=0.6)
    return list(dict.fromkeys(by_key[c] for c in close))[:MAX_SUGGESTIONS]


def _server_of(name: str) -> str | None:
    parts = split_mcp_name(name.strip())
    if parts is not None:
        return parts[0]
    if "::" in name:
        return name.split("::", 1)[0].strip() or None
    return None
