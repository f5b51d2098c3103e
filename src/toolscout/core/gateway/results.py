"""Engine results mapped back to MCP ``CallToolResult`` values for the gateway's client.

The upstream result passes through: every content block keeps its type (text, image, audio,
embedded resource, resource link), ``structuredContent`` and ``isError`` are kept. Refusals of the
gateway itself (unknown tool, invalid arguments, permission) are ``isError`` results with one text
block, as ExecuteTool's are in the app.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from ..models import ContentBlock, ToolResult
from ..serialize import dumps


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
