"""Engine results mapped back to MCP ``CallToolResult`` values for the gateway's client.

The upstream result passes through as the server sent it: every content block with all its
fields (``annotations``, ``_meta``, a resource link's ``title``, ``description`` and ``size``),
``structuredContent``, ``isError`` and the result's ``_meta``. Refusals of the
gateway itself (unknown tool, invalid arguments, permission) are ``isError`` results with one text
block, as ExecuteTool's are in the app.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Any

import mcp_types as types
from pydantic import TypeAdapter

from ..calls.result_cap import (
    DEFAULT_MAX_RESULT_TOKENS,
    SURELY_OVER_CHARS_PER_TOKEN,
    head_within,
    over_limit,
)
from ..models import ContentBlock, ToolResult
from ..serialize import dumps

if TYPE_CHECKING:
    from ..tokens import TokenCounter


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """``result`` as the MCP ``CallToolResult`` the gateway answers with: each upstream block
    exactly as the server sent it (:meth:`~toolscout.core.models.ContentBlock.as_mcp`), and the
    result's ``_meta``."""
    return types.CallToolResult(
        content=[_content(b) for b in result.content],
        structured_content=result.structured,
        is_error=result.is_error,
        _meta=result.meta,
    )


def error_result(message: str) -> types.CallToolResult:
    """A gateway refusal: one text block, ``isError`` true."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def json_result(value: dict[str, Any]) -> types.CallToolResult:
    """A structured answer, also given as compact JSON text for clients that read only text."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=dumps(value))], structured_content=value)


_BLOCK: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)


def _content(block: ContentBlock) -> types.ContentBlock:
    return _BLOCK.validate_python(block.as_mcp())


#: Full texts of capped results kept for reading as resources (oldest forgotten first), and the
#: most characters they may add up to (a hostile server's results must not pin memory).
MAX_KEPT = 32
MAX_KEPT_CHARS = 32 * 2**20
RESULTS_URI = "toolscout://results/"


class CappedResults:
    """Caps long tool results (the app's rule, :mod:`toolscout.core.calls.result_cap`) and keeps each full text as the resource ``toolscout://results/<n>``, readable by the client it was cut for only.

    Args:
        limit: most tokens of text a result may carry (the note adds about 60).
        counter: token counter (default: :func:`~toolscout.core.tokens.default_counter`).
    """

    def __init__(self, limit: int = DEFAULT_MAX_RESULT_TOKENS, counter: TokenCounter | None = None) -> None:
        from collections import OrderedDict

        from ..tokens import default_counter

        self.limit = limit
        self.counter = counter or default_counter()
        self.kept: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._chars = 0
        self._next = 0

    def cap(self, result: ToolResult, owner: str = "stdio") -> ToolResult:
        """``result`` unchanged when its text fits; else its text blocks become one head plus a
        note naming the resource with the full text (images and other blocks are kept, the
        ``structuredContent`` copy is dropped: it is in the resource). ``owner`` is who may read
        that resource (:meth:`read`)."""
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
        if len(whole) <= MAX_KEPT_CHARS:
            self.kept[uri] = (owner, whole)
            self._chars += len(whole)
            while len(self.kept) > MAX_KEPT or self._chars > MAX_KEPT_CHARS:
                self._chars -= len(self.kept.popitem(last=False)[1][1])
            where = f"The full result is the resource {uri} (kept for the last {MAX_KEPT} long results)."
        else:
            where = f"The full result is over {MAX_KEPT_CHARS // 2**20} Mi characters and was not kept."
        note = f"\n\n[Result cut to {self.limit:,} tokens of {len(whole):,} characters. {where}]"
        blocks = [ContentBlock("text", head + note), *(b for b in result.content if b.type != "text")]
        return replace(result, content=tuple(blocks), structured=None)

    def read(self, uri: str, owner: str = "stdio") -> str | None:
        """The full text of a capped result cut for ``owner``, or None (unknown, forgotten, or
        another client's)."""
        kept = self.kept.get(uri)
        return kept[1] if kept is not None and hmac.compare_digest(kept[0], owner) else None


