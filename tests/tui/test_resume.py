"""``--resume``: the resumed conversation is shown in the chat, with the session id."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.widgets.chat import AssistantEntry, NoticeEntry, UserEntry

SIZE = (120, 36)


async def test_a_resumed_session_shows_its_transcript() -> None:
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    settings = sc.make_settings()
    first = Session(sc.make_engine(settings), settings=settings, provider=sc.ScriptedProvider("Sunny [b]today[/b]."))
    app = make_app(settings, first.engine, first)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "weather in Paris")
        await pilot.press("enter")
        await sc.settle(pilot)
    await first.close()

    engine = sc.make_engine(settings)
    resumed = Session.resume(engine, first.id, settings=settings, provider=OfflineProvider())
    app = make_app(settings, engine, resumed)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        chat = app.screen.chat
        users = [str(e.render()) for e in chat.query(UserEntry)]
        assert users == ["weather in Paris"]
        assert [e for e in chat.query(AssistantEntry)], "the model's answer is shown"
        notices = [str(e.render()) for e in chat.query(NoticeEntry)]
        assert any(f"Resumed session {first.id}" in n for n in notices)
        assert "Sunny [b]today[/b]." in sc.screen_text(app)  # literal, as it was said
