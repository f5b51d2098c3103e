"""What the model is told in user turns: deferred-tool announcements, deltas and recommendations.

Announcements never go into the system prompt (that would break the prompt cache whenever a
server connects); they ride in ``<system-reminder>`` text blocks of user messages, as in Claude
Code. The formats below are also *parsed back*: the sets of announced, discovered and
recommended tools are rebuilt from message history, so they survive resume and compaction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import ToolSpec
from ..serialize import budgeted_groups, one_line, parse_announcement_line
from ..tokens import default_counter
from .native import referenced

FULL_TAG = "available-deferred-tools"
ADDED_TAG = "deferred-tools-added"
REMOVED_TAG = "deferred-tools-removed"
DISCOVERY_TAG = "tool_discovery"
LOADED_TAG = "loaded-tools"

_BLOCK = re.compile(
    r"<(?P<tag>available-deferred-tools|deferred-tools-added|deferred-tools-removed|"
    r"tool_discovery|loaded-tools)>\n?(?P<body>.*?)</(?P=tag)>",
    re.DOTALL,
)


def wrap(text: str) -> str:
    """``text`` inside a ``<system-reminder>`` element."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


#: How the compact announcement reads (prefix written once per server).
HOW_TO_READ = (
    'Names are grouped by prefix, written once: the line "mcp__github__: create_issue list_issues" '
    "announces mcp__github__create_issue and mcp__github__list_issues. Always use the full name "
    "(prefix + name)."
)


#: How a server summary line reads (an announcement over its token budget).
HOW_TO_READ_SUMMARY = (
    'A line "mcp__github__* (26 tools): issue, branch" stands for every tool of that server: '
    'find them with ToolSearch keywords (or "select:" when you know a name).'
)
#: Default of ``toolSearch.announceBudget``: tokens an announcement's name lines may take.
DEFAULT_ANNOUNCE_BUDGET = 1_500


def _lines(tools: Sequence[ToolSpec], budget: int | None) -> list[str]:
    big = 10**9 if budget is None else budget
    return budgeted_groups(tools, big, default_counter().count)


def _how_to_read(lines: Sequence[str]) -> str:
    return f"{HOW_TO_READ} {HOW_TO_READ_SUMMARY}" if any("__* (" in line for line in lines) else HOW_TO_READ


def full_announcement(tools: Sequence[ToolSpec], strategy: str, budget: int | None = None) -> str:
    """The first announcement: every deferred tool by name, grouped by server; over ``budget``
    tokens (``toolSearch.announceBudget``; None: no budget), the largest servers as one summary
    line each (:func:`~toolscout.core.serialize.budgeted_groups`)."""
    how = (
        "then call it directly by name"
        if strategy == "stub"
        else 'then call it with ExecuteTool {"tool_name": NAME, "params": {...}}'
    )
    lines = _lines(tools, budget)
    body = "\n".join(lines) if tools else "(none yet)"
    return wrap(
        "These deferred tools are available by name only; their schemas are not loaded. "
        f'Load one with ToolSearch ("select:NAME" or keywords), {how}. {_how_to_read(lines)}\n'
        f"<{FULL_TAG}>\n{body}\n</{FULL_TAG}>"
    )


def delta_announcement(added: Sequence[ToolSpec], removed: Sequence[str], budget: int | None = None) -> str:
    """A later change to the deferred set: tools added (grouped, within ``budget`` tokens as
    :func:`full_announcement`) and names removed (``mcp__server__*`` for a summarised server)."""
    parts = ["The set of deferred tools changed."]
    if added:
        lines = _lines(added, budget)
        if any("__* (" in line for line in lines):
            parts[0] += " " + HOW_TO_READ_SUMMARY
        parts.append(f"<{ADDED_TAG}>\n" + "\n".join(lines) + f"\n</{ADDED_TAG}>")
    if removed:
        parts.append(f"<{REMOVED_TAG}>\n" + "\n".join(removed) + f"\n</{REMOVED_TAG}>")
    return wrap("\n".join(parts))


def unlisted_announcement(tools: Sequence[ToolSpec], max_tools: int | None, budget: int | None = None) -> str:
    """Stub strategy: deferred tools that got no stub because the tools array holds the most
    tools one request may carry (``max_tools``); they are called through ExecuteTool. Within
    ``budget`` tokens as :func:`full_announcement`."""
    full = f"holds the {max_tools:,} tools one request may carry" if max_tools else "is full"
    lines = _lines(tools, budget)
    return wrap(
        f"These deferred tools are not in your tool list (it {full}), not even as stubs. Load one with "
        'ToolSearch ("select:NAME" or keywords), then call it with ExecuteTool {"tool_name": NAME, '
        f'"params": {{...}}}}. {_how_to_read(lines)}\n'
        f"<{ADDED_TAG}>\n" + "\n".join(lines) + f"\n</{ADDED_TAG}>"
    )


