"""Helpers shared by the built-in tools: path resolution, error results, output limits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..models import ToolErrorKind, ToolResult, ToolSpec

#: Tool output longer than this many characters is cut (as in Claude Code's Bash: 30,000).
MAX_OUTPUT_CHARS = 30_000

_T = TypeVar("_T")


class Stopped(Exception):
    """Raised inside a worker thread of :func:`in_thread` that saw its ``stop`` event set."""


async def in_thread(work: Callable[[threading.Event], _T]) -> _T:
    """``work(stop)`` in a worker thread, so file work never stalls the event loop. On
    cancellation ``stop`` is set: ``work`` checks it between chunks (raising :class:`Stopped`),
    so a long read ends soon after instead of running on unseen.

    Raises:
        asyncio.CancelledError: re-raised once ``stop`` is set.
    """
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def spec(
    name: str, description: str, properties: dict[str, Any], required: list[str], *, hint: str | None = None
) -> ToolSpec:
    """A built-in ToolSpec with a closed object schema (``additionalProperties: false``).

    Args:
        hint: the tool's search hint (``ToolSpec.search_hint``): what it does in a short phrase
            of the words people ask with, as Claude Code's ``searchHint`` ("execute shell
            commands"); searched, never sent to the model.
    """
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name=name, description=description, input_schema=schema, original_name=name, search_hint=hint)


def resolve(ctx_cwd: Path, path: str) -> Path:
    """``path`` as an absolute path; relative paths resolve against the session's cwd."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else (ctx_cwd / p)


def fail(tool: str, message: str, kind: ToolErrorKind = ToolErrorKind.TOOL_ERROR) -> ToolResult:
    """An error result with one helpful text block."""
    return ToolResult.error(tool, kind, message)


def clip(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note saying how much was dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [output truncated: {len(text) - limit:,} more characters]"


def is_binary(data: bytes) -> bool:
    """Heuristic: a NUL byte in the first 8 KB means binary (as git and grep decide)."""
    return b"\x00" in data[:8192]


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the process group of ``proc`` (started with ``start_new_session=True``) and reap it
    (waiting at most 5 s), so no child outlives the call that started it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 5)
