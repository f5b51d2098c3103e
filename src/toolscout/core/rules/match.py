"""Does a permission (or ``alwaysLoad``) pattern name this tool? Exact on the server part.

Pattern forms (Claude Code's, matched case-sensitively):

- a built-in's name (``Bash``) or a glob over built-in names (``Note*``): the built-in only;
- a server: ``github`` or ``mcp__github`` (every tool of that server). A bare word that is a
  built-in's name (:data:`~toolscout.core.names.BUILTIN_TOOL_NAMES`) never names a server: a
  server configured as ``Bash`` is reached by ``mcp__Bash`` / ``mcp__Bash__*`` only, so a rule
  written for the built-in never grants (or denies) the tools of a server that took its name;
- a tool: ``mcp__github__create_issue``;
- a glob: ``mcp__github__*``, ``mcp__git*`` (servers), ``mcp__*__read_*``.

An ``mcp__`` pattern is split at its first ``__`` after the prefix into a server part and a tool
part, and each is matched on its own: a glob never crosses the ``__`` boundary, so
``mcp__time__*`` matches tools of the server ``time`` only, never of ``time_evil`` (configured as
``time__evil``) or ``time_2`` (configured as ``time ``). Server names are canonical (see
:func:`toolscout.core.names.normalise_server_name`); a pattern may name a server by its
configured spelling (``my.srv``) or its canonical one (``my_srv``): ``spellings`` maps configured
spellings to canonical names and wins over normalising the pattern.

A tool answers to its catalog name and to the canonical name of the tool it calls
(``mcp_tool_name(server, original_name)``), so a collision alias (``..._2``) is matched by every
rule that matches the real tool. A bare glob such as ``*`` keeps matching whole names.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from ..models import ToolSpec
from ..names import BUILTIN_TOOL_NAMES, MCP_PREFIX, mcp_tool_name, normalise_server_name, sanitize

_GLOB = "*?["


def is_glob(pattern: str) -> bool:
    """True when ``pattern`` has ``fnmatch`` wildcards."""
    return any(ch in pattern for ch in _GLOB)


def resolve_server(part: str, spellings: Mapping[str, str] | None = None) -> str:
    """The canonical server name a rule's server part means: its configured spelling if one
    server was configured so, else the part normalised (``my.srv`` → ``my_srv``)."""
    if spellings:
        for candidate in (part, part.strip()):
            if candidate in spellings:
                return spellings[candidate]
    return normalise_server_name(part)


def split_rule(pattern: str) -> tuple[str, str | None] | None:
    """``(server part, tool part or None)`` of an MCP rule, or None for a built-in rule.

    ``mcp__github`` → ``("github", None)``; ``mcp__github__x`` → ``("github", "x")``; a bare
    word without wildcards (``github``) is a server rule too, unless it is a built-in's name
    (``Bash`` → None).
    """
    if pattern.startswith(MCP_PREFIX):
        server, sep, tool = pattern[len(MCP_PREFIX) :].partition("__")
        return server, (tool if sep else None)
    if is_glob(pattern) or pattern.strip() in BUILTIN_TOOL_NAMES:
        return None
    return pattern, None


def server_rule(server: str) -> str:
    """The rule to suggest for every tool of ``server`` (canonical name): ``mcp__<server>``, which
    names that server whatever it is called (a bare ``Bash`` would mean the built-in)."""
    return f"{MCP_PREFIX}{server}"


def server_matches(part: str, server: str, spellings: Mapping[str, str] | None = None) -> bool:
    """True when a rule's server part names ``server`` (canonical): exactly, or as a glob over
    canonical server names (which never contain ``__``)."""
    if is_glob(part):
        return fnmatch.fnmatchcase(server, part)
    return resolve_server(part, spellings) == server


def tool_parts(tool: ToolSpec) -> set[str]:
    """Every spelling of an MCP tool's own part: its catalog name's and its real tool's."""
    assert tool.server is not None
    prefix = f"{MCP_PREFIX}{tool.server}__"
    original = tool.original_name or tool.name
    parts = {original, sanitize(original)}
    for name in (tool.name, mcp_tool_name(tool.server, original)):
        if name.startswith(prefix):
            parts.add(name[len(prefix) :])
    return parts


def matches(tool: ToolSpec, pattern: str, spellings: Mapping[str, str] | None = None) -> bool:
    """True when ``pattern`` names ``tool`` (see the module docstring for the forms).

    Args:
        tool: a catalog tool (``server`` None for built-ins, canonical otherwise).
        pattern: one rule, as written in settings.
        spellings: configured server spelling → canonical name, for rules written with the
            configured spelling.
    """
    stripped = pattern.strip()
    if not stripped:
        return False
    if tool.server is None:
        return stripped == tool.name or (is_glob(stripped) and fnmatch.fnmatchcase(tool.name, stripped))
    split = split_rule(pattern if spellings and pattern in spellings else stripped)
    if split is None:  # a bare glob (``*``): over whole names, as before
        return fnmatch.fnmatchcase(tool.name, stripped)
    server_part, tool_part = split
    if not server_matches(server_part, tool.server, spellings):
        return False
    if tool_part is None:
        return True
    parts = tool_parts(tool)
    if is_glob(tool_part):
        return any(fnmatch.fnmatchcase(p, tool_part) for p in parts)
    return tool_part in parts or sanitize(tool_part) in parts


def covers_server(pattern: str, server: str, spellings: Mapping[str, str] | None = None) -> bool:
    """True when ``pattern`` names the whole server (``srv``, ``mcp__srv``, ``mcp__srv__*``,
    ``mcp__*``, ``*``): used for what is not a tool, such as the server's resources."""
    stripped = pattern.strip()
    if not stripped:
        return False
    split = split_rule(pattern if spellings and pattern in spellings else stripped)
    if split is None:
        return stripped == "*"
    server_part, tool_part = split
    return tool_part in (None, "*") and server_matches(server_part, server, spellings)
