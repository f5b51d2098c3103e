"""The session controller (tui/controller.py): the screen asks by posting requests up, the
controller answers with facts; "new conversation" is one path and is refused while a turn runs."""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from textual.message import Message

from toolscout.tui import messages as m

SIZE = (120, 36)


async def test_clear_is_a_request_the_controller_refuses_while_a_turn_runs() -> None:
    provider = sc.ScriptedProvider("thinking hard", hang=True)
    app = sc.make_app(session="model", provider=provider)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await sc.settle(pilot)
        first = app.session
        await sc.type_text(pilot, "never ends")
        await pilot.press("enter")
        await asyncio.wait_for(provider.started.wait(), 10)
        await sc.type_text(pilot, "/clear")
        await pilot.press("enter")
        await pilot.pause()
        assert any(isinstance(x, m.NewConversationRequested) for x in seen)
        assert app.session is first and first.busy  # refused: the turn keeps running
        assert not any(isinstance(x, m.ConversationStarted) for x in seen)
        assert any("A turn is running" in n.message for n in app._notifications)
        await pilot.press("escape")  # the one Esc: a request, then the session's TurnCancelled fact
        await sc.settle(pilot)
        assert any(isinstance(x, m.InterruptRequested) for x in seen) and not first.busy
        await sc.type_text(pilot, "/clear")
        await pilot.press("enter")
        await sc.settle(pilot)
        started = {id(x): x for x in seen if isinstance(x, m.ConversationStarted)}  # the hook sees it per pump
        assert len(started) == 1 and app.session is not first
        assert app.session.id in next(iter(started.values())).notice
