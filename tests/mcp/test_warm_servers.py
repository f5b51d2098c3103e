"""The fork server that starts fixture servers warm (tests/fixtures/forkserver.py) must look, to
the product, like the cold ``python SCRIPT ARGS`` it replaces: same argv, environment, working
directory and stdio pipes; the exit code or signal passed back; signals passed on; and no child
left running once the process the product started is gone."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path

import pytest
from warm_servers import server_argv

SCRIPT = """
import json, os, sys, time
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "env": os.environ.get("WARM_CHECK"),
                  "path0": sys.path[0], "pid": os.getpid(), "warm": "mcp" in sys.modules}), flush=True)
line = sys.stdin.readline()
if line.startswith("exit"):
    sys.exit(int(line.split()[1]))
time.sleep(60)
"""

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="the fork server needs Linux pidfds")


def start(tmp_path: Path) -> tuple[subprocess.Popen[str], dict]:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen(
        server_argv(script, "one", "two words"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "WARM_CHECK": "seen"},
    )
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def test_the_child_runs_the_script_as_python_would_and_its_exit_code_comes_back(tmp_path: Path) -> None:
    proc, seen = start(tmp_path)
    assert seen["argv"] == [str(tmp_path / "script.py"), "one", "two words"]
    assert (seen["cwd"], seen["env"], seen["path0"]) == (str(tmp_path), "seen", str(tmp_path))
    assert seen["warm"] and seen["pid"] != proc.pid  # a forked child with the SDK imported
    proc.communicate("exit 3\n", timeout=30)
    assert proc.returncode == 3


def test_a_signal_reaches_the_child_and_comes_back_as_the_way_it_ended(tmp_path: Path) -> None:
    proc, seen = start(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM
    assert _ends_soon(seen["pid"])


def test_the_child_dies_with_the_process_the_product_started(tmp_path: Path) -> None:
    proc, seen = start(tmp_path)
    proc.kill()
    assert proc.wait(30) == -signal.SIGKILL
    assert _ends_soon(seen["pid"])


def _ends_soon(pid: int, timeout_s: float = 30.0) -> bool:
    """True once process ``pid`` (not ours: the fork server's child) has exited (a pidfd)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], timeout_s)[0])
    finally:
        os.close(pidfd)


def test_a_child_that_exits_at_once_hands_back_its_exit_code_and_its_stderr_alone(tmp_path: Path) -> None:
    """The fork server may report the exit before the client has finished sending (a crashing
    server): the client still exits with the child's code, and nothing of its own reaches stderr.
    Twenty starts, as the race is one of timing."""
    script = tmp_path / "crash.py"
    script.write_text("import sys\nsys.stderr.write('crashed on purpose\\n')\nsys.exit(5)\n")
    for _ in range(20):
        done = subprocess.run(
            server_argv(script), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False
        )
        assert (done.returncode, done.stderr) == (5, "crashed on purpose\n")
