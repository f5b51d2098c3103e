"""Issue 28 item 2: Read never blocks the app and never loads a whole large file.

Tried as an attacker would, through a real Engine: a repository that carries a named pipe (no
writer will ever come), a socket or a link to ``/dev/zero``; a 2 GiB sparse file; a 1 TiB one
read past its end, then abandoned (Esc). Read answers with a refusal that names what the file
is, or with its page, while the event loop keeps running (a ticker on the loop counts on), and
the memory it used (tracemalloc) stays small. Waits are bounded; nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import tracemalloc
from pathlib import Path

import pytest

from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.settings.layers import Settings

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")

#: Text at the start of the sparse files (not binary: over 8 KB before the first NUL).
HEADER_LINES = 2000


def engine(project: Path, **settings: object) -> Engine:
    return Engine(
        Settings().with_overrides(dict(settings)),
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=project,
    )


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.write(b"".join(b"line %06d of the header\n" % n for n in range(1, HEADER_LINES + 1)))
        f.truncate(size)
    return path


class Ticker:
    """Counts on the event loop while a call runs: it only counts if the loop is free."""

    def __init__(self) -> None:
        self.ticks = 0
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(0.005)
            self.ticks += 1

    def stop(self) -> int:
        self.task.cancel()
        return self.ticks


def release_after(fifo: Path, done: threading.Event, seconds: float = 10.0) -> None:
    """A safety valve for a Read that blocks on the FIFO (as before the fix): after ``seconds``
    a writer opens and closes it, so the test fails on its assertions instead of hanging."""

    def valve() -> None:
        if not done.wait(seconds):
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=valve, daemon=True).start()


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        ("fifo", "a FIFO (named pipe)"),
        ("link-to-fifo", "a FIFO (named pipe)"),
        ("socket", "a socket"),
        ("/dev/zero", "a character device"),
        ("link-to-/dev/zero", "a character device"),
    ],
)
async def test_read_refuses_special_files_at_once(tmp_path: Path, make: str, kind: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer, ever
    (tmp_path / "link").symlink_to(fifo if make == "link-to-fifo" else "/dev/zero")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    path = {"fifo": "pipe", "link-to-fifo": "link", "socket": "sock", "/dev/zero": "/dev/zero"}.get(make, "link")
    done = threading.Event()
    release_after(fifo, done)
    ticker = Ticker()
    try:
        result = await asyncio.wait_for(
            engine(tmp_path, **{"permissions.allow": ["Read(/dev/**)"]}).call_tool("Read", {"file_path": path}), 30
        )
    finally:
        done.set()
        server.close()
        ticker.stop()
    assert result.is_error and f"is {kind}, not a regular file" in result.text()
    assert "Read" not in result.text() or "regular files only" in result.text()


async def test_a_2_gib_sparse_file_is_read_one_page_at_a_time(tmp_path: Path) -> None:
    big = sparse(tmp_path / "big.log", 2 << 30)
    tracemalloc.start()
    try:
        result = await asyncio.wait_for(
            engine(tmp_path).call_tool("Read", {"file_path": "big.log", "offset": 10, "limit": 5}), 30
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"Read of {big.stat().st_size:,} bytes peaked at {peak:,} bytes"
    assert result.text().splitlines() == [f"{n:>6}\tline {n:06d} of the header" for n in range(10, 15)] + [
        "… [the file goes on; continue with offset=15]"
    ]


async def test_the_loop_runs_on_while_read_scans_a_large_file(tmp_path: Path) -> None:
    """An offset past the end makes Read go through the whole file (512 MiB: one line of NULs
    after the header): it does so in a worker thread, within small memory, and says how long the
    file is."""
    sparse(tmp_path / "big.log", 512 << 20)
    tracemalloc.start()
    ticker = Ticker()
    try:
        result = await asyncio.wait_for(
            engine(tmp_path).call_tool("Read", {"file_path": "big.log", "offset": 5000}), 120
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        ticks = ticker.stop()
        tracemalloc.stop()
    assert (
        result.is_error
        and f"offset 5000 is past the end of {tmp_path / 'big.log'} ({HEADER_LINES + 1} lines)" in result.text()
    )
    assert ticks > 0, "the event loop did not run while Read scanned the file"
    assert peak < 4 << 20


def _open_on(path: Path) -> bool:
    """True while some descriptor of this process is open on ``path`` (read from /proc)."""
    for fd in Path("/proc/self/fd").iterdir():
        try:
            if os.readlink(fd) == str(path):
                return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see open files")
async def test_a_cancelled_read_stops_reading(tmp_path: Path) -> None:
    """Esc during a Read that would scan 1 TiB: the reading thread stops and closes the file."""
    huge = sparse(tmp_path / "huge.log", 1 << 40)
    task = asyncio.ensure_future(engine(tmp_path).call_tool("Read", {"file_path": "huge.log", "offset": 10**9}))

    async def until(check) -> None:
        while not check():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(until(lambda: _open_on(huge)), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(until(lambda: not _open_on(huge)), 30)
