"""Engine results mapped back to MCP ``CallToolResult`` values for the gateway's client.

The upstream result passes through: every content block keeps its type (text, image, audio,
embedded resource, resource link), ``structuredContent`` and ``isError`` are kept. Refusals of the
gateway itself (unknown tool, invalid arguments, permission) are ``isError`` results with one text
block, as ExecuteTool's are in the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types

from ..calls.result_cap import DEFAULT_MAX_RESULT_TOKENS, head_within, over_limit
from ..models import ContentBlock, ToolResult
from ..serialize import dumps

if TYPE_CHECKING:
    from ..tokens import TokenCounter


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """``result`` as the MCP ``CallToolResult`` the gateway answers with."""
    return types.CallToolResult(content=[_content(b) for b in result.content],
                                structured_content=result.structured, is_error=result.is_error)


def error_result(message: str) -> types.CallToolResult:
    """A gateway refusal: one text block, ``isError`` true."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def json_result(value: dict[str, Any]) -> types.CallToolResult:
    """A structured answer, also given as compact JSON text for clients that read only text."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=dumps(value))],
                                structured_content=value)


def _content(block: ContentBlock) -> types.ContentBlock:
    if block.type == "image":
        return types.ImageContent(type="image", data=block.data or "", mime_type=block.mime_type or "")
    if block.type == "audio":
        return types.AudioContent(type="audio", data=block.data or "", mime_type=block.mime_type or "")
    if block.type == "resource":
        uri = block.uri or "about:blank"
        if block.data is not None:
            res: Any = types.BlobResourceContents(uri=uri, blob=block.data, mime_type=block.mime_type)
        else:
            res = types.TextResourceContents(uri=uri, text=block.text, mime_type=block.mime_type)
        return types.EmbeddedResource(type="resource", resource=res)
    if block.type == "resource_link":
        return types.ResourceLink(type="resource_link", uri=block.uri or "about:blank", name=block.text or "",
                                  mime_type=block.mime_type)
    return types.TextContent(type="text", text=block.text)


#: Full texts of capped results kept for reading as resources (oldest forgotten first).
MAX_KEPT = 32
RESULTS_URI = "toolscout://results/"


class CappedResults:
    """Caps long tool results (the app's rule, :mod:`toolscout.core.calls.result_cap`) and keeps each full text as the resource ``toolscout://results/<n>``.

    Args:
        limit: most tokens of text a result may carry (the note adds about 60).
        counter: token counter (default: :func:`~toolscout.core.tokens.default_counter`).
    """

    def __init__(self, limit: int = DEFAULT_MAX_RESULT_TOKENS, counter: TokenCounter | None = None) -> None:
        from collections import OrderedDict

        from ..tokens import default_counter

        self.limit = limit
        self.counter = counter or default_counter()
        self.kept: OrderedDict[str, str] = OrderedDict()
        self._next = 0

    def cap(self, result: ToolResult) -> ToolResult:
        """``result`` unchanged when its text fits; else its text blocks become one head plus a
        note naming the resource with the full text (images and other blocks are kept, the
        ``structuredContent`` copy is dropped: it is in the resource)."""
        from dataclasses import replace

        text = "\n".join(b.text for b in result.content if b.type == "text")
        structured = dumps(result.structured) if result.structured is not None else ""
        whole = text + ("\n" + structured if structured else "")
        tokens = over_limit(whole, self.limit, self.counter)
        if tokens is None:
            return result
        head = head_within(whole, self.limit, tokens, self.counter)
        self._next += 1
        uri = f"{RESULTS_URI}{self._next}"
        self.kept[uri] = whole
        while len(self.kept) > MAX_KEPT:
            self.kept.popitem(last=False)
        note = (f"\n\n[Result cut to {self.limit:,} tokens of {len(whole):,} characters. The full result is the "
                f"resource {uri} (kept for the last {MAX_KEPT} long results).]")
        blocks = [ContentBlock("text", head + note), *(b for b in result.content if b.type != "text")]
        return replace(result, content=tuple(blocks), structured=None)

    def read(self, uri: str) -> str | None:
        """The full text of a capped result, or None (unknown or forgotten)."""
        return self.kept.get(uri)
