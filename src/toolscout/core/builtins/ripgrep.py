"""Grep's search process: ripgrep (``rg``, shipped by the ``ripgrep`` wheel, as Claude Code uses it).

ripgrep matches in linear time (Rust's regex engine has no backtracking), so no pattern can
run for hours; it respects ``.gitignore`` (in a git work tree), ``.ignore`` and ``.rgignore``, and
without ``-L`` it follows no symbolic link. It is started with ``--no-config`` (a
``RIPGREP_CONFIG_PATH`` in the environment could add ``--follow`` or ``--pre``) and is never given
a path to resolve: it searches ``.`` from a working directory set, in the child, to a directory
descriptor opened with no symlink followed (:mod:`.safe_open`), or reads one such opened file on
its standard input.

The process never outlives its call or toolscout: it runs in its own process group (a terminal
hang-up or Ctrl+C does not reach it directly), which is killed on the time limit, when the output
reaches its line limit, on cancellation (Esc, quitting); and on Linux it is started with
``PR_SET_PDEATHSIG`` = SIGKILL, so the kernel kills it the moment toolscout dies, however it dies
(``kill -9``, SIGTERM, SIGHUP).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import shutil
import signal
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ._common import kill_group

#: prctl option: the signal the kernel sends this process when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: Characters kept of one output line; rg itself stops printing a line after this many bytes.
MAX_LINE_CHARS = 500
_RG_COLUMNS = 1000


@dataclass
class Outcome:
    """What one rg run gave.

    Attributes:
        lines: output lines (decoded, each cut to :data:`MAX_LINE_CHARS`), at most the limit.
        full: True when the line limit was reached and rg was stopped there.
        timed_out: True when the time limit stopped rg.
        returncode: rg's exit status (0 found, 1 nothing found, 2 an error; -9 when killed).
        stderr: the end of rg's error output.
    """

    lines: list[str] = field(default_factory=list)
    full: bool = False
    timed_out: bool = False
    returncode: int | None = None
    stderr: str = ""


def rg_binary() -> str | None:
    """The ``rg`` executable: the one the ``ripgrep`` wheel put beside this Python (the
    environment's scripts folder), else one on ``PATH``; None when there is none."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return fn


def child_setup(cwd_fd: int | None) -> Callable[[], None]:
    """The ``preexec_fn`` of a search process: die with this process (``PR_SET_PDEATHSIG``,
    Linux), exit at once if this process is already gone, then ``fchdir`` to ``cwd_fd``.

    Everything it calls is looked up here, in the parent, so the child only makes system calls.
    """
    parent = os.getpid()
    prctl = _prctl()
    getppid, fchdir, exit_now = os.getppid, os.fchdir, os._exit

    def setup() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if getppid() != parent:  # toolscout died before the line above took effect
            exit_now(1)
        if cwd_fd is not None:
            fchdir(cwd_fd)

    return setup


async def _tail(stream: asyncio.StreamReader, keep: int = 2000) -> str:
    data = b""
    while chunk := await stream.read(65536):
        data = (data + chunk)[-keep:]
    return data.decode("utf-8", "replace")


async def run_rg(args: list[str], *, cwd_fd: int | None, stdin_fd: int | None, limit: int, timeout: float) -> Outcome:
    """Run ``rg`` with ``args`` and collect at most ``limit`` output lines within ``timeout`` s.

    Args:
        args: rg's arguments (toolscout's fixed flags are added in front).
        cwd_fd: a directory descriptor to search from (the child ``fchdir``s to it).
        stdin_fd: a file descriptor for rg's standard input (a file searched as ``-``).
        limit: the most output lines to keep; rg is stopped once there are this many.
        timeout: seconds before rg is killed (``timed_out`` is then set).

    Raises:
        FileNotFoundError: no ``rg`` executable (:func:`rg_binary`).
        OSError: rg could not be started.
        asyncio.CancelledError: re-raised after the process group is killed.
    """
    rg = rg_binary()
    if rg is None:
        raise FileNotFoundError("rg")
    fixed = ["--no-config", "--color=never", f"--max-columns={_RG_COLUMNS}", "--max-columns-preview"]
    proc = await asyncio.create_subprocess_exec(
        rg,
        *fixed,
        *args,
        stdin=stdin_fd if stdin_fd is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        preexec_fn=child_setup(cwd_fd),
    )
    assert proc.stdout is not None and proc.stderr is not None
    out = Outcome()
    errors = asyncio.ensure_future(_tail(proc.stderr))
    try:
        async with asyncio.timeout(timeout):
            out.full = await _collect(proc.stdout, out.lines, limit)
            if not out.full:
                await proc.wait()
    except TimeoutError:
        out.timed_out = True
    finally:
        if proc.returncode is None:
            await kill_group(proc)
        with contextlib.suppress(asyncio.TimeoutError):
            out.stderr = await asyncio.wait_for(asyncio.shield(errors), 5)
        errors.cancel()
    out.returncode = proc.returncode
    return out


async def _collect(stream: asyncio.StreamReader, lines: list[str], limit: int) -> bool:
    """Read ``stream`` to its end into ``lines``; True (and stop reading) once there are ``limit``."""
    pending = b""
    while chunk := await stream.read(65536):
        *complete, pending = (pending + chunk).split(b"\n")
        for raw in complete:
            lines.append(raw.decode("utf-8", "replace")[:MAX_LINE_CHARS])
            if len(lines) >= limit:
                return True
        pending = pending[: 4 * _RG_COLUMNS]  # rg cuts long lines; this only bounds a stray one
    if pending:
        lines.append(pending.decode("utf-8", "replace")[:MAX_LINE_CHARS])
    return len(lines) >= limit