def discovery_reminder(tools: Iterable[tuple[str, str]], strategy: str) -> str:
    """Recommendations for the model: ``(name, description)`` pairs, one line each."""
    how = 'ToolSearch "select:NAME" loads the schema'
    lines = [f"{name} — {one_line(desc, 120)}" if desc else name for name, desc in tools]
    return wrap(
        f"Deferred tools that may help with the current task ({how}; then call "
        f"{'it directly' if strategy == 'stub' else 'it with ExecuteTool'}):\n"
        f"<{DISCOVERY_TAG}>\n" + "\n".join(lines) + f"\n</{DISCOVERY_TAG}>"
    )


def loaded_trailer(names: Sequence[str]) -> str:
    """Line appended to a ToolSearch result naming the tools whose schemas it delivered."""
    return f"<{LOADED_TAG}>\n" + "\n".join(names) + f"\n</{LOADED_TAG}>"


def _names(body: str) -> list[str]:
    return [name for line in body.splitlines() for name in parse_announcement_line(line)]


@dataclass
class HistoryState:
    """Sets rebuilt from message history.

    Attributes:
        announced: deferred tool names the model has been told about (in announcement order).
        discovered: tools whose schemas a ToolSearch result delivered, or that ran successfully.
        recommended: tools already recommended in a ``tool_discovery`` reminder.
        full_sent: a full announcement exists in the history.
    """

    announced: dict[str, None] = field(default_factory=dict)
    discovered: set[str] = field(default_factory=set)
    recommended: set[str] = field(default_factory=set)
    full_sent: bool = False

    def covers(self, name: str) -> bool:
        """True if ``name`` was announced: by name, or by its server's summary line
        (``mcp__github__*`` in :attr:`announced`)."""
        return name in self.announced or any(a.endswith("__*") and name.startswith(a[:-1]) for a in self.announced)

    def gone(self, now: set[str]) -> list[str]:
        """Announced entries that ``now`` (the current deferred names) no longer has: names,
        and summary wildcards of servers with no deferred tool left."""
        return [
            a
            for a in self.announced
            if (not any(n.startswith(a[:-1]) for n in now) if a.endswith("__*") else a not in now)
        ]


def rebuild_state(messages: Iterable[dict[str, Any]], initial: Iterable[str] | None = None) -> HistoryState:
    """Replay ``messages`` (internal format) and return what was announced, discovered, recommended.

    Announcement and discovery tags are read only from user text blocks (toolscout writes them
    there); ``<loaded-tools>`` only from results of ToolSearch calls. Assistant text and other
    tool results are untrusted and could imitate the tags, so they are never parsed. A
    successful ExecuteTool call also counts as a discovery of its target.

    Args:
        initial: names announced before any message (the stub strategy's first tools array,
            which announces its stubs itself); counts as a full announcement.
    """
    state = HistoryState()
    if initial is not None:
        state.announced = dict.fromkeys(initial)
        state.full_sent = True
    search_ids: set[str] = set()
    targets: dict[str, str] = {}  # tool_use id -> the real tool it called
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if message.get("role") == "assistant":
                if kind != "tool_use":
                    continue
                if block.get("name") == "ToolSearch":
                    search_ids.add(str(block.get("id")))
                elif block.get("name") == "ExecuteTool":
                    target = (block.get("input") or {}).get("tool_name")
                    if isinstance(target, str):
                        targets[str(block.get("id"))] = target
                else:
                    targets[str(block.get("id"))] = str(block.get("name"))
                continue
            if kind == "text":
                _apply_tags(state, str(block.get("text", "")), loaded=False)
            elif kind == "tool_result":
                use_id = str(block.get("tool_use_id"))
                if use_id in search_ids:
                    _apply_tags(state, _result_text(block.get("content")), loaded=True)
                    state.discovered.update(referenced(block.get("content")))  # native: tool_reference blocks
                elif use_id in targets:
                    # A success, or the self-healing gate's refusal that carried the definition
                    # (its trailer); only the call's own target counts, whatever the text says.
                    target = targets[use_id]
                    scratch = HistoryState()
                    _apply_tags(scratch, _result_text(block.get("content")), loaded=True)
                    if not block.get("is_error") or target in scratch.discovered:
                        state.discovered.add(target)
    return state


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or () if isinstance(b, dict))


def _apply_tags(state: HistoryState, text: str, *, loaded: bool) -> None:
    for match in _BLOCK.finditer(text):
        tag, names = match.group("tag"), _names(match.group("body"))
        if loaded:
            if tag == LOADED_TAG:
                state.discovered.update(names)
        elif tag == FULL_TAG:
            state.announced = dict.fromkeys(names)
            state.full_sent = True
        elif tag == ADDED_TAG:
            state.announced.update(dict.fromkeys(names))
        elif tag == REMOVED_TAG:
            for name in names:
                state.announced.pop(name, None)
        elif tag == DISCOVERY_TAG:
            state.recommended.update(names)
