"""``--resume``: the resumed conversation is shown in the chat, with the session id.

Journey (full app): resuming is a start-up flow of the main screen (it shows the session's
history on mount). The conversation it resumes is made through the core's API (the session the
app would drive, sent one message), not by a first app.
"""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.widgets.chat import AssistantEntry, NoticeEntry, UserEntry

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


async def test_a_resumed_session_shows_its_transcript() -> None:
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    settings = sc.make_settings()
    first_id = await _a_saved_conversation(settings)

    engine = sc.make_engine(settings)
    resumed = Session.resume(engine, first_id, settings=settings, provider=OfflineProvider())
    app = make_app(settings, engine, resumed)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        chat = app.screen.chat
        users = [str(e.render()) for e in chat.query(UserEntry)]
        assert users == ["weather in Paris"]
        assert [e for e in chat.query(AssistantEntry)], "the model's answer is shown"
        notices = [str(e.render()) for e in chat.query(NoticeEntry)]
        assert any(f"Resumed session {first_id}" in n for n in notices)
        assert "Sunny [b]today[/b]." in sc.screen_text(app)  # literal, as it was said
