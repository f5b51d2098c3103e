"""The stdio transport with a linear line reader: the SDK's ``stdio_client`` (same spawn, same
shutdown, same parsing), except how the server's stdout is cut into lines.

Why: the SDK (``mcp`` 2.3, ``mcp/client/stdio.py``) keeps the unfinished line as one string and
concatenates every chunk read from the pipe to it (``(buffer + chunk).split("\\n")``), so a message
of N bytes read in chunks of c bytes costs N²/2c: one 20 MB tool result (issue 10's output-cap
test) took 3 s of the MCP loop's CPU when the pipe gave 64 KB chunks and 24 s at 8 KB. Here the
chunks of an unfinished line are kept in a list and joined once its newline arrives (linear).

A line is also bounded (:data:`MAX_LINE_CHARS`): a server that writes without end and no newline
(a bug, or a hostile server) would otherwise grow the app's memory until it is killed. Past the
bound the server is stopped and the connection ends with :class:`MessageTooLong`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import anyio.lowlevel
import mcp.client.stdio as sdk
from anyio.streams.text import TextReceiveStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters
from mcp.shared.message import SessionMessage

#: Longest stdout line (one JSON-RPC message) read from a stdio server, in characters: 64 Mi,
#: three times the 20 MB tool result of the output-cap test (tests/security/test_output_cap.py).
MAX_LINE_CHARS = 64 * 2**20


class MessageTooLong(Exception):
    """A stdio server wrote more than :data:`MAX_LINE_CHARS` characters without a newline; it was
    stopped. ``str()`` is the reason shown as the server's error."""


def split_lines(pending: list[str], chunk: str) -> list[str]:
    """Add ``chunk`` to the unfinished line ``pending`` (its pieces, updated in place) and return
    the lines it completes, without their newline. Each character is copied once per line it
    ends up in, whatever the chunk sizes.

    Args:
        pending: pieces of the unfinished line so far; left holding the new unfinished rest.
        chunk: the text just read.

    Returns:
        The completed lines, oldest first (empty when ``chunk`` has no newline).
    """
    if "\n" not in chunk:
        pending.append(chunk)
        return []
    head, _, rest = chunk.partition("\n")
    first = "".join((*pending, head))
    lines = rest.split("\n")
    pending[:] = [lines.pop()]
    return [first, *lines]


@asynccontextmanager
async def stdio_client(
    server: StdioServerParameters, errlog: TextIO = sys.stderr
) -> AsyncGenerator[TransportStreams, None]:
    """Spawn an MCP server subprocess and exchange newline-delimited JSON-RPC with it over its
    stdin/stdout: ``mcp.client.stdio.stdio_client`` with :func:`split_lines` as the reader.

    Args:
        server: command, arguments, environment (over the SDK's safe default), cwd, encoding.
        errlog: where the server's stderr goes.

    Yields:
        ``(read_stream, write_stream)`` of :class:`SessionMessage` (a parse error arrives as an
        ``Exception`` on the read stream).

    Raises:
        OSError: the server process cannot be spawned.
    """
    command = await sdk._get_executable_command(server.command)
    process = await sdk._create_platform_compatible_process(
        command=command,
        args=server.args,
        env=sdk.get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # No awaits until the task group is entered (as in the SDK: a cancellation in the gap would
    # leak the live process).
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout, "Opened process is missing stdout"
        stdout = TextReceiveStream(process.stdout, encoding=server.encoding, errors=server.encoding_error_handler)
        try:
            async with read_stream_writer:
                try:
                    pending: list[str] = []
                    pending_chars = 0
                    async for chunk in stdout:
                        end = chunk.rfind("\n")
                        pending_chars = pending_chars + len(chunk) if end < 0 else len(chunk) - end - 1
                        if pending_chars > MAX_LINE_CHARS:  # stop it first: the drain below reads to EOF
                            await sdk._stop_server_process(process)
                            raise MessageTooLong(
                                f"the server wrote more than {MAX_LINE_CHARS // 2**20} Mi characters without a "
                                "newline (one JSON-RPC message per line); it was stopped"
                            )
                        for line in split_lines(pending, chunk):
                            try:
                                await read_stream_writer.send(sdk._parse_line(line))
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session is gone; only the drain below remains
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed the stdout stream under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                sdk.logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        assert process.stdin, "Opened process is missing stdin"
        try:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode(server.encoding, server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_stream_writer.aclose()  # the session sees the connection end
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # unblock the reader into its drain
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT) as flush_scope:
            await writer_done.wait()
        if flush_scope.cancelled_caught:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        await sdk._stop_server_process(process)  # close stdin, grace, SIGTERM, SIGKILL the group
        await sdk._aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # every wait inside is bounded
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
