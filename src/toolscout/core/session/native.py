"""Provider-native deferral in a session: tool_reference results, refusals, the portable fallback.

Anthropic's Messages API defers tools itself: a tool sent with ``"defer_loading": true`` is kept
out of the model's prompt until a ``tool_result`` holds a ``{"type": "tool_reference",
"tool_name": ...}`` block naming it; the API then expands the reference into the full
definition (docs: *Tool search tool*, "Custom tool search implementation"). toolscout's own
ToolSearch stays the search tool (ranked here) and answers with those blocks; the model then
calls the tool directly by name. The API's rules: at least one tool is not deferred (ToolSearch
never is); a deferred tool never carries ``cache_control`` (toolscout puts none on tools); a
``tool_result`` holding ``tool_reference`` blocks holds nothing else (text goes in a sibling
block of the same user message), and an ``is_error`` result holds only text.

Setting ``toolSearch.native``: ``auto`` (native when :func:`supports_native` knows the provider
and model do), ``on``, ``off``. An endpoint that answers 400 naming one of the native fields
(proxies and Bedrock do) is remembered per base URL in ``<user cache dir>/toolscout/
native-refusals.json``, and sessions over it take the portable path (:func:`refused_by`).
"""

from __future__ import annotations

import re
from typing import Any

from ..engine.native_choice import (
    NativeChoice,
    choose,
    refused_by,
    remember_refusal,
    supports_native,
)

__all__ = [
    "NativeChoice",
    "choose",
    "is_native_refusal",
    "portable_history",
    "referenced",
    "references",
    "refused_by",
    "remember_refusal",
    "supports_native",
]

#: A 400 that names a native field: the endpoint does not know provider-native deferral.
NATIVE_FIELDS = re.compile(r"defer_loading|tool_reference|tool_search", re.IGNORECASE)


def is_native_refusal(status: int | None, message: str) -> bool:
    """True for an HTTP 400 whose message names a native field (a proxy or Bedrock refusing them)."""
    return status == 400 and bool(NATIVE_FIELDS.search(message))


def references(names: list[str]) -> list[dict[str, Any]]:
    """``tool_result`` content that loads ``names`` natively: one ``tool_reference`` block each."""
    return [{"type": "tool_reference", "tool_name": n} for n in names]


def referenced(content: Any) -> list[str]:
    """Tool names of the ``tool_reference`` blocks in a ``tool_result``'s content."""
    if not isinstance(content, list):
        return []
    return [
        str(b.get("tool_name"))
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_reference" and b.get("tool_name")
    ]


def portable_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with every ``tool_reference`` result written as text (after a fallback to the
    portable path, whose tools array marks nothing deferred)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(referenced(b.get("content")) for b in content if isinstance(b, dict)):
            content = [
                {**b, "content": "Loaded: " + ", ".join(referenced(b.get("content")))}
                if isinstance(b, dict) and referenced(b.get("content"))
                else b
                for b in content
            ]
            message = {**message, "content": content}
        out.append(message)
    return out
