"""``--resume``: the resumed conversation is shown in the chat, with the session id.

Journey (full app): resuming is a start-up flow of the main screen (it shows the session's
history on mount). The conversation it resumes is made through the core's API (the session the
app would drive, sent one message), not by a first app.
"""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.widgets.chat import (
    AssistantEntry,
    NoticeEntry,
    SearchEntry,
    ToolCallEntry,
    UserEntry,
)

SIZE = (120, 36)


async def _a_saved_conversation(settings) -> str:
    """A persisted conversation: one question, the model's answer with markup in it; its id."""
    from toolscout.core.session.session import Session

    engine = sc.make_engine(settings)
    await engine.start()
    try:
        first = Session(engine, settings=settings, provider=sc.ScriptedProvider("Sunny [b]today[/b]."))
        await first.send("weather in Paris")
        await first.close()
    finally:
        await engine.stop()
    assert first.store is not None and first.store.path.exists()
    return first.id


def resumed_app(settings, session_id: str):
    """The app over a new engine, continuing saved session ``session_id`` offline (``toolscout --resume ID``)."""
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    engine = sc.make_engine(settings)
    return make_app(settings, engine, Session.resume(engine, session_id, settings=settings, provider=OfflineProvider()))


async def test_a_resumed_session_shows_its_transcript() -> None:
    settings = sc.make_settings()
    first_id = await _a_saved_conversation(settings)
    app = resumed_app(settings, first_id)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        chat = app.screen.chat
        users = [str(e.render()) for e in chat.query(UserEntry)]
        assert users == ["weather in Paris"]
        assert [e for e in chat.query(AssistantEntry)], "the model's answer is shown"
        notices = [str(e.render()) for e in chat.query(NoticeEntry)]
        assert any(f"Resumed session {first_id}" in n for n in notices)
        assert "Sunny [b]today[/b]." in sc.screen_text(app)  # literal, as it was said


async def test_a_resumed_tool_search_shows_as_it_did_live() -> None:
    """Issue 24 item 6f. An offline search in the app (the person's words become a ToolSearch),
    then ``--resume``: the same search entry (title, hits in that order) as live, not a folded
    ``⚙ ToolSearch`` tool call."""
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    settings = sc.make_settings()
    engine = sc.make_engine(settings)
    live_app = make_app(
        settings,
        engine,
        new_session=lambda asker: Session(engine, settings=settings, provider=OfflineProvider(), asker=asker),
    )
    async with live_app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "weather forecast")
        (live,) = live_app.screen.chat.query(SearchEntry)
        live_title, live_hits = str(live.title), [o.id for o in live.hits.options]
        session_id = live_app.session.id
    assert live_hits and "weather" in live_title

    app = resumed_app(settings, session_id)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        chat = app.screen.chat
        assert not [e for e in chat.query(ToolCallEntry) if e.tool_name == "ToolSearch"]
        (entry,) = chat.query(SearchEntry)
        assert str(entry.title) == live_title and [o.id for o in entry.hits.options] == live_hits
        assert "1. 0.943 mcp__weather__get_forecast" in sc.screen_text(app)
