"""A long tool call's progress on its chat entry: Textual's ProgressBar under the call's title while
the MCP server reports progress (determinate with a total, indeterminate without), the server's
message shown literally, the bar gone once the call ends.

The server is the stdio fixture ``slow.py`` (it holds the call until the test creates a file);
the call comes from a model through the loopback provider's Anthropic or OpenAI API (directly,
or through ExecuteTool), or, offline, from the person (the argument form's run).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import tui_scenarios as sc

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.warm_servers import server_args
from toolscout.core.mcp.config import ServerConfig
from toolscout.tui import messages as m
from toolscout.tui.widgets.chat import ToolCallEntry
from toolscout.tui.widgets.tool_progress import ToolProgress

SIZE = (120, 36)
WORK = "mcp__slow__work"
SLOW = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "slow.py"
#: Rich markup and an escape sequence in the server's message: shown as text, the escape removed.
MESSAGE = "[b]step {i}[/b] of {n}\x1b[31m"
#: (mode, strategy, provider): the model calls the tool through ExecuteTool (tool search on,
#: execute-proxy), directly (nothing deferred, stub), or the person runs it offline.
CELLS = [("on", "execute-proxy", "anthropic"), ("off", "stub", "openai"), ("on", "stub", "offline")]


def _app(tmp_path: Path, mode: str, strategy: str, provider: str, monkeypatch: Any, url: str = "") -> Any:
    from toolscout.core.session.providers import create_provider
    from toolscout.tui.factory import make_app

    log = tmp_path / "slow.jsonl"
    slow = ServerConfig("slow", "stdio", command=sys.executable, args=tuple(server_args(SLOW, "slow", str(log))))
    overrides: dict[str, Any] = {
        "toolSearch.enabled": {"on": "true", "off": "false"}[mode],
        "session.strategy": strategy,
        "permissions.allow": ["mcp__slow__*"],
        "toolSearch.ranker": "bm25f",
        "toolSearch.native": "off",
    }
    if provider != "offline":
        overrides["provider.name"] = provider
        monkeypatch.setenv(f"{provider.upper()}_API_KEY", "test-key")
        monkeypatch.setenv(f"{provider.upper()}_BASE_URL", url if provider == "anthropic" else url + "/v1")
    settings = sc.make_settings(**overrides)
    engine = sc.make_engine(settings, catalogs=False, weather=False, project_dir=tmp_path, servers=(slow,))
    session = "offline" if provider == "offline" else "model"
    chosen = create_provider(settings, max_retries=0) if provider != "offline" else None
    return make_app(settings, engine, new_session=sc.session_factory(engine, settings, session, chosen))


def _call(mode: str, strategy: str, arguments: dict[str, Any]) -> ToolCall:
    if mode == "on" and strategy == "execute-proxy":
        return ToolCall("ExecuteTool", {"tool_name": WORK, "params": arguments})
    return ToolCall(WORK, arguments)


def _bar(app: Any) -> tuple[ToolCallEntry, ToolProgress]:
    [entry] = [e for e in app.screen.chat.children if isinstance(e, ToolCallEntry)]
    assert entry.progress is not None, "no progress bar on the call's entry"
    return entry, entry.progress


async def _watch(pilot: Any, msgs: sc.Messages, release: Path, *, steps: int) -> tuple[Any, str, str]:
    """Wait for the last step's progress, read the bar, let the call end, wait for its end."""
    await msgs.wait_for(pilot, lambda x: isinstance(x, m.ToolCallProgressed) and x.progress == steps, timeout_s=30)
    await pilot.pause()
    entry, progress = _bar(pilot.app)
    state = (progress.bar.total, progress.bar.progress)
    shown = str(progress.message.render())
    screen = sc.screen_text(pilot.app)
    release.touch()
    await msgs.wait_for(pilot, lambda x: isinstance(x, m.ToolCallFinished), timeout_s=30)
    await sc.settle(pilot)
    assert entry.progress is None and not list(pilot.app.screen.query(ToolProgress))  # gone with the call
    return state, shown, screen


