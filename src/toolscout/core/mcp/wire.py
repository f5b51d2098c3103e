"""What arrives on a transport's read stream before the SDK's session sees it.

The SDK's stdio transport parses each stdout line with a strict JSON parser and, for a line it
cannot parse, logs an 11-line traceback and hands the exception to the session. That makes
three real-world problems worse than they need be:

- a server that prints a banner or loops printing non-JSON text floods stderr with tracebacks
  (one per line, forever);
- a ``tools/list`` answer the strict parser refuses (a lone surrogate ``"\\ud800"`` in a
  string, a schema nested deeper than its recursion limit) is lost, so the request waits for
  the connect timeout and the server is reported as "no answer to tools/list";
- an answer that is not JSON at all is lost the same way.

:class:`GuardedStream` wraps the read stream: an unparsed line that Python's own JSON parser
reads as a JSON-RPC message is delivered after all (so :mod:`.listing` can judge each tool
alone); a line that looks like a response but cannot be read becomes a JSON-RPC parse error
for that request id (the request fails at once, at its stage); any other line is counted, and
only the first one is reported, once, through ``on_noise``. :func:`quiet_sdk_parse_errors`
silences the SDK's per-line traceback. Nothing here keeps a line after it is handled, so
endless output costs no memory.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..safe_read import parse_json

#: Longest piece of an offending line quoted in a warning (characters).
SHOWN_CHARS = 120
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_SDK_PARSE_MESSAGE = "Failed to parse JSONRPC message from server"
#: A lone (unpaired) UTF-16 surrogate: JSON can carry one as an escape, UTF-8 cannot encode it.
SURROGATE = re.compile("[\ud800-\udfff]")


class _DropSdkParseTracebacks(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _SDK_PARSE_MESSAGE


_FILTER = _DropSdkParseTracebacks()


def quiet_sdk_parse_errors() -> None:
    """Drop the SDK stdio transport's traceback per unparsable line (idempotent); the
    :class:`GuardedStream` of each connection reports such lines once instead."""
    logger = logging.getLogger("mcp.client.stdio")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def shown_line(line: str, limit: int = SHOWN_CHARS) -> str:
    """``line`` as a warning quotes it: ``repr``, surrogates escaped, at most ``limit`` chars."""
    text = line.encode("utf-8", "backslashreplace").decode("utf-8")
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _unparsed_line(exc: ValidationError) -> str:
    """The raw line behind the SDK's parse failure ("" for JSON that is no JSON-RPC message)."""
    for error in exc.errors():
        if error.get("type") == "json_invalid" and isinstance(error.get("input"), str):
            return str(error["input"])
    return ""


def recover(line: str) -> SessionMessage | None:
    """Read ``line`` as a JSON-RPC message leniently, or None when it is not one.

    A message the strict parser refused but Python reads (lone surrogates, deep nesting within
    Python's limit) is delivered as sent. A line that has a request ``id`` but cannot be read is
    turned into a parse error for that id, so the waiting request fails now with the reason.
    """
    try:
        data = parse_json(line)
    except ValueError as exc:
        match = _ID.search(line) if line.lstrip().startswith("{") else None
        if match is None:
            return None
        raw_id = parse_json(match.group(1))
        error = types.ErrorData(code=types.PARSE_ERROR, message=f"the server's answer could not be read ({exc})")
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=raw_id, error=error))
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return None
    result = data.get("result")
    if not (isinstance(result, dict) and "tools" in result):  # a listing is judged tool by tool
        scrub_surrogates(data)
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
    except ValidationError:
        return None


def scrub_surrogates(data: dict[str, Any] | list[Any]) -> None:
    """Replace lone surrogates in every string of ``data`` (in place, keys too) with U+FFFD, so
    that a tool result or error message can be printed and sent on (iterative: any depth)."""
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in items:
            if isinstance(value, str) and SURROGATE.search(value):
                node[key] = value = SURROGATE.sub("\ufffd", value)
            elif isinstance(value, dict | list):
                stack.append(value)
            if isinstance(key, str) and SURROGATE.search(key):
                node[SURROGATE.sub("\ufffd", key)] = node.pop(key)


class GuardedStream(ObjectReceiveStream[Any]):
    """A transport read stream with unparsed lines recovered or reported (see the module doc).

    Args:
        inner: the transport's read stream (``SessionMessage | Exception`` items).
        on_eof: called once when the transport ends (the server exited or hung up).
        on_noise: called once, with the first offending line quoted (:func:`shown_line`), when
            the server writes something that is not a JSON-RPC message.
    """

    def __init__(
        self, inner: ObjectReceiveStream[Any], on_eof: Callable[[], None], on_noise: Callable[[str], None]
    ) -> None:
        self._inner = inner
        self._on_eof = on_eof
        self._on_noise = on_noise
        self.noise_lines = 0

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                self._on_eof()
                raise
            if not isinstance(item, ValidationError):
                return item  # a message, or a real transport error the session reports
            line = _unparsed_line(item)
            message = recover(line) if line else None
            if message is not None:
                return message
            self.noise_lines += 1
            if self.noise_lines == 1:
                self._on_noise(shown_line(line) if line else "a JSON value that is not a JSON-RPC message")

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context`` read by the dispatcher
        return getattr(self._inner, name)
