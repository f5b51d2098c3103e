"""The Bash built-in: run a shell command in the working directory (asks before running).

Timeout rules follow Claude Code: 2 minutes by default, at most 10 minutes, given in ms. The
process group is killed on timeout and when the call is cancelled, so no child outlives its call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import clip, fail, kill_group, spec
from .base import ToolContext

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


class BashTool:
    """Run one shell command; stdout and stderr are returned together."""

    read_only = False
    spec = spec(
        "Bash",
        "Executes a shell command (/bin/sh) in the working directory, as in a terminal, and returns "
        "its combined stdout and stderr (cut at 30,000 characters) and exit code. Use it to run "
        "programs and scripts: git, package managers, builds, tests. Use Read, Glob and Grep "
        "instead of cat, find and grep. "
        f"timeout is in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).",
        {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_MS,
                "description": "Timeout in milliseconds",
            },
            "description": {"type": "string", "description": "What the command does, in 5-10 words"},
        },
        ["command"],
        hint="execute shell commands and scripts in a terminal",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run ``params["command"]`` with ``/bin/sh`` in ``ctx.cwd``.

        Raises:
            asyncio.CancelledError: re-raised after the process group is killed.
        """
        command = params["command"]
        if not command.strip():
            return fail("Bash", "command is empty.", ToolErrorKind.INVALID_PARAMS)
        timeout_s = min(int(params.get("timeout") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000
        try:
            proc = await asyncio.create_subprocess_shell(
                command,
                cwd=str(ctx.cwd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return fail("Bash", f"Cannot start the shell in {ctx.cwd}: {exc}")
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
        except TimeoutError:
            await kill_group(proc)
            return fail(
                "Bash", f"Command timed out after {timeout_s:g} s and was killed: {command}", ToolErrorKind.TIMEOUT
            )
        except asyncio.CancelledError:
            await kill_group(proc)
            raise
        text = out.decode("utf-8", errors="replace").rstrip("\n")
        code = proc.returncode
        if code != 0:
            body = f"{text}\n[exit code {code}]" if text else f"[exit code {code}]"
            return fail("Bash", clip(body))
        return ToolResult.ok("Bash", clip(text) if text else "(no output)")
