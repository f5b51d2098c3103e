"""The command the MCP SDK starts for a stdio server when servers share one session.

Run as a script (``python -I -S launcher_shim.py SOCKET NICE -- COMMAND [ARGS...]``; standard
library only): it hands its stdin, stdout and stderr and its environment and working directory to
the launcher (:mod:`.launcher_process`) listening on ``SOCKET``, which starts ``COMMAND`` on them;
then it stands in for the server towards the SDK:

- it exits with the server's exit code when the server ends;
- SIGTERM, SIGINT and SIGHUP are passed to the server's process group, followed by SIGKILL after
  :data:`GRACE_S` (the SDK's own escalation, shortened to fit inside the SDK's wait);
- if the SDK kills it (SIGKILL), the launcher sees it go and kills the server's group.

If the launcher cannot be reached, the server runs in this process instead (``exec``), as if it
had been started directly.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import threading
from types import FrameType

#: Seconds between passing on SIGTERM and sending SIGKILL to the server's process group.
GRACE_S = 0.25


def _exec_here(command: list[str], nice: int) -> int:
    if nice > 0:
        with contextlib.suppress(OSError):
            os.nice(nice)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        os.write(2, f"cannot start the server: {exc}\n".encode())
    return 127


def _forward(pgid: int, signum: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pgid, signum)
    timer = threading.Timer(GRACE_S, _kill, args=(pgid,))
    timer.daemon = True
    timer.start()


def _kill(pgid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


def _wait_without_launcher(pid: int) -> int:
    """The launcher is gone: wait for the server itself (its exit code is then unknown: 1)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return 1
    while True:
        with contextlib.suppress(InterruptedError):
            if select.select([fd], [], [])[0]:
                return 1


def main(argv: list[str]) -> int:
    """Run ``argv[4:]`` through the launcher on socket ``argv[1]`` at nice ``argv[2]``.

    Returns the server's exit code, 127 if it could not be started, 2 on bad usage.
    """
    if len(argv) < 5 or argv[3] != "--":
        os.write(2, b"usage: launcher_shim.py SOCKET NICE -- COMMAND [ARGS...]\n")
        return 2
    path, nice, command = argv[1], int(argv[2]), argv[4:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
        request = {"argv": command, "env": dict(os.environ), "cwd": os.getcwd(), "nice": nice}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        reply = json.loads(conn.recv(65536) or b"{}")
    except (OSError, ValueError):
        conn.close()
        return _exec_here(command, nice)
    if "pid" not in reply:
        os.write(2, f"{reply.get('error', 'the launcher closed the connection')}\n".encode())
        return 127
    pid = int(reply["pid"])
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the server holds the pipes now: their ends close when it exits
    os.dup2(devnull, 1)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        _forward(pid, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    while True:
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if not data:
            return _wait_without_launcher(pid)
        with contextlib.suppress(ValueError):
            message = json.loads(data)
            if "exit" in message:
                return int(message["exit"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
