"""The stdio transport's line reader (``core/mcp/transports/stdio_lines.py``): the same lines as
splitting the whole stream at newlines, however the pipe cuts it into chunks, in time linear in its size;
and a line without end is bounded."""

from __future__ import annotations

import itertools

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_helpers import allow, pid_alive, running, stdio

from toolscout.core.mcp.transports import stdio_lines
from toolscout.core.mcp.transports.stdio_lines import split_lines
from toolscout.core.models import ServerState


def _read(chunks: list[str]) -> tuple[list[str], str]:
    pending: list[str] = []
    lines = [line for chunk in chunks for line in split_lines(pending, chunk)]
    return lines, "".join(pending)


@given(st.text(alphabet="ab\n{}é", max_size=200), st.lists(st.integers(0, 200), max_size=20))
def test_any_chunking_gives_the_lines_of_the_whole_stream(text: str, cuts: list[int]) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    *whole, rest = text.split("\n")
    assert _read(chunks) == (whole, rest)


def test_a_long_line_in_small_chunks_is_joined_once() -> None:
    """20 MB in 8 KB chunks: each piece is kept, not re-copied per chunk (the SDK's reader
    concatenated the growing line with every chunk: ~25 GB copied for this line)."""
    piece = "x" * 8192
    pending: list[str] = []
    for _ in range(20_000_000 // len(piece)):
        assert split_lines(pending, piece) == []
    assert all(p is piece for p in pending)
    [line] = split_lines(pending, "}\n")
    assert len(line) == 20_000_000 // 8192 * 8192 + 1 and pending == [""]


@pytest.mark.parametrize("sessions", ["shared", "separate"])
async def test_a_server_writing_without_end_or_newline_is_stopped_at_the_line_bound(monkeypatch, events, sessions):
    """A server that floods stdout with no newline is stopped once the unfinished line passes
    ``MAX_LINE_CHARS`` (here 1 Mi): its process is gone, the call fails, the server's error says
    why, and the engine goes on (memory stays bounded instead of growing until the app dies)."""
    monkeypatch.setattr(stdio_lines, "MAX_LINE_CHARS", 2**20)
    async with running([stdio("flood")], events, **{"mcp.serverSessions": sessions}) as engine:
        pid = int((await engine.call_tool("mcp__flood__pid", {}, asker=allow)).text())
        mark = len(events.events)
        with anyio.fail_after(30):
            result = await engine.call_tool("mcp__flood__flood", {}, asker=allow)
        assert result.is_error
        gone = await events.wait_state("flood", ServerState.DISCONNECTED, start=mark)
        assert "more than 1 Mi characters without a newline" in gone.error and "stopped" in gone.error
        with anyio.fail_after(10):
            while pid_alive(pid):
                await anyio.sleep(0.02)
        assert engine.search_tools("weather").query  # the engine still answers
