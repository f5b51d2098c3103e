"""The session controller (tui/controller.py): the screen asks by posting requests up, the
controller answers with facts; "new conversation" is one path and is refused while a turn runs.

Harness test: the controller alone in :class:`ControllerHarness` (no main screen), requests posted
to the app as the main screen posts them. Journey (full app): ``/clear`` and Esc on the main
screen post those requests while a turn runs.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import tui_scenarios as sc
from textual.message import Message
from textual.widgets import Static
from tui_harness import Harness, widget_app

from toolscout.tui import messages as m
from toolscout.tui.controller import SessionController

SIZE = (120, 36)


class ControllerHarness(Harness):
    """A :class:`SessionController` with no main screen, over a model session (``provider``)
    on the harness's engine (already started). It stands in for two parts of the app: it hands
    the requests posted to it to the controller as ``ToolscoutApp`` does (``on_…_requested``),
    and it is the target of the controller's facts (the main screen in the app)."""

    def __init__(self, build: Any, engine: Any, *, provider: Any) -> None:
        super().__init__(build, engine)
        self.controller = SessionController(
            self,
            engine.settings,
            engine,
            start_engine=False,
            new_session=sc.session_factory(engine, engine.settings, "model", provider),
        )

    @property
    def session(self) -> Any:
        return self.controller.session

    def on_mount(self) -> None:
        self.controller.connect(self)

    async def on_unmount(self) -> None:
        await self.controller.stop()

    def on_turn_requested(self, message: m.TurnRequested) -> None:
        self.controller.send(message.text)

    def on_interrupt_requested(self, message: m.InterruptRequested) -> None:
        self.controller.interrupt()

    def on_new_conversation_requested(self, message: m.NewConversationRequested) -> None:
        self.controller.new_conversation()


def controller_app(provider: Any, **kwargs: Any) -> Any:
    """A :class:`ControllerHarness` over the fixture engine and ``provider``; yields the settled pilot."""
    return widget_app(
        lambda engine: Static(), size=SIZE, harness=functools.partial(ControllerHarness, provider=provider), **kwargs
    )


async def test_new_conversation_is_refused_while_a_turn_runs_then_starts_after_the_interrupt() -> None:
    """Harness: the controller refuses ``NewConversationRequested`` while a turn runs (a notice,
    the same session, no ``ConversationStarted``); ``InterruptRequested`` cancels the turn (the
    session's ``TurnEnded`` fact); then the request starts a new session, said once by
    ``ConversationStarted`` with the new session's id."""
    provider = sc.ScriptedProvider("thinking hard", hang=True)
    msgs = sc.Messages()
    async with controller_app(provider, message_hook=msgs) as pilot:
        app = pilot.app
        first = app.session
        app.post_message(m.TurnRequested("never ends"))
        await asyncio.wait_for(provider.started.wait(), 10)
        assert first.busy
        mark = len(msgs.seen)
        app.post_message(m.NewConversationRequested())
        await msgs.wait_for(pilot, lambda x: isinstance(x, m.NewConversationRequested), start=mark)
        assert app.session is first and first.busy  # refused: the turn keeps running
        assert any("A turn is running" in n.message for n in app._notifications)
        app.post_message(m.InterruptRequested())
        ended = await msgs.wait_for(pilot, lambda x: isinstance(x, m.TurnEnded), start=mark)
        await sc.settle(pilot)  # the turn's worker ends
        assert ended.cancelled and not first.busy
        assert not any(isinstance(x, m.ConversationStarted) for x in msgs.seen)
        app.post_message(m.NewConversationRequested())
        await msgs.wait_for(pilot, lambda x: isinstance(x, m.ConversationStarted), start=mark)
        await sc.settle(pilot)  # the old session's close (a worker)
        started = {id(x): x for x in msgs.seen if isinstance(x, m.ConversationStarted)}  # the hook sees it per pump
        assert len(started) == 1 and app.session is not first
        assert app.session.id in next(iter(started.values())).notice


async def test_clear_and_escape_on_the_main_screen_are_requests_to_the_controller() -> None:
    """Journey (full app): while a turn runs, ``/clear`` in the prompt posts
    ``NewConversationRequested`` (refused, said in a notice) and Esc posts ``InterruptRequested``
    (the turn stops); ``/clear`` then starts the new conversation."""
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
        assert any("A turn is running" in n.message for n in app._notifications)
        await pilot.press("escape")  # the one Esc: a request, then the session's TurnCancelled fact
        await sc.settle(pilot)
        assert any(isinstance(x, m.InterruptRequested) for x in seen) and not first.busy
        await sc.type_text(pilot, "/clear")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert app.session is not first
