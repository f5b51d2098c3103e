"""Warnings in the chat: a server's warnings in a row share one entry (47 real servers repair or
drop dozens of schemas at start-up; one entry each buried the conversation), other sources and
warnings after another entry get their own."""

from __future__ import annotations

from tui_harness import Harness

from toolscout.core.engine.events import EngineWarning
from toolscout.tui import messages as m
from toolscout.tui.bridge import translate
from toolscout.tui.widgets.chat import ChatView, NoticeEntry, UserEntry, WarningsEntry


def test_engine_warnings_keep_their_server():
    message = translate(EngineWarning("mcp__gitlab__push_files: inputSchema repaired", "gitlab"))
    assert isinstance(message, m.WarningRaised)
    assert message.source == "gitlab" and message.text.startswith("gitlab: mcp__gitlab__push_files")


async def test_warnings_from_one_server_in_a_row_share_one_entry():
    app = Harness(lambda: ChatView(id="chat"))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatView)
        for i in range(9):
            chat.add_warning(f"! gitlab: tool_{i}: inputSchema repaired", "gitlab")
        chat.add_warning("! fetch: wrote output that is not MCP", "fetch")
        chat.add(UserEntry("hello"))
        chat.add_warning("! gitlab: re-listing failed", "gitlab")
        chat.add_warning("! settings.json: unknown key", "")
        chat.add_warning("! settings.json: another", "")
        await pilot.pause()

        entries = list(chat.query(NoticeEntry))
        assert len(entries) == 5
        gitlab, fetch, later, *unsourced = entries
        assert isinstance(gitlab, WarningsEntry) and len(gitlab.lines) == 9
        assert gitlab.border_title == "9 warnings · gitlab"
        shown = str(gitlab.render())
        assert "tool_4" in shown and "tool_5" not in shown
        assert "… and 4 more (F2: the catalog lists them under gitlab)" in shown
        assert isinstance(fetch, WarningsEntry) and fetch.lines == ["! fetch: wrote output that is not MCP"]
        assert fetch.border_title == "warning"
        assert isinstance(later, WarningsEntry) and later.lines == ["! gitlab: re-listing failed"]
        assert [type(e) for e in unsourced] == [NoticeEntry, NoticeEntry]  # no source: nothing to group by
