"""The gateway over stdio, with a stdin reader that a signal can stop.

The SDK's :func:`mcp.server.stdio.stdio_server` reads stdin in a worker thread that cannot be
interrupted: while the client keeps the pipe open, cancelling the server waits for the next
line, so ``toolscout serve`` ignored SIGTERM and SIGINT (Claude Code sends SIGINT, SIGTERM, then
SIGKILL 0.5 s later, so every session ended by SIGKILL). When stdin is a pipe or a socket (how
every MCP client starts a server), :func:`serve_stdio` reads it on the event loop instead
(:meth:`asyncio.loop.connect_read_pipe`), so cancelling the serving task ends it at once. Any
other stdin (a terminal, a file) is read by the SDK as before.

As the SDK does for the streams it opens itself, fd 0 points at the null device while serving
(the wire is read through a private duplicate), so nothing the gateway starts can read the
client's messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Gateway

#: Longest line (one JSON-RPC message) read from stdin, in bytes; a longer one ends the connection.
MAX_LINE_BYTES = 1 << 30


class _PipeLines:
    """Lines of a pipe read on the event loop, as text (UTF-8, undecodable bytes replaced):
    what the SDK's stdio transport iterates (``async for line in stdin``)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if not end.partial:
                raise StopAsyncIteration from None
            line = end.partial
        return line.decode("utf-8", errors="replace")


def _readable_on_loop(fd: int) -> bool:
    """True for a pipe or socket (never a terminal: making it non-blocking would reach the shell)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def stdin_lines() -> AsyncIterator[_PipeLines | None]:
    """stdin as lines read on the running loop, with fd 0 diverted to the null device meanwhile;
    None when stdin is not a pipe or socket (the SDK reads it)."""
    if not _readable_on_loop(0):
        yield None
        return
    import fcntl

    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    pipe = open(private, "rb", buffering=0, closefd=False)  # noqa: SIM115 - the transport owns it
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        yield _PipeLines(reader)
    finally:
        transport.close()
        with contextlib.suppress(OSError):
            os.set_blocking(private, True)
            os.dup2(private, 0)
            os.close(private)


async def serve_stdio(gateway: Gateway) -> None:
    """Serve ``gateway`` on this process's stdin/stdout until the client closes stdin or the
    calling task is cancelled (a signal, see :mod:`toolscout.cli.serve_cmd`)."""
    from mcp.server.stdio import stdio_server

    async with stdin_lines() as lines:
        stdin: Any = lines  # the SDK only iterates it (``async for line in stdin``)
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            await gateway.server.run(read_stream, write_stream, gateway.initialization_options())