#: Characters of the query echoed in a capped search answer, and of the description of a tool
#: whose definition alone is over the cap.
ANSWER_QUERY_CHARS = 500
ANSWER_DESCRIPTION_CHARS = 2_000


def cap_answer(answer: dict[str, Any], limit: int, counter: TokenCounter) -> dict[str, Any]:
    """A search answer (:func:`~.served.search_answer`) within ``limit`` tokens of JSON, as tool
    results are (``tools.maxResultTokens``): one hostile server's huge schemas must not make
    every answer, and every client that stops reading one, hold megabytes.

    The best-ranked results are kept whole while they fit; the rest are named in ``left_out``
    (name, server, score: ``select:NAME`` loads one). When even the first does not fit, it is
    kept with its description cut and its ``inputSchema`` replaced by an empty object schema, a
    note saying so (its call's argument errors quote the schema's start). The answer unchanged
    when it fits.
    """
    hits: list[dict[str, Any]] = list(answer.get("results") or [])
    sizes = [len(dumps(h)) + 1 for h in hits]  # each hit serialized once (a hostile one may be megabytes)
    rest = len(dumps({k: v for k, v in answer.items() if k != "results"}))
    if rest + sum(sizes) <= limit:  # a token is at least one character
        return answer
    surely_over = limit * SURELY_OVER_CHARS_PER_TOKEN
    if rest + sum(sizes) <= surely_over and over_limit(dumps(answer), limit, counter) is None:
        return answer
    base = {k: v for k, v in answer.items() if k != "results"}
    if isinstance(base.get("query"), str) and len(base["query"]) > ANSWER_QUERY_CHARS:
        base["query"] = base["query"][:ANSWER_QUERY_CHARS] + "…"

    def build(kept: list[dict[str, Any]], left: list[dict[str, Any]], extra: str = "") -> dict[str, Any]:
        out = {**base, "results": kept}
        notes = list(base.get("notes") or [])
        if left:
            out["left_out"] = [
                {"name": h.get("name"), "server": h.get("server"), "score": h.get("score")} for h in left
            ]
            notes.append(
                f"{len(left)} more results were left out: the answer would be over {limit:,} tokens "
                "(tools.maxResultTokens). Load one with select:NAME."
            )
        if extra:
            notes.append(extra)
        if notes:
            out["notes"] = notes
        return out

    def fits(candidate: dict[str, Any]) -> bool:
        return over_limit(dumps(candidate), limit, counter) is None

    high, total = 0, rest
    while high < len(hits) and total + sizes[high] <= surely_over:  # longer prefixes are surely over
        total += sizes[high]
        high += 1
    low = 0  # the longest fitting prefix (binary search; the empty one is taken as fitting)
    while low < high:
        mid = (low + high + 1) // 2
        if fits(build(hits[:mid], hits[mid:])):
            low = mid
        else:
            high = mid - 1
    if low or not hits:
        capped = build(hits[:low], hits[low:])
    else:
        first = dict(hits[0])
        size = sizes[0]
        description = str(first.get("description") or "")
        if len(description) > ANSWER_DESCRIPTION_CHARS:
            first["description"] = description[:ANSWER_DESCRIPTION_CHARS] + "…"
        first["inputSchema"] = {"type": "object"}
        capped = build(
            [first],
            hits[1:],
            f"The definition of {first.get('name')} is {size:,} characters, too long "
            "for this answer; it was replaced by an empty object schema. Call the tool: invalid "
            "arguments are answered with the start of its real schema.",
        )
    if not fits(capped):  # long instructions or notes: the results and the note on them are what matters
        capped.pop("instructions", None)
    if not fits(capped):
        capped = {
            "query": base.get("query"),
            "results": [],
            "left_out": capped.get("left_out", []),
            "notes": [
                f"The answer was over {limit:,} tokens (tools.maxResultTokens) even cut down; "
                "search with fewer results (max_results) or select:NAME."
            ],
        }
    return capped
