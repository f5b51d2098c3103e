"""The stdio transport: the server's command started with pipes for stdin/stdout (the SDK's
``stdio_client`` with a linear line reader, :mod:`.stdio_lines`), stopped within
:data:`STOP_GRACE_S` per step when it closes."""

from __future__ import annotations

import sys
from typing import IO

import mcp.client.stdio as sdk_stdio
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters

from ..server_config import ServerConfig
from .stdio_lines import stdio_client

#: Grace for a stdio server to exit after its stdin closes, then after SIGTERM to its process
#: group, before SIGKILL (s). The SDK waits 2 s + 2 s by default; at 47 servers exiting at once on
#: a busy machine that made quitting take 2.5–4.5 s (issue 12: quit < 2 s).
STOP_GRACE_S = 0.4
sdk_stdio.PROCESS_TERMINATION_TIMEOUT = STOP_GRACE_S  # the SDK reads these module constants per close
sdk_stdio.FORCE_KILL_TIMEOUT = STOP_GRACE_S


def open_stdio(config: ServerConfig, *, errlog: IO[str] | None = None) -> Transport:
    """Start ``config.command`` with ``config.args`` in ``config.cwd`` on entry; its environment
    is the SDK's safe default (HOME, LOGNAME, PATH, SHELL, TERM, USER) with ``config.env`` over it.

    Args:
        config: a ``stdio`` server configuration.
        errlog: where the server's stderr goes (default: this process's stderr).

    Returns:
        The ``stdio_client`` context of :mod:`.stdio_lines` (see
        :func:`~toolscout.core.mcp.transports.open_transport`);
        entering it raises ``OSError`` when the process cannot be spawned.
    """
    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=config.env or None, cwd=config.cwd
    )
    return stdio_client(params, errlog=sys.stderr if errlog is None else errlog)  # type: ignore[arg-type]
