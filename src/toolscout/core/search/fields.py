"""The searchable fields of a tool, and the text the dense encoder sees.

Fields (``shared/research/retrieval-ceiling.md``, "Recommended default"): tool name parts, search
hint, server name, server description, description, ``inputSchema`` parameter names and parameter
descriptions (nested ``properties``, ``items``, ``anyOf``/``oneOf``/``allOf`` included).

Schemas come from untrusted servers: the walk is iterative, bounded in depth and node count, and
ignores anything that is not the shape it expects, so malformed or self-referencing schemas can
neither loop nor raise.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..models import ToolSpec
from .tokenize import clean, words

#: Field names in index order.
FIELDS: tuple[str, ...] = (
    "name",
    "hint",
    "server",
    "server_description",
    "description",
    "param_names",
    "param_descriptions",
)
#: Schema walk limits: nesting depth and number of schema nodes visited per tool.
MAX_SCHEMA_DEPTH = 8
MAX_SCHEMA_NODES = 2_000
#: Keys under which a schema node can hold further schema nodes.
_NESTING = frozenset(("properties", "items", "anyOf", "oneOf", "allOf", "additionalProperties"))
#: Characters of a field's text that are indexed (a 1 MB description is not a better match).
MAX_FIELD_CHARS = 20_000


def schema_params(schema: Any) -> tuple[list[str], list[str]]:
    """Parameter names and parameter descriptions of a JSON Schema, breadth first.

    Args:
        schema: the tool's ``inputSchema`` (any value; non-dicts give nothing).

    Returns:
        ``(names, descriptions)``, each in discovery order, names without duplicates.
    """
    names: list[str] = []
    seen_names: set[str] = set()
    descriptions: list[str] = []
    seen_nodes: set[int] = set()
    queue: deque[tuple[Any, int]] = deque([(schema, 0)])
    visited = 0
    while queue and visited < MAX_SCHEMA_NODES:
        node, depth = queue.popleft()
        if not isinstance(node, dict) or id(node) in seen_nodes or depth > MAX_SCHEMA_DEPTH:
            continue
        seen_nodes.add(id(node))
        visited += 1
        props = node.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if isinstance(key, str) and key not in seen_names:
                    seen_names.add(key)
                    names.append(key)
                if isinstance(sub, dict):
                    desc = sub.get("description")
                    if isinstance(desc, str) and desc:
                        descriptions.append(desc)
                    if not _NESTING.isdisjoint(sub):  # leaf schemas (most parameters) end here
                        queue.append((sub, depth + 1))
        items = node.get("items")
        if isinstance(items, dict):
            queue.append((items, depth + 1))
        elif isinstance(items, list):
            queue.extend((it, depth + 1) for it in items[:50])
        for combo in ("anyOf", "oneOf", "allOf"):
            alts = node.get(combo)
            if isinstance(alts, list):
                queue.extend((alt, depth + 1) for alt in alts[:50])
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            queue.append((extra, depth + 1))
    return names, descriptions


def tool_fields(tool: ToolSpec, server_description: str | None = None) -> dict[str, str]:
    """The text of every field of ``tool`` (see :data:`FIELDS`); missing fields are ``""``."""
    names, descriptions = schema_params(tool.input_schema)
    fields = {
        "name": tool.name,
        "hint": tool.search_hint or "",
        "server": tool.server or "",
        "server_description": server_description or "",
        "description": tool.description or "",
        "param_names": " ".join(names),
        "param_descriptions": "\n".join(descriptions),
    }
    return {k: clean(v)[:MAX_FIELD_CHARS] for k, v in fields.items()}


def bare_tool_words(tool: ToolSpec) -> str:
    """The tool's own name as words, without server prefix (``"create issue"``)."""
    bare = tool.original_name or tool.name
    if "::" in bare:
        bare = bare.split("::", 1)[1]
    return " ".join(words(bare))


def dense_text(tool: ToolSpec, server_description: str | None = None) -> str:
    """The text embedded for a tool.

    Format (research doc, dense step 4): ``"<server> <tool name words>: <description>
    Parameters: <p1>, <p2>, … <server description>"``; parts that are empty are left out. A tool
    with a search hint has it before the description (``"<head>: <hint>. <description> …"``),
    where the 256 word pieces the encoder reads cannot cut it off.
    """
    names, _ = schema_params(tool.input_schema)
    head = " ".join(p for p in (" ".join(words(tool.server or "")), bare_tool_words(tool)) if p)
    hint = clean(tool.search_hint or "").strip()[:500]
    body = clean(tool.description or "")[:MAX_FIELD_CHARS]
    text = f"{head}: {hint}. {body}".strip() if hint else f"{head}: {body}".strip()
    if names:
        text += " Parameters: " + ", ".join(" ".join(words(n)) or n for n in names[:40])
    if server_description:
        text += " " + clean(server_description)[:2_000]
    return text
