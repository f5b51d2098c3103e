"""Plain data records shared by every layer of the core.

Records are frozen dataclasses so they can be passed between asyncio tasks and the UI
without defensive copies. ``input_schema`` is the provider-valid projection of what the server
sent (:mod:`toolscout.core.schemas`); ``source_schema`` keeps the original.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

#: Why a tool with ``execution.taskSupport: "required"`` is not callable (:attr:`ToolSpec.needs_task`).
TASK_REQUIRED_REASON = (
    'the server runs this tool only as an MCP task (execution.taskSupport "required"); toolscout\'s MCP '
    "client (the mcp SDK) does not send task-augmented calls, so it cannot be called through toolscout"
)


@dataclass(frozen=True, eq=True)
class ToolSpec:
    """One tool as the catalog knows it.

    Attributes:
        name: canonical name, unique in the catalog: a built-in's own name (``Read``) or
            ``mcp__<server>__<tool>`` for MCP tools, normalised by ``toolscout.core.names``.
        description: description as given by the tool or server (untrusted text).
        input_schema: the JSON Schema object of the arguments: once the catalog registers the tool,
            the provider-valid projection (:func:`toolscout.core.schemas.project`) of what the
            server sent. It is what the model reads, what arguments are validated against.
        server: the MCP server name, or None for a built-in tool.
        original_name: the name the server knows the tool by (used for ``tools/call``).
        search_hint: optional extra words that help search (weighted between name and description).
        always_load: True when the tool must always be sent with its full schema.
        annotations: MCP tool annotations (``readOnlyHint`` ...), or None.
        source_schema: the ``inputSchema`` exactly as sent, set when the catalog projected it
            (None: not projected yet).
        wrapped_arguments: the server's schema has a non-object root; the model sends
            ``{"value": X}`` and the tool is called with X.
        schema_warnings: one line per repair the projection made (``"<path>: <what>"``).
        definition: the ``tools/list`` entry exactly as the server sent it (``title``,
            ``outputSchema``, ``execution``, ``_meta`` ...), for MCP clients of the gateway;
            None for built-ins and catalog-file tools.
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    server: str | None = None
    original_name: str = ""
    search_hint: str | None = None
    always_load: bool = False
    annotations: dict[str, Any] | None = None
    source_schema: Any = None
    wrapped_arguments: bool = False
    schema_warnings: tuple[str, ...] = ()
    definition: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def __hash__(self) -> int:  # dict fields are unhashable; the name is the identity
        return hash((self.name, self.server))

    @property
    def is_mcp(self) -> bool:
        """True for tools that come from an MCP server."""
        return self.server is not None

    @property
    def bare_name(self) -> str:
        """The tool's own name without the ``mcp__server__`` prefix."""
        return self.original_name or self.name

    @property
    def needs_task(self) -> bool:
        """True when the server says the tool runs only as an MCP task (``execution.taskSupport``
        ``"required"``, 2025-11-25): toolscout's client (the ``mcp`` SDK) sends no task-augmented
        calls, so such a tool cannot be called (:data:`TASK_REQUIRED_REASON`)."""
        execution = (self.definition or {}).get("execution")
        return isinstance(execution, dict) and execution.get("taskSupport") == "required"

    @property
    def read_only(self) -> bool:
        """True when the tool declares ``readOnlyHint`` (an MCP annotation)."""
        return bool(self.annotations and self.annotations.get("readOnlyHint") is True)


