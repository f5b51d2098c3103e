"""A remote server that needs a login, in the app: starting the app logs in to nothing (no browser
opens, nothing is registered at the authorization server) and the stdio server beside it works;
``/mcp`` marks the remote one "needs login" with the command; ``/mcp login NAME`` opens the login
page (the "browser" follows it, as a person clicking "allow") and the server reconnects with its
tools.

Over the loopback authorization server + protected MCP resource (tests/fixtures/oauth_server.py);
every wait is on a message the app handled.
"""

from __future__ import annotations

import sys
import webbrowser

import pytest
import tui_scenarios as sc
from oauth_server import protected_server
from warm_servers import server_args

from toolscout.core.mcp.config import ServerConfig, parse_entry
from toolscout.tui import messages as m

pytest.importorskip("uvicorn")
SIZE = (120, 36)


def local() -> ServerConfig:
    args = server_args(sc.FIXTURES / "servers" / "normal.py", "local")
    return ServerConfig("local", "stdio", command=sys.executable, args=tuple(args), source="test")


async def test_mcp_marks_a_server_that_needs_login_and_mcp_login_logs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    import browser_allow

    opened: list[str] = []

    def follow(url: str) -> bool:
        opened.append(url)
        return browser_allow.main(url) == 0

    monkeypatch.setattr(webbrowser, "open", follow)
    async with protected_server() as server:
        notes = parse_entry("notes", {"type": "http", "url": server.url}, "test", {})
        app = sc.make_app(servers=(notes, local()))
        async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
            await sc.settle(pilot)
            assert opened == [] and server.registrations == []  # starting logs in to nothing
            assert app.engine.tool("mcp__local__echo") is not None
            await sc.ask(pilot, "/mcp")
            text = sc.screen_text(app)
            assert "notes  needs login · 0 tools · http" in text
            assert "/mcp login notes to log in (opens your browser)" in text
            assert "HTTP 401 from" in text

            mark = len(msgs.seen)
            await sc.ask(pilot, "/mcp login notes")
            await msgs.wait_for(
                pilot, lambda e: isinstance(e, m.NoticeReported) and "notes reconnected: 3 tools" in e.text, start=mark
            )
            await sc.settle(pilot)
            assert len(opened) == 1 and opened[0].startswith(f"{server.base}/authorize?")
            assert app.engine.tool("mcp__notes__read_notes") is not None
            assert server.grants == ["authorization_code"]
            assert server.bearer_presented()[-1] == server.issued[0]
