"""Lenient ``tools/list``: every page read raw, every tool judged alone.

The SDK validates a whole ``tools/list`` page against its models, so one tool with a schema
it dislikes (the published GitLab server sends 9 whose ``inputSchema`` has no root ``type``)
loses every tool of the server. Here the page is taken as the raw JSON-RPC result dict and each
tool is checked on its own:

- kept as sent when usable; the schema repairs that keep its meaning (no root ``type`` →
  ``"object"``, no ``properties`` → ``{}``, non-object roots wrapped) are made, with their own
  warnings, by the catalog's projection (:mod:`toolscout.core.schemas`);
- dropped, with one warning naming the tool and the reason, when it cannot be used: not an
  object, a name that is not a string, a missing or non-object ``inputSchema``, a schema nested
  deeper than :data:`MAX_SCHEMA_DEPTH`, a lone surrogate in any string (it cannot be encoded
  to send to a model or back to the server), or a second listing of a name already listed
  (a server that repeats pages): the first listing is the tool.

A listing is bounded as a whole: at most :data:`MAX_LISTING_TOOLS` tools and
:data:`MAX_LISTING_BYTES` of tool definitions (name, description, schemas as JSON) per server;
the tools past the bound are dropped, with one warning naming the bound (the connection names
the server), so one server of 100,000 tools cannot stall the catalog, the index and the app.

Pagination follows ``nextCursor`` (an empty string is a cursor) and stops, with a warning, at a
cursor seen before, at a page that only repeats tools already listed, or after
:data:`MAX_PAGES` pages.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession

from ..models import ToolSpec
from ..serialize import dumps
from .wire import SURROGATE, shown_line

log = logging.getLogger(__name__)

#: Most ``tools/list`` pages read in one listing (a page budget against endless paginators).
MAX_PAGES = 500
#: Deepest ``inputSchema`` kept, in nested objects/arrays (the 47 real catalogs reach 21).
MAX_SCHEMA_DEPTH = 64
#: Most tools kept from one server's listing (the largest of the 47 real catalogs has ~300).
MAX_LISTING_TOOLS = 10_000
#: Most bytes of tool definitions (name, description and schemas as JSON) kept from one listing.
MAX_LISTING_BYTES = 32 * 1024 * 1024
#: Most per-tool warnings spelled out for one listing; the rest are counted in one line.
MAX_TOOL_WARNINGS = 20


class ListingError(Exception):
    """The ``tools/list`` result as a whole is unusable (not an object, no ``tools`` list)."""


@dataclass
class ToolListing:
    """One complete listing: the usable tools in server order and one warning per problem."""

    tools: list[ToolSpec] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: ``name -> outputSchema`` of the kept tools (the SDK validates call results with it).
    output_schemas: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    _dropped: int = 0
    #: Bytes of the kept tools' definitions (:data:`MAX_LISTING_BYTES`).
    size: int = 0
    #: Tools dropped past the listing bound, and which bound it was.
    over_bound: int = 0
    bound: str = ""

    def drop(self, tool: str, reason: str) -> None:
        """Record a dropped tool (the first :data:`MAX_TOOL_WARNINGS` get their own line)."""
        self._dropped += 1
        if self._dropped <= MAX_TOOL_WARNINGS:
            self.warnings.append(f"tool {tool} dropped: {reason}")

    def fits(self, entry: dict[str, Any]) -> bool:
        """Whether one more tool, ``entry`` as sent, stays within the listing bound; counts it
        (kept or not)."""
        if not self.over_bound:
            size = len(dumps(entry))
            if len(self.tools) >= MAX_LISTING_TOOLS:
                self.bound = f"{MAX_LISTING_TOOLS:,} tools"
            elif self.size + size > MAX_LISTING_BYTES:
                self.bound = f"{MAX_LISTING_BYTES // (1024 * 1024)} MB of tool definitions"
            else:
                self.size += size
                return True
        self.over_bound += 1
        return False

    def finish(self) -> ToolListing:
        """Add the count of drops not spelled out and the bound's warning; returns self."""
        if self._dropped > MAX_TOOL_WARNINGS:
            self.warnings.append(
                f"{self._dropped - MAX_TOOL_WARNINGS} more tools dropped (first {MAX_TOOL_WARNINGS} listed above)"
            )
        if self.over_bound:
            self.warnings.append(
                f"tools/list is over toolscout's bound of {self.bound} per server: kept the first "
                f"{len(self.tools):,} tools, dropped {self.over_bound:,}"
            )
        return self


def shown(value: str) -> str:
    """A tool name or text as warnings quote it (:func:`.wire.shown_line`, 80 chars)."""
    return shown_line(value, 80)


