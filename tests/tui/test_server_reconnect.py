"""A server that crashed, in the app: the recommendation bar drops its tools; ``/mcp`` says how to
bring it back, the command palette has "Reconnect server NAME" for it, and ``/mcp reconnect NAME``
does the same; the chat says how it went.

Journey (full offline app) over a real stdio fixture server, ``weird`` (tests/fixtures/servers/
normal.py), killed by its pid; every wait is on a message the app handled.
"""

from __future__ import annotations

import os
import signal
import sys

import tui_scenarios as sc
from warm_servers import server_args

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.models import ServerState
from toolscout.tui import messages as m
from toolscout.tui.widgets.chat import ErrorEntry
from toolscout.tui.widgets.recommendations import RecommendationBar, RecommendationItem

SIZE = (120, 36)


def weird() -> ServerConfig:
    """The stdio server ``weird`` (the normal fixture server under another name)."""
    args = server_args(sc.FIXTURES / "servers" / "normal.py", "weird")
    return ServerConfig("weird", "stdio", command=sys.executable, args=tuple(args), source="test")


async def allow(tool, params) -> str:
    return "allow_once"


async def crash(pilot, msgs: sc.Messages) -> None:
    """Kill ``weird``'s process and wait until the app has heard it disconnected."""
    app = pilot.app
    pid = int((await app.engine.call_tool("mcp__weird__pid", {}, asker=allow)).text())
    mark = len(msgs.seen)
    os.kill(pid, signal.SIGKILL)
    await msgs.wait_for(
        pilot,
        lambda e: (
            isinstance(e, m.ServerStatusChanged)
            and e.status.name == "weird"
            and e.status.state is ServerState.DISCONNECTED
        ),
        start=mark,
    )
    await sc.settle(pilot)
    assert app.engine.tool("mcp__weird__echo") is None


async def reconnected(pilot, msgs: sc.Messages, mark: int) -> None:
    """Wait until the chat was told ``weird`` reconnected."""
    await msgs.wait_for(pilot, lambda e: isinstance(e, m.NoticeReported) and "weird reconnected" in e.text, start=mark)
    await sc.settle(pilot)
    assert pilot.app.engine.tool("mcp__weird__echo") is not None


async def test_a_crashed_server_is_reconnected_from_the_palette_and_with_mcp_reconnect() -> None:
    app = sc.make_app(servers=(weird(),))
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        await crash(pilot, msgs)
        await sc.ask(pilot, "/mcp")
        text = sc.screen_text(app)
        assert "weird  disconnected · 0 tools" in text and "/mcp reconnect weird to try again" in text

        # the command palette offers it
        await pilot.press("ctrl+p")
        await sc.until_screen(pilot, "CommandPalette")
        await sc.type_text(pilot, "reconn")
        await pilot.pause()
        assert "Reconnect server weird" in sc.screen_text(app)
        mark = len(msgs.seen)
        await pilot.press("enter")
        await reconnected(pilot, msgs, mark)
        assert "Reconnecting weird…" in sc.screen_text(app) and "weird reconnected: 6 tools" in sc.screen_text(app)

        # and so does /mcp reconnect NAME
        await crash(pilot, msgs)
        mark = len(msgs.seen)
        await sc.ask(pilot, "/mcp reconnect weird")
        await reconnected(pilot, msgs, mark)
        await sc.ask(pilot, "/mcp reconnect nosuch")
        last = app.screen.chat.children[-1]
        assert isinstance(last, ErrorEntry)
        assert "there is no server 'nosuch' (servers: weather, weird)" in str(last.render())


async def test_the_recommendation_bar_drops_the_tools_of_a_server_that_went_away() -> None:
    """The bar showed ``mcp__weird__echo``; once ``weird`` crashed its tools left the catalog, and
    Enter on them could only say so: the bar follows the catalog, and what is left still works."""
    app = sc.make_app(servers=(weird(),))
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        bar = app.screen.query_one(RecommendationBar)
        await sc.ask(pilot, "repeat the given text back unchanged, or the weather forecast")
        shown = [item.hit.name for item in bar.query(RecommendationItem)]
        assert "mcp__weird__echo" in shown and "mcp__weather__get_forecast" in shown
        await pilot.press("tab")  # the cursor in the bar while the server goes away
        await crash(pilot, msgs)
        shown = [item.hit.name for item in bar.query(RecommendationItem)]
        assert shown and not [n for n in shown if n.startswith("mcp__weird__")]
        assert "mcp__weird__" not in sc.screen_text(app).split("─ recommended tools")[-1]  # the bar, under the chat
        await pilot.press("enter")  # the focus stayed in the bar, on a tool that is still there
        await sc.until_screen(pilot, "ArgumentFormScreen")
        assert app.screen.tool.name == shown[0]
