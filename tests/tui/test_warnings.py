"""Warnings reach the chat: those recorded before start-up once, later engine warnings as they come.

One full-app journey: the main screen shows the recorded warnings on mount and hands the core's
later warnings (through the bridge) to the chat, and the status bar counts a failed server. How
the chat groups warnings is a harness test in test_chat_warnings.py.
"""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.widgets.chat import NoticeEntry

SIZE = (120, 36)


def _warning_texts(app) -> list[str]:
    return [str(e.render()) for e in app.screen.chat.query(NoticeEntry) if e.has_class("-warning")]


async def test_start_up_warnings_show_once_literally_and_later_ones_as_they_arrive() -> None:
    """A warning recorded before start-up is shown once, its markup literal; a server that
    fails to start and a warning after start each appear once as they come, and the status bar
    counts the failed server."""
    app = sc.make_app(broken=True)
    app.engine.warn(
        "provider anthropic needs ANTHROPIC_API_KEY [bold]x[/]; starting an offline session instead", "provider"
    )
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        texts = _warning_texts(app)
        startup = [t for t in texts if not t.startswith("! jira:")]  # all but the failed server's line
        assert len(startup) == 1 and startup[0].count("ANTHROPIC_API_KEY") == 1  # shown once
        assert "provider: provider anthropic needs ANTHROPIC_API_KEY [bold]x[/]" in startup[0]
        assert any(t.startswith("! jira: failed") for t in texts)  # a server that failed to start

        app.engine.warn("something odd", "catalog")
        await sc.settle(pilot)
        texts = _warning_texts(app)
        assert any("catalog: something odd" in t for t in texts)
        assert sum("something odd" in t for t in texts) == 1
        assert sum("ANTHROPIC_API_KEY" in t for t in texts) == 1  # still once
        assert "servers 6/7 · 1 failed" in sc.screen_text(app)  # the status bar counts the failed server
