"""Text renderings of search results: what the model reads, and the human score explanation.

:func:`render_for_model` produces the ToolSearch ``tool_result`` text: one compact JSON
definition per hit the model does not have yet (a loaded hit, such as Bash, is only named as
"already loaded") (``name``, ``description``, full ``input_schema``, the bytes of
:func:`toolscout.core.serialize.tool_definition`), each server's ``instructions`` once, then
notes for missing, ambiguous, already-loaded and no-good-match cases. Output is deterministic:
the same result and catalog give the same bytes (prompt-cache friendly).

:func:`explain` is the plain-text breakdown used by ``toolscout search --explain`` and the TUI.
"""

from __future__ import annotations

import re

from ..catalog.instructions import budgeted
from ..catalog.registry import ToolCatalog
from ..models import TASK_REQUIRED_REASON
from ..names import from_announcement, sanitize, split_mcp_name
from ..serialize import dumps, tool_definition
from .results import ScoredTool, SearchResult

#: Characters of server instructions included per server.
MAX_INSTRUCTIONS_CHARS = 4_000


def render_for_model(result: SearchResult, catalog: ToolCatalog | None = None) -> str:
    """The ToolSearch ``tool_result`` text for ``result``.

    Args:
        result: a search result. catalog: used for server instructions missing from
            ``result.instructions`` (may be None).

    Returns:
        Plain text, lines separated by ``\\n``, no trailing newline.
    """
    lines: list[str] = []
    loaded = set(result.already_loaded)
    delivered = [hit for hit in result.hits if hit.tool.name not in loaded]
    if delivered:
        noun = "tool" if len(delivered) == 1 else "tools"
        lines.append(f"{len(delivered)} {noun} matched. Their full definitions (JSON):")
        for hit in delivered:
            lines.append(dumps(tool_definition(hit.tool)))
        for hit in delivered:  # listed (the person may ask about it) but never offered as callable
            if hit.tool.needs_task:
                lines.append(f"Not callable: {hit.tool.name}: {TASK_REQUIRED_REASON}.")
        shown: set[str] = set()
        for hit in delivered:
            server = hit.tool.server
            if server is None or server in shown:
                continue
            shown.add(server)
            text = result.instructions.get(server)
            if text is None and catalog is not None:
                text = catalog.instructions.get(server)
            if text:
                text = budgeted(text, MAX_INSTRUCTIONS_CHARS)
                lines.append(f'<server_instructions server="{server}">\n{text}\n</server_instructions>')
    if result.already_loaded:
        lines.append("Already loaded, call directly (no search needed): " + ", ".join(result.already_loaded))
    waiting = _pending_server_of(result)
    for name in result.missing:
        if name in waiting:
            lines.append(
                f"Still connecting: {name} belongs to server {waiting[name]}, which is still connecting; "
                "its tools will be announced when it connects."
            )
            continue
        if name in result.ambiguous:  # its note names the candidates
            continue
        close = result.suggestions.get(name) or []
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        lines.append(f"Not found: {name}.{hint}")
    for error in result.errors:
        lines.append(f"Note: {error}")
    if result.no_good_match and not result.hits and result.pending_servers and not result.errors:
        lines.append(
            f"Nothing among the connected servers' tools matches {result.query!r} yet; still connecting: "
            + ", ".join(sorted(result.pending_servers))
            + ". Their tools will be announced when they connect: search again then."
        )
        return "\n".join(lines)
    if result.no_good_match and not result.hits and not result.errors:  # a note says why already
        what = f" (no tool mentions: {', '.join(result.unmatched_terms)})" if result.unmatched_terms else ""
        lines.append(
            f"No good match for {result.query!r}{what}. Try other words, a shorter query, or select:<exact tool name>."
        )
    named = _pending_named(result) if result.mode != "select" else []
    if named:  # the query asks for a server that is not in yet: say so, even next to other hits
        lines.append(
            "Still connecting: server "
            + ", ".join(named)
            + "; its tools will be announced when it connects: search again then."
        )
    elif result.pending_servers and not result.hits:
        lines.append(
            "Servers still connecting (their tools may appear shortly): " + ", ".join(sorted(result.pending_servers))
        )
    if not lines:
        lines.append("No tools matched.")
    return "\n".join(lines)


def _pending_named(result: SearchResult) -> list[str]:
    """Servers still connecting whose name the query spells out (``slack``, ``google workspace``
    for ``google-workspace``): words are compared case-insensitively, every part must occur."""
    words = set(re.split(r"[^0-9a-z]+", result.query.lower()))
    out = []
    for server in sorted(result.pending_servers):
        parts = [p for p in re.split(r"[^0-9a-z]+", server.lower()) if p]
        if parts and all(p in words for p in parts):
            out.append(server)
    return out


def _pending_server_of(result: SearchResult) -> dict[str, str]:
    """Missing ``select:`` names whose server part names a server still connecting → that server."""
    servers = {sanitize(p): p for p in result.pending_servers} | {p: p for p in result.pending_servers}
    out: dict[str, str] = {}
    for name in result.missing:
        parts = split_mcp_name(from_announcement(name).strip())
        if parts is not None and parts[0] in servers:
            out[name] = servers[parts[0]]
    return out


def explain(hit: ScoredTool) -> str:
    """Multi-line plain-text explanation of one hit's score.

    Shows the total, each component's raw value and weighted contribution (contributions sum
    to the total), the query-level gate, the query words matched per field, and what the
    stuffing bounds capped (``capped: repeated terms capped: …``).
    """
    lines = [f"{hit.tool.name}  score {hit.score:.4f}" + ("  (exact name)" if hit.exact_name else "")]
    for name, value in hit.components.items():
        raw = hit.raw.get(name)
        raw_text = f"raw {raw:.4f}" if raw is not None else "raw -"
        lines.append(f"  {name:<11} {raw_text:<16} weighted {value:.4f}")
    gate = hit.raw.get("gate")
    if gate is not None:
        lines.append(f"  {'gate':<11} {gate:.4f}  (query confidence; scales every component)")
    if hit.matched:
        lines.append("  matched:")
        for field_name, terms in hit.matched.items():
            lines.append(f"    {field_name}: {', '.join(terms)}")
    else:
        lines.append(
            "  matched: (no query word; semantic match only)" if hit.components.get("dense") else "  matched: -"
        )
    lines.extend(f"  capped: {note}" for note in hit.notes)
    return "\n".join(lines)