@pytest.mark.parametrize("cell", CELLS, ids="-".join)
async def test_a_long_call_shows_a_progress_bar_until_it_ends(tmp_path, monkeypatch, cell) -> None:
    mode, strategy, provider = cell
    release = tmp_path / "release"
    arguments = {"steps": 3, "hold": str(release), "message": MESSAGE}
    msgs = sc.Messages()
    if provider == "offline":
        app = _app(tmp_path, mode, strategy, provider, monkeypatch)
        async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
            await sc.settle(pilot)
            app.controller.run_tool(WORK, arguments)  # what the argument form's Ctrl+S does
            state, shown, screen = await _watch(pilot, msgs, release, steps=3)
            result = sc.screen_text(app)
    else:
        script = [Reply(tool_calls=[_call(mode, strategy, arguments)]), Reply(text="all done")]
        with FakeModelServer(script) as model:
            app = _app(tmp_path, mode, strategy, provider, monkeypatch, model.url)
            async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
                await sc.settle(pilot)
                await sc.type_text(pilot, "do the slow work")
                await pilot.press("enter")
                state, shown, screen = await _watch(pilot, msgs, release, steps=3)
                result = sc.screen_text(app)
    assert state == (3, 3)  # determinate: the server said the total
    assert shown == "[b]step 3[/b] of 3"  # literal markup, the escape sequence removed
    assert "[b]step 3[/b] of 3" in screen and "100%" in screen, screen
    assert "worked 3 steps" in result and "100%" not in result
    calls = [json.loads(line) for line in (tmp_path / "slow.jsonl").read_text().splitlines()]
    assert calls[0]["event"] == "call" and calls[0]["progress_token"] is not None
    assert calls[-1] == {"event": "done"}


async def test_an_unknown_total_is_an_indeterminate_bar(tmp_path, monkeypatch) -> None:
    release = tmp_path / "release"
    app = _app(tmp_path, "on", "stub", "offline", monkeypatch)
    msgs = sc.Messages()
    async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
        await sc.settle(pilot)
        app.controller.run_tool(WORK, {"steps": 2, "hold": str(release), "known_total": False})
        (total, progress), shown, _ = await _watch(pilot, msgs, release, steps=2)
    assert total is None and progress == 2  # indeterminate: no total from the server
    assert shown == "step 2 of 2"


async def test_progress_that_comes_before_the_entry_is_composed_is_shown(tmp_path) -> None:
    """The server's first report may reach the chat before the new entry is mounted."""
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        app.controller.post(m.ToolCallStarted("c1", "mcp__weather__get_forecast", {"city": "Paris"}))
        app.controller.post(m.ToolCallProgressed("c1", 1, 4, "first"))  # in the same turn of the loop
        await pilot.pause()
        await pilot.pause()
        _, progress = _bar(app)
        assert (progress.bar.total, progress.bar.progress, str(progress.message.render())) == (4, 1, "first")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_esc_during_a_long_call_cancels_it_on_the_server(tmp_path, monkeypatch, provider) -> None:
    release = tmp_path / "never"
    script = [Reply(tool_calls=[ToolCall(WORK, {"steps": 1, "hold": str(release)})]), Reply(text="all done")]
    msgs = sc.Messages()
    with FakeModelServer(script) as model:
        app = _app(tmp_path, "off", "execute-proxy", provider, monkeypatch, model.url)
        async with app.run_test(size=SIZE, message_hook=msgs) as pilot:
            await sc.settle(pilot)
            await sc.type_text(pilot, "do the slow work")
            await pilot.press("enter")
            await msgs.wait_for(pilot, lambda x: isinstance(x, m.ToolCallProgressed), timeout_s=30)
            await pilot.press("escape")  # interrupt the turn
            await msgs.wait_for(pilot, lambda x: isinstance(x, m.ToolCallFinished), timeout_s=30)
            await sc.settle(pilot)
            assert not list(app.screen.query(ToolProgress))  # the bar went with the call
            log = tmp_path / "slow.jsonl"
            with anyio.fail_after(30):  # the server is another process: its file has no event to wait on
                while "cancelled" not in log.read_text():
                    await anyio.sleep(0.02)
    assert [json.loads(line)["event"] for line in log.read_text().splitlines()] == ["call", "cancelled"]
