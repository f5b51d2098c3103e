"""The one tool-name normaliser, used at registration, lookup, ``select:`` and execution.

Rules (from the MCP naming used by Claude Code): MCP tools are exposed as
``mcp__<server>__<tool>``; every character outside ``[A-Za-z0-9_-]`` becomes ``_``; a name sent to
a model is at most 64 characters (the Anthropic and OpenAI limit for tool names). A name that
must be shortened keeps a readable prefix and ends in an 8-hex-digit hash of the full name, so
two long names that share a prefix still differ, and the result is the same on every run.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME_LENGTH = 64
MCP_PREFIX = "mcp__"
#: Names a bare permission rule reserves for a built-in tool: toolscout's own built-ins and the
#: other tools of Claude Code, whose settings format rules follow (a ``Task`` rule written for
#: Claude Code still means that built-in). A rule ``Bash`` never names an MCP server configured
#: as ``Bash``; its tools take ``mcp__Bash`` (see :mod:`toolscout.core.rules.match`).
BUILTIN_TOOL_NAMES = frozenset(
    {
        "Agent",
        "Bash",
        "BashOutput",
        "Edit",
        "ExecuteTool",
        "ExitPlanMode",
        "Glob",
        "Grep",
        "KillShell",
        "LS",
        "ListMcpResources",
        "ListMcpResourcesTool",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "Read",
        "ReadMcpResource",
        "ReadMcpResourceTool",
        "SlashCommand",
        "Skill",
        "Task",
        "TodoWrite",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Write",
    }
)
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_RUNS = re.compile(r"_{2,}")


def sanitize(part: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_-]`` with ``_``.

    >>> sanitize("my server.v2")
    'my_server_v2'
    """
    return _INVALID.sub("_", part)


def normalise_server_name(name: str) -> str:
    """The canonical spelling of a configured MCP server name; ``""`` when nothing usable is left.

    Surrounding whitespace is dropped, :func:`sanitize` applies, runs of ``_`` collapse to one
    and trailing ``_`` go, so the result never contains ``__`` (the server part of
    ``mcp__<server>__<tool>`` always ends at the first ``__``).

    >>> normalise_server_name("time__evil"), normalise_server_name("my.srv"), normalise_server_name("time ")
    ('time_evil', 'my_srv', 'time')
    """
    return _RUNS.sub("_", sanitize(name.strip())).rstrip("_")


def shorten(name: str, limit: int = MAX_NAME_LENGTH) -> str:
    """Return ``name`` if it fits in ``limit`` characters, else a deterministic shortening.

    The shortened form is ``<prefix>_<8 hex of sha1(name)>`` and is exactly ``limit`` long.
    """
    if len(name) <= limit:
        return name
    digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: limit - 9]}_{digest}"


def tool_part(tool: str) -> str:
    """The tool part of a canonical name: ``tool`` sanitised, or, when nothing visible is left
    (``""``, or only characters the rule replaces), the stable placeholder
    ``unnamed_<8 hex of sha1(tool)>``. The tool is still called by its real name.

    >>> tool_part("")
    'unnamed_da39a3ee'
    """
    part = sanitize(tool)
    if part.strip("_-"):
        return part
    return "unnamed_" + hashlib.sha1(tool.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def mcp_tool_name(server: str, tool: str) -> str:
    """Canonical name of an MCP tool: ``mcp__<server>__<tool>``, sanitised and at most 64 chars.

    >>> mcp_tool_name("github", "create_issue")
    'mcp__github__create_issue'
    """
    return shorten(f"{MCP_PREFIX}{sanitize(server)}__{tool_part(tool)}")


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """Split ``mcp__server__tool`` into ``(server, tool)``; None for other names.

    The server part is everything up to the first ``__`` after the prefix (server names with
    ``__`` in them are ambiguous by construction, as in Claude Code).
    """
    if not name.startswith(MCP_PREFIX):
        return None
    rest = name[len(MCP_PREFIX) :]
    server, sep, tool = rest.partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


_ANNOUNCED = re.compile(r"(?P<prefix>mcp__[A-Za-z0-9_-]+?__|built-in)(?:\s*:\s*|\s+)(?P<tool>[A-Za-z0-9_-]+)")


def from_announcement(name: str) -> str:
    """A name copied from a compact announcement line, as the full name it stands for.

    The announcement writes each server's prefix once (``mcp__github__: create_issue ...``,
    see :func:`toolscout.core.serialize.announcement_groups`); a model may copy the prefix and
    one name with the separator. Anything else is returned unchanged.

    >>> from_announcement("mcp__github__: create_issue")
    'mcp__github__create_issue'
    >>> from_announcement("built-in: WebFetch")
    'WebFetch'
    """
    match = _ANNOUNCED.fullmatch(name.strip())
    if match is None:
        return name
    prefix = match.group("prefix")
    return (prefix if prefix != "built-in" else "") + match.group("tool")


#: Wrappers a model puts around a name it writes: quotes, backticks, brackets.
_WRAPPERS = "\"'`[](){}<> \t\r\n"


def written_name(text: str) -> str:
    """A name as a model wrote it, without surrounding quotes, backticks or brackets.

    >>> written_name(' `mcp__github__create_issue` ')
    'mcp__github__create_issue'
    """
    return text.strip().strip(_WRAPPERS).strip()


def loose_key(name: str) -> str:
    """Key that also matches a name written with the configured server spelling: lower case,
    every character other than ``[a-z0-9_]`` read as ``_`` (``mcp__obsidian-graph__vault_read``
    → ``mcp__obsidian_graph__vault_read``), and a name over 64 characters shortened the way
    :func:`mcp_tool_name` shortens it."""
    key = re.sub(r"[^a-z0-9_]", "_", sanitize(written_name(name)).lower())
    return shorten(key) if len(key) > MAX_NAME_LENGTH else key


def lookup_key(name: str) -> str:
    """Case-insensitive key used to look names up (``select:`` is case-insensitive)."""
    return sanitize(name.strip()).lower()


def dedupe(name: str, taken: set[str]) -> str:
    """Resolve a collision deterministically: ``name``, then ``name_2``, ``name_3`` ... (≤ 64 chars)."""
    if name not in taken:
        return name
    n = 2
    while True:
        suffix = f"_{n}"
        candidate = shorten(name, MAX_NAME_LENGTH - len(suffix)) + suffix
        if candidate not in taken:
            return candidate
        n += 1
