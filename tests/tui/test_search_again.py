"""A question sent while servers still connect is searched again once they are up (issue 24
item 3): journey (full app, offline) over a stdio server that connects when the test opens its
gate (``servers/late.py``). The question is typed and sent before the app is even up, as a
newcomer does right after launch; its search says "still connecting: late". Once ``late`` has
connected the chat says it searches again, and the new search finds late's tools: once, with the
question shown once (before, it stayed answered by the servers connected at first)."""

from __future__ import annotations

import sys
from pathlib import Path

import tui_scenarios as sc
from textual import events
from warm_servers import server_args

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.search.results import SearchResult
from toolscout.tui.messages import ToolSearchRan
from toolscout.tui.widgets.chat import NoticeEntry, SearchEntry, UserEntry

LATE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "late.py"
QUESTION = "operation on records"


async def test_a_question_answered_still_connecting_is_searched_again_once_the_server_is_up(tmp_path) -> None:
    from toolscout.tui.factory import make_app as build

    settings = sc.make_settings()
    late = ServerConfig(
        "late",
        "stdio",
        command=sys.executable,
        source="test",
        args=tuple(server_args(LATE, "late", "--tools", "3", "--gate", str(tmp_path / "gate"))),
    )
    engine = sc.make_engine(settings, servers=(late,))
    app = build(settings, engine, new_session=sc.session_factory(engine, settings))
    for key in [*QUESTION.replace(" ", "\0"), "enter"]:  # typed right after launch
        key = "space" if key == "\0" else key
        event = events.Key(key, " " if key == "space" else (key if len(key) == 1 else None))
        event.set_sender(app)
        app.post_message(event)
    msgs = sc.Messages()
    async with app.run_test(size=(140, 42), message_hook=msgs) as pilot:
        chat = app.screen.chat

        def searches() -> list[SearchResult]:  # what the session searched, as the screen got it
            ran = {id(m): m for m in msgs.seen if isinstance(m, ToolSearchRan)}  # once each (it bubbles)
            return [m.result for m in ran.values() if m.result is not None]

        await msgs.wait_for(pilot, lambda m: isinstance(m, ToolSearchRan))
        await sc.settle(pilot, servers=False)  # weather is up by now, late waits for its gate
        assert engine.pending_servers() == ["late"]
        first = searches()
        assert len(first) == 1 and "late" in first[0].pending_servers  # (the in-memory weather may be too)
        assert not any(h.tool.server == "late" for h in first[0].hits)
        assert len(chat.query(SearchEntry)) == 1

        (tmp_path / "gate").touch()
        await sc.settle(pilot)  # late connects; the question is searched again
        again = searches()
        assert len(again) == 2, [r.query for r in again]
        assert again[1].query == QUESTION and again[1].pending_servers == []
        assert any(h.tool.server == "late" for h in again[1].hits)  # what it waited for
        assert len(chat.query(SearchEntry)) == 2
        notices = [str(n.render()) for n in chat.query(NoticeEntry) if n.border_title == "search again"]
        assert (
            len(notices) == 1 and "late" in notices[0] and f"connected: searching again for “{QUESTION}”" in notices[0]
        )
        assert [str(u.render()) for u in chat.query(UserEntry)] == [QUESTION]  # shown once
        assert app.session.turn == 2  # searched again once, not again and again
        assert "searching again" in " ".join(sc.screen_text(app).split())
