"""Turns: streamed assistant text, Esc interrupts a running turn, slash commands."""

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


async def test_a_model_turn_streams_into_the_chat() -> None:
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


async def test_escape_interrupts_a_running_turn() -> None:
    provider = sc.ScriptedProvider("thinking hard", hang=True)
    app = sc.make_app(session="model", provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
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


async def test_slash_commands() -> None:
    app = sc.make_app(broken=True)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        for command in ("/help", "/context", "/mcp", "/search slack message", "/nope"):
            await sc.type_text(pilot, command)
            await pilot.press("enter")
            await pilot.pause()
        entries = [e for e in app.screen.chat.children if not e.has_class("-warning")][1:]  # after the welcome
        assert [type(e) for e in entries] == [NoticeEntry, NoticeEntry, NoticeEntry, SearchEntry, ErrorEntry]
        await sc.chat_at_end(pilot)  # the error entry is mounted; its scroll into view follows a frame later
        text = sc.screen_text(app)
        assert "unknown command /nope" in text
        mcp = str(entries[2].render())  # the failure reason in full, not cut at a column edge
        jira = next(s for s in app.engine.server_statuses() if s.name == "jira")
        assert jira.error and jira.error in mcp
        await sc.type_text(pilot, "/clear")
        await pilot.press("enter")
        await sc.settle(pilot)
        entries = list(app.screen.chat.children)
        assert [type(e) for e in entries] == [NoticeEntry]  # only the notice that says what happened
        assert "new conversation" in sc.screen_text(app)


async def test_clear_starts_a_new_session_and_keeps_the_old_transcript() -> None:
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    settings = sc.make_settings()
    engine = sc.make_engine(settings)
    first = Session(engine, settings=settings, provider=OfflineProvider())  # persisted (hermetic data dir)
    app = make_app(settings, engine, first)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "weather forecast")
        await pilot.press("enter")
        await sc.settle(pilot)
        assert first.messages and first.store is not None and first.store.path.exists()
        assert app.session.loaded_tools
        before = len(first.messages)
        await sc.type_text(pilot, "/clear")
        await pilot.press("enter")
        await sc.settle(pilot)
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
