"""Turns: streamed assistant text, the chat following what is sent, Esc interrupts a running
turn, slash commands, /clear.

Two full-app journeys (a model session; an offline one with /clear), since what they show is the
main screen's and the controller's wiring: the prompt starting a turn, the session's events
reaching the chat, the slash commands, a new session. One harness test: the prompt's history
alone (:class:`tui_harness.PromptHarness`)."""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from tui_harness import PromptHarness, submit

from toolscout.tui.widgets.chat import (
    AssistantEntry,
    ErrorEntry,
    NoticeEntry,
    SearchEntry,
    UserEntry,
)

SIZE = (120, 36)


async def test_a_model_conversation_streams_follows_what_is_sent_and_esc_interrupts() -> None:
    """Journey (full app, model session): a turn streams into the chat (Markdown, markup literal)
    and its usage reaches the controller; a slash command and a message sent after the view was
    moved away from the end bring it back (the main screen sticks the chat on send; the chat
    alone: test_chat_scrolling.py); a turn that hangs keeps the screen busy, refuses a second
    message (the text stays) and Esc interrupts it."""
    provider = sc.ScriptedProvider("The **answer** is [bold]42[/bold].")
    app = sc.make_app(session="model", provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "what is it")
        await pilot.press("enter")
        await sc.settle(pilot)
        entries = list(app.screen.chat.children)
        assert isinstance(entries[1], UserEntry)
        answers = [e for e in entries if isinstance(e, AssistantEntry)]
        assert len(answers) == 1
        assert "[bold]42[/bold]" in answers[0].source
        assert not app.screen.busy
        assert app.controller.cache_stats().requests == 1

        # The chat follows what is sent, even after the view moved away from its end.
        chat = app.screen.chat
        for _ in range(3):
            await sc.type_text(pilot, "/help")
            await pilot.press("enter")
        await sc.settle(pilot)
        await sc.chat_at_end(pilot)
        assert chat.max_scroll_y > 0
        chat.scroll_home(animate=False)  # as after a tool call grew or the terminal was resized
        await pilot.pause()
        assert not chat.is_vertical_scroll_end
        await sc.type_text(pilot, "/mcp")
        await pilot.press("enter")
        await sc.settle(pilot)
        await sc.chat_at_end(pilot)
        assert chat.is_vertical_scroll_end
        chat.scroll_to(y=chat.max_scroll_y - 5, animate=False)  # content grew under the view
        await pilot.pause()
        assert not chat.is_vertical_scroll_end
        provider.reply = "Hello from the model."
        await sc.type_text(pilot, "hello")
        await pilot.press("enter")
        await sc.settle(pilot)
        await sc.chat_at_end(pilot)
        assert chat.is_vertical_scroll_end
        assert "Hello from the model." in sc.screen_text(app)

        # Esc interrupts a running turn.
        provider.reply, provider.hang = "thinking hard", True
        provider.started.clear()
        await sc.type_text(pilot, "never ends")
        await pilot.press("enter")
        await asyncio.wait_for(provider.started.wait(), 10)
        await pilot.pause()
        assert app.screen.busy
        assert app.session.busy
        await sc.type_text(pilot, "second")
        await pilot.press("enter")  # refused while busy: the text stays, the turn keeps running
        await pilot.pause()
        assert app.screen.query_one("#prompt").value == "second"
        assert app.session.busy
        await pilot.press("escape")
        await sc.settle(pilot)
        assert not app.session.busy
        assert not app.screen.busy
        notices = [e for e in app.screen.chat.children if isinstance(e, NoticeEntry)]
        assert any("interrupted" in str(n.render()) for n in notices)


async def test_slash_commands_then_clear_starts_a_new_session_and_keeps_the_old_transcript() -> None:
    """Journey (full app, offline session persisted to the hermetic data dir, one server that
    fails to start): the main screen's slash commands (/help, /context, /mcp with the failure
    reason in full, /search with its ranker named, an unknown one); then a search the session records, and /clear:
    a new session over the same engine, the old transcript kept on disk, a chat with only the
    notice, and the new session wired to the chat."""
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    settings = sc.make_settings()
    engine = sc.make_engine(settings, broken=True)
    first = Session(engine, settings=settings, provider=OfflineProvider())  # persisted (hermetic data dir)
    app = make_app(settings, engine, first)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        for command in ("/help", "/context", "/mcp", "/search slack message", "/nope"):
            await sc.type_text(pilot, command)
            await pilot.press("enter")
            await pilot.pause()
        entries = [e for e in app.screen.chat.children if not e.has_class("-warning")][1:]  # after the welcome
        assert [type(e) for e in entries] == [NoticeEntry, NoticeEntry, NoticeEntry, SearchEntry, ErrorEntry]
        title = str(entries[3].title)  # names the ranker that ranked (the fixtures': hybrid), not the query form
        assert "ranker hybrid" in title and "keyword" not in title
        await sc.chat_at_end(pilot)  # the error entry is mounted; its scroll into view follows a frame later
        text = sc.screen_text(app)
        assert "unknown command /nope" in text
        mcp = str(entries[2].render())  # the failure reason in full, not cut at a column edge
        jira = next(s for s in app.engine.server_statuses() if s.name == "jira")
        assert jira.error and jira.error in mcp

        await sc.type_text(pilot, "weather forecast")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert first.messages and first.store is not None and first.store.path.exists()
        assert app.session.loaded_tools
        before = len(first.messages)
        await sc.type_text(pilot, "/clear")
        await pilot.press("enter")
        await sc.settle(pilot)
        entries = list(app.screen.chat.children)
        assert [type(e) for e in entries] == [NoticeEntry]  # only the notice that says what happened
        second = app.session
        assert second is not first and app.controller.session is second
        assert second.messages == [] and second.engine is engine and second.provider is first.provider
        assert first.store.path.exists()  # the old conversation stays on disk
        assert not app.session.loaded_tools and not app.session.tool_calls
        text = sc.screen_text(app)
        assert "new conversation" in text and f"--resume {first.id}" in text
        await sc.type_text(pilot, "weather forecast")  # the new session is wired to the chat
        await pilot.press("enter")
        await sc.settle(pilot)
        assert second.messages and len(first.messages) == before  # the old session got nothing more
        assert any(isinstance(e, SearchEntry) for e in app.screen.chat.children)


async def test_prompt_history_walks_with_up_and_down() -> None:
    """The prompt alone in a harness app answered as the main screen answers it (that the
    screen puts slash commands in the history: test_multiline_input.py's journey)."""
    async with PromptHarness().run_test(size=SIZE) as pilot:
        for command in ("/help", "/mcp"):
            await submit(pilot, command)
        await sc.type_text(pilot, "draft")
        prompt = pilot.app.query_one("#prompt")
        await pilot.press("up")
        assert prompt.value == "/mcp"
        await pilot.press("up")
        assert prompt.value == "/help"
        await pilot.press("down", "down")
        assert prompt.value == "draft"