def _scan(value: Any) -> tuple[int, str | None]:
    """(depth in nested containers, first string holding a lone surrogate) without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if SURROGATE.search(item):
                return deepest, item
        elif isinstance(item, dict):
            deepest = max(deepest, depth)
            for key, sub in item.items():
                stack.append((key, depth))
                stack.append((sub, depth + 1))
        elif isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((sub, depth + 1) for sub in item)
    return deepest, None


def check_tool(raw: Any) -> tuple[ToolSpec | None, str]:
    """Judge one ``tools/list`` entry alone.

    Args:
        raw: the entry as sent.

    Returns:
        ``(tool, "")`` when usable, else ``(None, reason)`` with a one-line reason.
    """
    if not isinstance(raw, dict):
        return None, f"not an object ({type(raw).__name__})"
    name = raw.get("name")
    if not isinstance(name, str):
        return None, f"name is {type(name).__name__}, not a string"
    schema = raw.get("inputSchema")
    if schema is None:
        return None, "no inputSchema"
    if not isinstance(schema, dict):
        return None, f"inputSchema is {type(schema).__name__}, not an object"
    depth, bad = _scan(schema)
    if depth > MAX_SCHEMA_DEPTH:
        return None, f"inputSchema nested {depth} deep (limit {MAX_SCHEMA_DEPTH})"
    if bad is None:
        bad = _scan([name, raw.get("description"), raw.get("annotations")])[1]
    if bad is not None:
        return None, f"a lone surrogate in the text {shown(bad)}"
    description = raw.get("description")
    annotations = raw.get("annotations")
    return ToolSpec(
        name=name,
        original_name=name,
        input_schema=schema,
        description=description if isinstance(description, str) else "",
        annotations=annotations if isinstance(annotations, dict) and annotations else None,
        definition=raw,
    ), ""


def read_page(raw: Any, listing: ToolListing, seen: set[str]) -> int:
    """Add the usable tools of one raw page to ``listing``; returns how many were new.

    Raises:
        ListingError: the result is not an object with a ``tools`` list.
    """
    tools = raw.get("tools") if isinstance(raw, dict) else None
    if not isinstance(tools, list):
        raise ListingError("the tools/list result has no 'tools' list")
    new = 0
    for i, entry in enumerate(tools):
        tool, reason = check_tool(entry)
        if tool is None:
            name = entry.get("name") if isinstance(entry, dict) else None
            listing.drop(shown(name) if isinstance(name, str) else f"tools[{i}]", reason)
            continue
        if tool.name in seen:
            listing.drop(shown(tool.name), "listed again; the first listing is kept")
            continue
        seen.add(tool.name)
        if not listing.fits(entry):
            continue
        listing.tools.append(tool)
        output = entry.get("outputSchema")
        listing.output_schemas[tool.name] = output if isinstance(output, dict) else None
        new += 1
    return new


async def raw_request(session: ClientSession, request: types.ClientRequest) -> Any:
    """Send ``request`` and return the raw JSON-RPC result, unvalidated.

    ``ClientSession.send_request`` validates the whole result against the SDK's models before
    returning it; this is the same path up to the raw result (the request is stamped the same
    way), without that validation.

    Raises:
        MCPError: the server answered with an error, or the connection closed.
    """
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)  # type: ignore[arg-type]  # protocol headers/_meta, as send_request
    return await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts)  # type: ignore[arg-type]


async def list_tools_leniently(session: ClientSession) -> ToolListing:
    """Every page of ``tools/list``, each tool checked alone (see the module doc).

    Raises:
        ListingError: a page's result is unusable as a whole.
        MCPError: the server answered a page with an error, or the connection closed.
    """
    listing = ToolListing()
    seen_names: set[str] = set()
    seen_cursors: set[str] = set()
    cursor: str | None = None
    for page_no in range(1, MAX_PAGES + 1):
        params = types.PaginatedRequestParams(cursor=cursor)
        raw = await raw_request(session, types.ListToolsRequest(params=params))
        new = read_page(raw, listing, seen_names)
        cursor = raw.get("nextCursor")
        if cursor is None:
            break
        if not isinstance(cursor, str):
            listing.warnings.append(f"tools/list page {page_no}: nextCursor is not a string; stopped there")
            break
        if cursor in seen_cursors or (new == 0 and raw["tools"]):
            why = f"repeated cursor {shown(cursor)}" if cursor in seen_cursors else "a page of repeated tools"
            listing.warnings.append(
                f"tools/list stopped after {page_no} pages ({why}); kept the {len(listing.tools)} tools read so far"
            )
            break
        seen_cursors.add(cursor)
    else:
        listing.warnings.append(
            f"tools/list still had more pages after {MAX_PAGES}; kept the first {len(listing.tools)} tools"
        )
    _absorb(session, listing)
    return listing.finish()


def _absorb(session: ClientSession, listing: ToolListing) -> None:
    """Give the SDK session the per-tool state a validated listing would have left (output
    schemas for result validation): without it, ``call_tool`` re-lists through the strict path."""
    tools = [
        types.Tool.model_construct(
            name=t.name, input_schema=t.input_schema, output_schema=listing.output_schemas.get(t.name)
        )
        for t in listing.tools
    ]
    try:
        session._absorb_tool_listing(types.ListToolsResult.model_construct(tools=tools), complete=True)
    except Exception:  # best effort: calls still work, they only lose output-schema checks
        log.debug("could not hand the tool listing to the SDK session", exc_info=True)
