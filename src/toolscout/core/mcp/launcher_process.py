"""The server launcher: one process, in its own session, that starts every stdio MCP server.

Run as a script (``python -I -S launcher_process.py SOCKET``; standard library only, so it starts
in tens of ms): it listens on the Unix socket ``SOCKET`` (``SOCK_SEQPACKET``, in a private 0700
directory; peers of another uid are refused), prints ``ready`` on stdout, and for each
:mod:`.launcher_shim` that connects:

1. receives ``{"argv", "env", "cwd", "nice"}`` (a :mod:`marshal` dict: both ends run the same
   Python; only peers of this uid are read) with the shim's stdin, stdout and stderr attached
   (``SCM_RIGHTS``), starts ``argv`` on those descriptors in a new process group of this session
   (at ``nice`` if above 0: the group, and this session's scheduling group once), and answers
   ``{"pid": N}`` or ``{"error": "..."}``;
2. answers ``{"exit": CODE}`` when the server ends (128 + signal number when killed);
3. kills the server's process group (SIGKILL) if the shim goes away while the server runs: the
   client gave up on it (the SDK's last resort is SIGKILL to the shim's group).

Why: see :mod:`.shared_sessions`. When its stdin closes (the app stopped, or died) it sends
SIGTERM to every server's group, SIGKILL after :data:`GRACE_S`, and exits.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

#: Seconds between SIGTERM and SIGKILL when the launcher shuts down.
GRACE_S = 0.25
#: Largest request accepted (bytes of JSON).
MAX_REQUEST = 1 << 20

_live: dict[int, subprocess.Popen[bytes]] = {}
_lock = threading.Lock()
_group_niced = False


def _send(conn: socket.socket, message: dict[str, object]) -> None:
    with contextlib.suppress(OSError):
        conn.send(marshal.dumps(message))


def _lower_session(nice: int) -> None:
    """Give this session's scheduling group (Linux autogroup) nice ``nice``, once. The kernel
    allows an unprivileged write every 100 ms machine-wide, so a refusal is retried briefly."""
    global _group_niced
    with _lock:
        if _group_niced:
            return
        _group_niced = True
    for _ in range(20):
        try:
            with open("/proc/self/autogroup", "w", encoding="ascii") as fh:
                fh.write(str(nice))
            return
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:
            return


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return bool(struct.unpack("3i", creds)[1] == os.getuid())


def _serve(conn: socket.socket) -> None:
    """One shim: start its server, report the pid and the exit, kill the group if it leaves."""
    fds: list[int] = []
    try:
        if not _same_user(conn):
            return
        data, fds, _flags, _addr = socket.recv_fds(conn, MAX_REQUEST, 3)
        request = marshal.loads(data)
        if len(fds) != 3:
            _send(conn, {"error": "expected stdin, stdout and stderr"})
            return
        try:
            proc = subprocess.Popen(
                [str(a) for a in request["argv"]],
                stdin=fds[0],
                stdout=fds[1],
                stderr=fds[2],
                env={str(k): str(v) for k, v in request["env"].items()},
                cwd=request.get("cwd") or None,
                process_group=0,
                close_fds=True,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            _send(conn, {"error": f"cannot start the server: {exc}"})
            return
        nice = int(request.get("nice") or 0)
        if nice > 0:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PGRP, proc.pid, nice)
            _lower_session(nice)
    except (OSError, ValueError, EOFError, KeyError, TypeError) as exc:
        _send(conn, {"error": f"bad request: {exc}"})
        return
    finally:
        for fd in fds:
            os.close(fd)
    with _lock:
        _live[proc.pid] = proc
    _send(conn, {"pid": proc.pid})
    threading.Thread(target=_watch_shim, args=(conn, proc), daemon=True).start()
    code = proc.wait()
    with _lock:
        _live.pop(proc.pid, None)
    _send(conn, {"exit": 128 - code if code < 0 else code})
    conn.close()


def _watch_shim(conn: socket.socket, proc: subprocess.Popen[bytes]) -> None:
    """Block until the shim's end of the socket closes; SIGKILL the server's group if it runs."""
    with contextlib.suppress(OSError):
        while conn.recv(4096):
            pass
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)


def _shutdown_when_stdin_closes() -> None:
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    with _lock:
        groups = list(_live)
    for pid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(_alive(pid) for pid in groups):
        time.sleep(0.01)
    for pid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
    os._exit(0)


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def main(argv: list[str]) -> int:
    """Serve shims on the socket ``argv[1]`` until stdin closes. Returns 2 on bad usage."""
    if len(argv) != 2:
        print("usage: launcher_process.py SOCKET", file=sys.stderr)
        return 2
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(argv[1])
    server.listen(128)
    threading.Thread(target=_shutdown_when_stdin_closes, daemon=True).start()
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
