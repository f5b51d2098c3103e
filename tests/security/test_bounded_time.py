"""Issue 10 item 4 (time): a catastrophic regular expression never freezes toolscout.

``(a+)+$`` on a line of 64 ``a`` followed by ``!`` backtracks for longer than the universe has
existed; Grep runs it in a child process that its time limit, a cancellation (Esc) and quitting
the app all kill. Assertions are on the process itself (gone from /proc), not on durations.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from toolscout.core.builtins import find
from toolscout.core.builtins.base import ToolContext
from toolscout.core.builtins.find import GrepTool
from toolscout.core.models import ToolErrorKind

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see child processes")

EVIL = {"pattern": "(a+)+$", "output_mode": "content"}


def _workers() -> set[int]:
    """Pids of live grep worker processes started by this process (zombies excluded)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and b"grep_worker" in cmdline:
            found.add(int(entry.name))
    return found


async def _until(check, timeout: float = 30.0) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "line.txt").write_text("a" * 64 + "!\n")
    return tmp_path


async def test_time_limit_kills_the_search(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(find, "GREP_TIMEOUT_S", 1.0)
    result = await GrepTool().run(EVIL, ToolContext(project))
    assert result.error_kind is ToolErrorKind.TIMEOUT and "backtrack" in result.text()
    assert _workers() == set()


async def test_cancelling_kills_the_search(project: Path) -> None:
    task = asyncio.ensure_future(GrepTool().run(EVIL, ToolContext(project)))
    await _until(lambda: bool(_workers()))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _workers() == set()


async def test_grep_still_finds_matches(project: Path) -> None:
    result = await GrepTool().run({"pattern": "a+!", "output_mode": "content"}, ToolContext(project))
    assert result.text().startswith("line.txt:1:aaaa")


@pytest.mark.parametrize("key", ["escape", "ctrl+q"])
async def test_escape_and_ctrl_q_stop_a_catastrophic_grep_in_the_app(key: str, project: Path) -> None:
    import tui_scenarios as sc

    from toolscout.core.session.providers.base import ModelResponse, Usage

    class GrepModel(sc.ScriptedProvider):
        async def complete(self, request, on_text):
            self.requests.append(request)
            self.started.set()
            use = {"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": "Grep", "input": EVIL}
            return ModelResponse([use], "tool_use", Usage(input_tokens=10, output_tokens=5))

    app = sc.make_app(session="model", provider=GrepModel(), project_dir=project, catalogs=False, weather=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()  # not sc.settle: it waits on report workers that a newer one may cancel
        await asyncio.wait_for(app.engine.wait_for_servers(10), 15)
        await pilot.pause()
        await sc.type_text(pilot, "search")
        await pilot.press("enter")
        await _until(lambda: bool(_workers()))
        await pilot.press(key)
        if key == "escape":  # the turn is interrupted, the search killed, the app still running
            await _until(lambda: not _workers() and not app.session.busy)
            assert app.is_running
    # ctrl+q: run_test returned, so the app exited while the search ran; the search went with it.
    await _until(lambda: not _workers())
