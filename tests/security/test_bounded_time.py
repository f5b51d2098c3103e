"""Issue 10 item 4 and issue 28 item 1: a Grep never freezes toolscout, and its search process
(ripgrep, ``rg``) never outlives its call or toolscout.

ripgrep matches in linear time, so the catastrophic ``(a+)+$`` that once backtracked for longer
than the universe has existed now answers at once. What still takes long is a lot of data: a
1 TiB sparse file named as Grep's path keeps rg reading for many minutes, so it stands in for any
search that has to be stopped. Its time limit, its line limit, a cancellation (Esc), quitting
the app, and toolscout itself dying (``kill -9``, SIGTERM, SIGHUP) all end it. Assertions are on
the processes themselves (read from /proc), never on durations.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from toolscout.core.builtins import find
from toolscout.core.builtins.base import ToolContext
from toolscout.core.builtins.find import GrepTool
from toolscout.core.models import ToolErrorKind

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see child processes")

#: A search that runs until something stops it: rg reading a 1 TiB file.
LONG = {"pattern": "never-there", "path": "huge.txt", "output_mode": "content"}


def _stat(pid: int) -> tuple[str, int, bytes] | None:
    """``(state, parent pid, argv[0])`` of a process, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return None
    return fields[0], int(fields[1]), argv0


def _searches(parent: int | None = None) -> set[int]:
    """Pids of live ``rg`` processes whose parent is ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := _stat(int(entry.name))) is not None:
            state, ppid, argv0 = info
            if ppid == parent and state != "Z" and os.path.basename(argv0) == b"rg":
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    info = _stat(pid)
    return info is not None and info[0] != "Z" and os.path.basename(info[2]) == b"rg"


async def _until(check, timeout: float = 30.0) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "line.txt").write_text("a" * 64 + "!\n")
    with open(tmp_path / "huge.txt", "wb") as f:  # text first (not binary), then a 1 TiB hole
        f.write(b"hit here\n" * 1000)
        f.truncate(1 << 40)
    return tmp_path


async def test_a_catastrophic_pattern_answers_at_once(project: Path) -> None:
    result = await GrepTool().run(
        {"pattern": "(a+)+$", "output_mode": "content", "path": "line.txt"}, ToolContext(project)
    )
    assert result.text() == "No matches for '(a+)+$'."
    assert (
        await GrepTool().run({"pattern": "(a+)+!", "output_mode": "count", "path": "line.txt"}, ToolContext(project))
    ).text() == "line.txt:1"


async def test_time_limit_kills_the_search(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(find, "GREP_TIMEOUT_S", 1.0)
    result = await GrepTool().run(LONG, ToolContext(project))
    assert result.error_kind is ToolErrorKind.TIMEOUT and "stopped after 1 s" in result.text()
    assert _searches() == set()


async def test_the_line_limit_stops_the_search(project: Path) -> None:
    result = await asyncio.wait_for(
        GrepTool().run({**LONG, "pattern": "hit", "head_limit": 3}, ToolContext(project)), 30
    )
    assert result.text().splitlines() == [
        "huge.txt:1:hit here",
        "huge.txt:2:hit here",
        "huge.txt:3:hit here",
        "… [stopped at 3 lines; use head_limit or a narrower path]",
    ]
    assert _searches() == set()


async def test_cancelling_kills_the_search(project: Path) -> None:
    task = asyncio.ensure_future(GrepTool().run(LONG, ToolContext(project)))
    await _until(lambda: bool(_searches()))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _searches() == set()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
async def test_the_search_dies_with_toolscout(project: Path, sig: signal.Signals) -> None:
    """``toolscout call Grep`` killed (or terminated, or hung up) mid-search: no rg is left."""
    app = subprocess.Popen(
        [sys.executable, "-m", "toolscout", "call", "Grep", "--params", json.dumps(LONG)],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await _until(lambda: bool(_searches(app.pid)) or app.poll() is not None, 60)
        searches = _searches(app.pid)
        assert searches, "toolscout started no rg (or it ended)"
        app.send_signal(sig)
        await _until(lambda: app.poll() is not None)
        await _until(lambda: not any(_alive(pid) for pid in searches))
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()


@pytest.mark.parametrize("key", ["escape", "ctrl+q"])
async def test_escape_and_ctrl_q_stop_a_long_grep_in_the_app(key: str, project: Path) -> None:
    import tui_scenarios as sc

    from toolscout.core.session.providers.base import ModelResponse, Usage

    class GrepModel(sc.ScriptedProvider):
        async def complete(self, request, on_text):
            self.requests.append(request)
            self.started.set()
            use = {"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": "Grep", "input": LONG}
            return ModelResponse([use], "tool_use", Usage(input_tokens=10, output_tokens=5))

    app = sc.make_app(session="model", provider=GrepModel(), project_dir=project, catalogs=False, weather=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()  # not sc.settle: it waits on report workers that a newer one may cancel
        await asyncio.wait_for(app.engine.wait_for_servers(10), 15)
        await pilot.pause()
        await sc.type_text(pilot, "search")
        await pilot.press("enter")
        await _until(lambda: bool(_searches()))
        await pilot.press(key)
        if key == "escape":  # the turn is interrupted, the search killed, the app still running
            await _until(lambda: not _searches() and not app.session.busy)
            assert app.is_running
    # ctrl+q: run_test returned, so the app exited while the search ran; the search went with it.
    await _until(lambda: not _searches())
