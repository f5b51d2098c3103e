"""The command the MCP SDK starts for a stdio server when servers share one session.

Run as a script (``python -I -S launcher_shim.py SOCKET NICE -- COMMAND [ARGS...]``; built-in
modules only, so it starts in about 10 ms of CPU): it hands its stdin, stdout and stderr, its
environment and working directory to the launcher (:mod:`.launcher_process`) listening on
``SOCKET``, which starts ``COMMAND`` on them; then it stands in for the server towards the SDK:

- it exits with the server's exit code when the server ends;
- SIGTERM, SIGINT and SIGHUP are passed to the server's process group, followed by SIGKILL after
  :data:`GRACE_S` (the SDK's own escalation, shortened to fit inside the SDK's wait);
- if the SDK kills it (SIGKILL), the launcher sees it go and kills the server's group.

If the launcher cannot be reached, the server runs in this process instead (``exec``), as if it
had been started directly. Messages are :mod:`marshal` dicts (both ends run the same Python).
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal.py would import enum: ~4 ms more
import _socket
import marshal
import os
import select
import sys

#: Seconds between passing on SIGTERM and sending SIGKILL to the server's process group.
GRACE_S = 0.25
_SERVER = [0]  # the server's pid (= its process group), once started


def _exec_here(command: list[str], nice: int) -> int:
    try:
        if nice > 0:
            os.nice(nice)
        os.execvp(command[0], command)
    except OSError as exc:
        os.write(2, f"cannot start the server: {exc}\n".encode())
    return 127


def _killpg(signum: int) -> None:
    try:  # noqa: SIM105 (contextlib would be one more import at start-up)
        os.killpg(_SERVER[0], signum)
    except OSError:
        pass


def _on_signal(signum: int, _frame: object) -> None:
    _killpg(signum)
    _signal.setitimer(_signal.ITIMER_REAL, GRACE_S)  # then SIGALRM: SIGKILL


def _on_alarm(_signum: int, _frame: object) -> None:
    _killpg(_signal.SIGKILL)


def _wait_without_launcher(pid: int) -> int:
    """The launcher is gone: wait for the server itself (its exit code is then unknown: 1)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return 1
    while not select.select([fd], [], [])[0]:
        pass
    return 1


def _receive(conn: _socket.socket) -> dict[str, object]:
    try:
        data = conn.recv(65536)
    except OSError:
        return {}
    try:
        message = marshal.loads(data) if data else {}
    except (EOFError, ValueError, TypeError):
        return {}
    return message if isinstance(message, dict) else {}


def main(argv: list[str]) -> int:
    """Run ``argv[4:]`` through the launcher on socket ``argv[1]`` at nice ``argv[2]``.

    Returns the server's exit code, 127 if it could not be started, 2 on bad usage.
    """
    if len(argv) < 5 or argv[3] != "--":
        os.write(2, b"usage: launcher_shim.py SOCKET NICE -- COMMAND [ARGS...]\n")
        return 2
    path, nice, command = argv[1], int(argv[2]), argv[4:]
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
        request = {"argv": command, "env": dict(os.environ), "cwd": os.getcwd(), "nice": nice}
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
        conn.sendmsg([marshal.dumps(request)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    except OSError:
        conn.close()
        return _exec_here(command, nice)
    reply = _receive(conn)
    pid = reply.get("pid")
    if not isinstance(pid, int):
        os.write(2, f"{reply.get('error', 'the launcher closed the connection')}\n".encode())
        return 127
    _SERVER[0] = pid
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the server holds the pipes now: their ends close when it exits
    os.dup2(devnull, 1)
    _signal.signal(_signal.SIGALRM, _on_alarm)
    for signum in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
        _signal.signal(signum, _on_signal)
    while True:
        message = _receive(conn)
        if not message:
            return _wait_without_launcher(pid)
        code = message.get("exit")
        if isinstance(code, int):
            return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
