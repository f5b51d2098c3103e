"""The stdio transport's line reader (``core/mcp/transports/stdio_lines.py``): the same lines as
splitting the whole stream at newlines, however the pipe cuts it into chunks, in time linear in its size."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from toolscout.core.mcp.transports.stdio_lines import split_lines


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
