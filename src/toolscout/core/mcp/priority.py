"""Setting ``mcp.serverPriority = "low"``: stdio servers run at a lower CPU priority than the app.

Why: 47 servers starting at once keep every core busy for tens of seconds. Each is started in its
own session (the SDK's ``start_new_session``), and Linux's per-session scheduling (autogroup)
weighs each session like the app's whole process, so the app gets about 1/48 of the CPU and a
keystroke waits 100 ms or more (issue 12). With "low", each new server process gets nice
:data:`LOW_NICE`, for its session's scheduling group too: the app comes first, and the servers use
all the CPU the app leaves. The cost: under other load on the machine the servers start later.

With ``mcp.serverSessions = "shared"`` (the default) the launcher gives the server's process group
and the shared session's scheduling group that nice value (:mod:`.launcher_process`); this module
is the path for servers started directly. Linux only (``/proc``); elsewhere, or without
permission, it does nothing. The SDK does not expose the server's process, so :func:`lower_new_children` looks for child processes of this one that it
has not seen yet, right after each server process starts.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

#: The nice value given to server processes and their scheduling groups (0 normal … 19 lowest).
LOW_NICE = 15

_seen: set[tuple[int, str]] = set()  # (pid, start time): a reused pid is a new process
_lock = threading.Lock()


def lower_new_children(nice: int = LOW_NICE) -> list[int]:
    """Give every child process of this one not handled before nice ``nice`` (the process, and,
    for a child that leads its own session, that session's autogroup: a child still in this
    process's session shares this process's group, which keeps its priority). Returns their pids
    (empty off Linux).

    Runs on the MCP connections' thread (:mod:`.loop_thread`): another thread may see a child's
    new process nice a moment before its group's.

    Never raises: a process that exits meanwhile, or a refused change, is skipped.
    """
    if not sys.platform.startswith("linux"):
        return []
    me = os.getpid()
    lowered: list[int] = []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) < 20 or fields[1] != str(me):
            continue
        key = (int(entry), fields[19])  # field 22 of stat: start time
        with _lock:
            if key in _seen:
                continue
            _seen.add(key)
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, key[0], nice)
        if fields[3] == entry:  # a session leader (the SDK's start_new_session): its own group;
            # another child's group is this process's, which must keep its priority
            with contextlib.suppress(OSError), open(f"/proc/{entry}/autogroup", "w", encoding="ascii") as fh:
                fh.write(str(nice))
        lowered.append(key[0])
    return lowered
