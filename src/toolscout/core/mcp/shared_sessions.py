"""Setting ``mcp.serverSessions = "shared"`` (the default on Linux): every stdio server runs in one
session, so the servers together weigh as much as the app in the CPU scheduler.

Why (issue 12): the SDK starts each stdio server in a session of its own (``start_new_session``,
so that it can kill the server's process group), and Linux's per-session scheduling (autogroup,
on by default in desktop kernels) gives every session an equal share of the CPU. With 47 servers
starting on 2 cores, the app then gets about 1/48 of the CPU and each keystroke waits its turn
(echo p95 100-300 ms). With one session for all servers, the app gets its fair half whenever it
needs it and the servers use everything the app leaves.

How: :class:`ServerLauncher` starts one launcher process (:mod:`.launcher_process`) in a new
session; :meth:`ServerLauncher.wrap` turns a server's command into a small shim
(:mod:`.launcher_shim`) that the SDK starts as usual and that has the launcher start the real
command on the shim's own stdin/stdout/stderr. The protocol bytes never pass through the shim or
the launcher. Stopping, killing and exit codes behave as with a directly started server.

The cost: one session gets one program's share of a busy machine, where 47 sessions would take
most of it. On a machine already loaded when the servers start, servers sharing a session started
so slowly that healthy ones missed their connect timeout (11-19 of the 47 real servers at load
average 50-70 on 2 cores; none with separate sessions), so ``auto`` (the default) keeps separate
sessions there: :func:`choose_sessions`.

Linux only (Unix sockets with descriptor passing, pidfds); elsewhere, or if the launcher does not
come up, commands run directly as before.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_HERE = Path(__file__).resolve().parent
LAUNCHER = _HERE / "launcher_process.py"
SHIM = _HERE / "launcher_shim.py"
#: Bound on the launcher's start (s); past it, servers start directly.
START_TIMEOUT_S = 5.0


def supported() -> bool:
    """True where the launcher works (Linux with ``os.pidfd_open`` and ``socket.send_fds``)."""
    import socket

    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


def machine_busy(load: float | None = None, cpus: int | None = None) -> bool:
    """True when the 1-minute load average (``load``, default the machine's) is above the number
    of CPUs (``cpus``, default the machine's): runnable work already exceeds the cores."""
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            return False
    return load > (cpus or os.cpu_count() or 1)


def choose_sessions(setting: str) -> str:
    """``"shared"`` or ``"separate"`` for setting ``mcp.serverSessions`` (``auto``: shared unless
    :func:`machine_busy`); always ``"separate"`` where the launcher is not :func:`supported`."""
    if not supported() or setting == "separate":
        return "separate"
    if setting == "shared":
        return "shared"
    return "separate" if machine_busy() else "shared"


class ServerLauncher:
    """The launcher process for one server pool. Thread-safe; :meth:`start` and :meth:`stop` block
    (call them off the event loop).

    Attributes:
        error: why the launcher is not in use (None while it runs or before :meth:`start`).
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: str | None = None
        self._socket: str | None = None
        self._lock = threading.Lock()
        self.error: str | None = None

    @property
    def running(self) -> bool:
        """True while the launcher process is up and accepting shims."""
        return self._socket is not None and self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = START_TIMEOUT_S) -> bool:
        """Start the launcher in a new session and wait for it to listen (at most ``timeout`` s).

        Returns True if it runs; False otherwise, with :attr:`error` set. Never raises.
        """
        with self._lock:
            if self.running:
                return True
            if not supported():
                self.error = "not supported on this platform"
                return False
            try:
                self._dir = tempfile.mkdtemp(prefix="toolscout-launcher-")  # mode 0700
                socket_path = os.path.join(self._dir, "socket")
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(LAUNCHER), socket_path],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    close_fds=True,
                )
                assert self._proc.stdout is not None
                ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
                if not ready or self._proc.stdout.readline().strip() != b"ready":
                    raise OSError(f"the launcher did not start within {timeout:g} s")
            except OSError as exc:
                self.error = f"server launcher unavailable ({exc}); servers start directly"
                self._close()
                return False
            self._socket = socket_path
            self.error = None
            return True

    def wrap(
        self, command: str, args: list[str], env: dict[str, str] | None, nice: int = 0
    ) -> tuple[str, list[str]] | None:
        """The shim command line running ``command args`` in the launcher's session, or None when
        the command should start directly: the launcher is not running, or ``command`` is not
        found on the server's ``PATH`` (so that the SDK reports that as before).

        Args:
            env: the server's configured environment (its ``PATH`` is where the command is looked up).
            nice: 0, or the nice value for the server's process group (setting ``mcp.serverPriority``).
        """
        if not self.running:
            return None
        search_path = (env or {}).get("PATH", os.environ.get("PATH"))
        if shutil.which(command, path=search_path) is None:
            return None
        assert self._socket is not None
        return sys.executable, ["-I", "-S", str(SHIM), self._socket, str(nice), "--", command, *args]

    def stop(self, timeout: float = 2.0) -> None:
        """Close the launcher: servers still running get SIGTERM, then SIGKILL; waits at most
        ``timeout`` s for it to exit, then kills it. Safe to call twice."""
        with self._lock:
            self._socket = None
            self._close(timeout)

    def _close(self, timeout: float = 0.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
