"""OpenAI's native deferral: the Responses API with a client-executed ``tool_search`` tool.

Used by :class:`~.openai_provider.OpenAIProvider` when the session's projection is native
(:mod:`toolscout.core.session.native`: a tools array whose deferred tools carry ``defer_loading``).
The wire form follows OpenAI's *Tool search* guide and Codex (``codex-rs`` ``tool_search``):

* ``tools``: ``{"type": "tool_search", "execution": "client", "description", "parameters"}`` (the
  ToolSearch tool, ranked by toolscout) and the loaded tools as functions. Deferred tools are not
  listed: the model learns their names from the announcement and loads them with tool_search;
  so the array never changes when servers connect late.
* The model's ``tool_search_call`` (``call_id``, ``arguments`` as an object) becomes a ToolSearch
  ``tool_use``; its ``tool_result`` (``tool_reference`` blocks) goes back as ``tool_search_output``
  with the loaded tools, MCP ones grouped in a ``namespace`` per server (``mcp__github`` holding
  ``create_issue``), each function with ``"defer_loading": true``.
* A ``function_call`` with a ``namespace`` is the canonical ``<namespace>__<name>``.
"""

from __future__ import annotations

import json
from typing import Any

from .base import ModelRequest, ModelResponse, Usage, merge_consecutive

TOOL_SEARCH = "ToolSearch"


def is_native(request: ModelRequest) -> bool:
    """True when ``request`` comes from a native projection (a tool with ``defer_loading``)."""
    return any(isinstance(t, dict) and t.get("defer_loading") for t in request.tools)


def _function(tool: dict[str, Any], name: str | None = None, deferred: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "function",
        "name": name or tool["name"],
        "description": tool.get("description", ""),
        "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        "strict": False,
    }
    if deferred:
        out["defer_loading"] = True
    return out


def split_name(name: str) -> tuple[str | None, str]:
    """``mcp__github__create_issue`` → ``("mcp__github", "create_issue")``; other names have no namespace."""
    if name.startswith("mcp__"):
        cut = name.find("__", len("mcp__"))
        if cut > len("mcp__") and cut + 2 < len(name):
            return name[:cut], name[cut + 2 :]
    return None, name


def loaded_tools(names: list[str], definitions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``tools`` of a ``tool_search_output``: MCP tools in one namespace per server (first-hit
    order), other tools as top-level functions; every function deferred-loaded."""
    out: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for name in names:
        tool = definitions.get(name)
        if tool is None:
            continue
        space, bare = split_name(name)
        if space is None:
            out.append(_function(tool, deferred=True))
            continue
        if space not in spaces:
            spaces[space] = {
                "type": "namespace",
                "name": space,
                "description": f"Tools of the MCP server {space[len('mcp__') :]}.",
                "tools": [],
            }
            out.append(spaces[space])
        spaces[space]["tools"].append(_function(tool, bare, deferred=True))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or () if isinstance(b, dict))


def responses_body(request: ModelRequest, default_model: str) -> dict[str, Any]:
    """Responses API parameters for a native ``request`` (see the module docstring)."""
    definitions = {t["name"]: t for t in request.tools}
    tools: list[dict[str, Any]] = []
    for tool in request.tools:
        if tool["name"] == TOOL_SEARCH:
            tools.append(
                {
                    "type": "tool_search",
                    "execution": "client",
                    "description": tool.get("description", ""),
                    "parameters": tool.get("input_schema"),
                }
            )
        elif not tool.get("defer_loading"):
            tools.append(_function(tool))
    items: list[dict[str, Any]] = []
    searches: set[str] = set()
    for message in merge_consecutive(request.messages):
        blocks = message["content"]
        text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text")
        if message["role"] == "assistant":
            if text:
                items.append({"role": "assistant", "content": text})
            for b in blocks:
                if b.get("type") != "tool_use":
                    continue
                if b["name"] == TOOL_SEARCH:
                    searches.add(b["id"])
                    items.append(
                        {
                            "type": "tool_search_call",
                            "call_id": b["id"],
                            "execution": "client",
                            "status": "completed",
                            "arguments": b.get("input") or {},
                        }
                    )
                    continue
                space, bare = split_name(b["name"])
                call = {
                    "type": "function_call",
                    "call_id": b["id"],
                    "name": bare,
                    "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False),
                }
                items.append({**call, "namespace": space} if space else call)
            continue
        for b in blocks:
            if b.get("type") != "tool_result":
                continue
            content = b.get("content")
            if b["tool_use_id"] in searches:
                names = (
                    [
                        str(x.get("tool_name"))
                        for x in content
                        if isinstance(x, dict) and x.get("type") == "tool_reference"
                    ]
                    if isinstance(content, list)
                    else []
                )
                items.append(
                    {
                        "type": "tool_search_output",
                        "call_id": b["tool_use_id"],
                        "execution": "client",
                        "status": "completed",
                        "tools": loaded_tools(names, definitions),
                    }
                )
                if not names:  # nothing loaded: the search's own text says why
                    items.append({"role": "user", "content": _text(content)})
                continue
            output = _text(content)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": b["tool_use_id"],
                    "output": ("Error: " + output) if b.get("is_error") else output,
                }
            )
        if text:
            items.append({"role": "user", "content": text})
    return {
        "model": request.model or default_model,
        "instructions": request.system,
        "input": items,
        "tools": tools,
        "max_output_tokens": request.max_tokens,
    }


def parse_response(response: Any) -> ModelResponse:
    """A final ``Response`` (the SDK's object) → the internal assistant content and usage."""
    content: list[dict[str, Any]] = []
    text = "".join(
        part.text
        for item in response.output
        if item.type == "message"
        for part in item.content
        if getattr(part, "type", "") == "output_text"
    )
    if text:
        content.append({"type": "text", "text": text})
    for item in response.output:
        if item.type == "tool_search_call" and item.execution == "client":
            arguments = item.arguments if isinstance(item.arguments, dict) else {}
            content.append({"type": "tool_use", "id": item.call_id or item.id, "name": TOOL_SEARCH, "input": arguments})
        elif item.type == "function_call":
            namespace = getattr(item, "namespace", None)
            name = f"{namespace}__{item.name}" if namespace and namespace != item.name else item.name
            try:
                arguments = json.loads(item.arguments or "{}")
            except json.JSONDecodeError:
                arguments = {"_unparsed_arguments": item.arguments}
            content.append(
                {
                    "type": "tool_use",
                    "id": item.call_id,
                    "name": name,
                    "input": arguments if isinstance(arguments, dict) else {"_unparsed_arguments": arguments},
                }
            )
    u = response.usage
    details = getattr(u, "input_tokens_details", None) if u is not None else None
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    usage = Usage(
        input_tokens=max((u.input_tokens or 0) - cached, 0) if u else 0,
        output_tokens=(u.output_tokens or 0) if u else 0,
        cache_read_tokens=cached,
    )
    stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return ModelResponse(content, stop, usage)