class ServerState(enum.StrEnum):
    """Connection state of one MCP server."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "failed"
    DISCONNECTED = "disconnected"
    #: a project server of a folder the person has not approved: listed, never started.
    NOT_APPROVED = "not_approved"


@dataclass(frozen=True)
class ServerStatus:
    """What the core knows about one configured MCP server at a moment.

    Attributes:
        name: server name from the configuration (the key of ``mcpServers``).
        state: connection state.
        error: the reason for FAILED (or the last error), human readable.
        instructions: the ``instructions`` string from ``initialize``, or None.
        tool_count: number of tools from the last successful ``tools/list``.
        transport: ``stdio``, ``http`` or ``sse``.
        has_resources: the server declared the resources capability.
        needs_login: a remote server that refused without a login (HTTP 401, or 403 for more
            scope) or whose login failed: ``error`` says what it asked for and the command.
    """

    name: str
    state: ServerState
    error: str | None = None
    instructions: str | None = None
    tool_count: int = 0
    transport: str = "stdio"
    has_resources: bool = False
    needs_login: bool = False


@dataclass(frozen=True)
class ContentBlock:
    """One block of a tool result, mapped from MCP content.

    Attributes:
        type: ``text`` | ``image`` | ``audio`` | ``resource`` | ``resource_link``.
        text: the text (for ``text``, and the text of a text resource).
        data: base64 data (image, audio, blob resource). mime_type: its MIME type.
        uri: the resource URI for resource blocks.
        wire: the MCP content block exactly as the server sent it (camelCase keys, with
            ``annotations``, ``_meta``, a resource link's ``title``/``description``/``size`` ...),
            None for blocks toolscout wrote itself; what the gateway and ``toolscout call
            --json`` pass on (:meth:`as_mcp`).
    """

    type: str
    text: str = ""
    data: str | None = None
    mime_type: str | None = None
    uri: str | None = None
    wire: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def as_mcp(self) -> dict[str, Any]:
        """The block as MCP content JSON: :attr:`wire` when the server sent it, else built
        from the fields (a text block for toolscout's own messages)."""
        if self.wire is not None:
            return self.wire
        if self.type in ("image", "audio"):
            return {"type": self.type, "data": self.data or "", "mimeType": self.mime_type or ""}
        if self.type == "resource":
            inner: dict[str, Any] = {"uri": self.uri or "about:blank"}
            inner.update({"blob": self.data} if self.data is not None else {"text": self.text})
            if self.mime_type:
                inner["mimeType"] = self.mime_type
            return {"type": "resource", "resource": inner}
        if self.type == "resource_link":
            link = {"type": "resource_link", "uri": self.uri or "about:blank", "name": self.text}
            return link | ({"mimeType": self.mime_type} if self.mime_type else {})
        return {"type": "text", "text": self.text}


class ToolErrorKind(enum.StrEnum):
    """Why a tool call did not produce a normal result (specific and actionable)."""

    UNKNOWN_TOOL = "unknown_tool"
    DISABLED = "disabled"
    SERVER_CONNECTING = "server_connecting"
    SERVER_FAILED = "server_failed"
    INVALID_PARAMS = "invalid_params"
    PERMISSION_DENIED = "permission_denied"
    #: A network built-in's address guard refused a loopback, link-local or private address
    #: that no settings rule names; whatever the permission answer was (an "Allow once" too).
    PRIVATE_HOST_REFUSED = "private_host_refused"
    TIMEOUT = "timeout"
    NOT_LOADED = "not_loaded"
    TOOL_ERROR = "tool_error"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call, ready to show and to send to a model as a ``tool_result``.

    Attributes:
        tool_name: canonical name of the tool that was called (never "ExecuteTool").
        content: result blocks in order.
        structured: ``structuredContent`` when the tool returned it.
        is_error: True for tool errors (``isError``) and every proxy error.
        error_kind: set when the proxy or the engine refused or failed the call.
        duration_ms: wall time of the call in milliseconds, not counting the wait for a
            permission answer.
        meta: the result's ``_meta`` as the server sent it, or None.
    """

    tool_name: str
    content: tuple[ContentBlock, ...] = ()
    structured: dict[str, Any] | None = None
    is_error: bool = False
    error_kind: ToolErrorKind | None = None
    duration_ms: float = 0.0
    meta: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def error(cls, tool_name: str, kind: ToolErrorKind, message: str) -> ToolResult:
        """A proxy/engine error result carrying one text block."""
        return cls(tool_name, (ContentBlock("text", message),), is_error=True, error_kind=kind)

    @classmethod
    def ok(cls, tool_name: str, text: str) -> ToolResult:
        """A successful result carrying one text block."""
        return cls(tool_name, (ContentBlock("text", text),))

    def text(self) -> str:
        """All blocks as plain text (images and blobs summarised, not inlined), then the
        ``structuredContent`` as JSON when the text blocks do not already carry it.

        This is what the model gets as the ``tool_result`` (and what the person is shown). A
        tool may put its data only in ``structuredContent`` beside a short text ("listed 3
        issues"), so that data is appended under a ``[structured content]`` line. When a text
        block already is the data (the JSON of ``structuredContent``, as the MCP SDK and FastMCP
        write for structured output, or the value of the SDK's ``{"result": ...}`` wrapping of a
        non-object return, one block per item for a list) it is not repeated: see
        :func:`text_carries`. With no text at all, the JSON alone is the text.
        """
        parts: list[str] = []
        for block in self.content:
            if block.type == "text":
                parts.append(block.text)
            elif block.type == "resource":
                head = f"[resource {block.uri}]"
                parts.append(f"{head}\n{block.text}" if block.text else f"{head} ({block.mime_type}, binary)")
            elif block.type == "resource_link":
                parts.append(f"[resource link {block.uri}]")
            else:
                size = len(block.data or "") * 3 // 4
                parts.append(f"[{block.type} {block.mime_type or ''}, {size} bytes]")
        if self.structured is not None:
            import json

            data = json.dumps(self.structured, ensure_ascii=False)
            if not parts:
                parts.append(data)
            elif not text_carries([b.text for b in self.content if b.type == "text"], self.structured):
                parts.append(f"[structured content]\n{data}")
        return "\n".join(parts)


def text_carries(texts: list[str], structured: dict[str, Any]) -> bool:
    """True when the text blocks ``texts`` already carry ``structured`` (a result's
    ``structuredContent``), so giving it to the model again would only repeat it.

    A block carries it when its text, read as JSON (or as itself, for a string value), equals
    ``structured``, or equals ``structured["result"]`` when that is the SDK's wrapping of a
    non-object return (``{"result": X}``, the only key); several blocks carry a wrapped list
    when they are its items in order (the SDK writes one block per item). Anything else (a
    summary, the data in prose, part of it) does not carry it.
    """
    import json

    def values(text: str) -> list[Any]:
        try:
            return [text, json.loads(text)]
        except ValueError:
            return [text]

    wrapped = set(structured) == {"result"}
    wanted = [structured, structured["result"]] if wrapped else [structured]
    if any(v == w for t in texts for v in values(t) for w in wanted):
        return True
    items = structured["result"] if wrapped else None
    return (
        isinstance(items, list)
        and len(texts) == len(items) > 0
        and all(any(v == item for v in values(t)) for t, item in zip(texts, items, strict=True))
    )
