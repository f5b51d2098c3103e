"""Warnings reach the chat: those recorded before start-up once, later engine warnings as they come."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.widgets.chat import NoticeEntry

SIZE = (120, 36)


def _warning_texts(app) -> list[str]:
    return [str(e.render()) for e in app.screen.chat.query(NoticeEntry) if e.has_class("-warning")]


async def test_start_up_warnings_are_shown_once_in_the_chat_literally() -> None:
    app = sc.make_app()
    app.engine.warn("provider anthropic needs ANTHROPIC_API_KEY [bold]x[/]; starting an offline session instead",
                    "provider")
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        texts = _warning_texts(app)
        assert len(texts) == 1
        assert "provider: provider anthropic needs ANTHROPIC_API_KEY [bold]x[/]" in texts[0]


async def test_engine_warnings_after_start_appear_as_they_arrive() -> None:
    app = sc.make_app(broken=True)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        app.engine.warn("something odd", "catalog")
        await sc.settle(pilot)
        texts = _warning_texts(app)
        assert any("catalog: something odd" in t for t in texts)
        assert any(t.startswith("! jira: failed") for t in texts)  # a server that failed to start
        assert sum("something odd" in t for t in texts) == 1
        assert "servers 6/7 · 1 failed" in sc.screen_text(app)  # the status bar counts the failed server
