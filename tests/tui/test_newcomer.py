"""Small things a Claude Code user expects of the app (issue 24 item 6), each a full-app journey
with the keys a newcomer presses: how to quit (6a), ``/permissions`` (6b), a folder field filled
in with the project folder (6d), a resumed ToolSearch shown as live (6f), the palette's
Screenshot where ``~/Downloads`` is missing (6h)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tui_scenarios as sc
from test_help import painted_lines
from textual.command import CommandPalette

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.settings.layers import SettingsPaths, load_settings
from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.widgets.chat import NoticeEntry, SearchEntry, ToolCallEntry

SIZE = (120, 36)


async def until(predicate, timeout_s: float = 15.0) -> None:
    """Wait (bounded) until ``predicate()`` holds."""
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.02)


# -- 6d: the project folder in a folder field ---------------------------------------------------
async def test_git_repo_path_starts_as_the_project_folder_and_the_real_server_gets_it(tmp_path: Path) -> None:
    """Ctrl+P → Run tool… → git_status: ``repo_path`` shows ``.`` (the project folder), and Run
    sends the folder itself: the real mcp-server-git (confined to the project with
    ``--repository``, running in another folder) reports the project's own untracked file."""
    project = tmp_path / "repo"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "hello-newcomer.txt").write_text("hi\n", encoding="utf-8")
    git = ServerConfig("git", command=sys.executable, args=("-m", "mcp_server_git", "--repository", str(project)),
                       cwd=str(tmp_path))
    settings = sc.make_settings()
    engine = sc.make_engine(settings, catalogs=False, weather=False, project_dir=project, servers=(git,))
    from toolscout.tui.factory import make_app

    app = make_app(settings, engine, new_session=sc.session_factory(engine, settings))
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        await pilot.press("ctrl+p")
        await sc.type_text(pilot, "run tool")
        await sc.settle(pilot, servers=False)
        await pilot.press("enter")
        await msgs.wait_for(pilot, lambda _m: isinstance(app.screen, CommandPalette)
                            and "Run which tool?" in sc.screen_text(app))
        await sc.type_text(pilot, "git_status")
        await msgs.wait_for(pilot, lambda _m: "mcp__git__git_status" in sc.screen_text(app))
        await pilot.press("enter")
        await sc.until_screen(pilot, "ArgumentFormScreen")
        form = app.screen
        assert isinstance(form, ArgumentFormScreen) and form.tool.name == "mcp__git__git_status"
        assert form.query_one("#arg-0").value == "."
        assert "(. is the project folder)" in sc.screen_text(app)
        await pilot.press("ctrl+s")
        await sc.until_screen(pilot, "PermissionScreen")
        assert app.screen.arguments == {"repo_path": str(project.resolve())}  # as they will be sent
        await pilot.press("y")
        await sc.settle(pilot)
        (call,) = app.screen.chat.query(ToolCallEntry)
        await until(lambda: "hello-newcomer.txt" in str(call._result.render()))


def test_only_folder_fields_are_filled_in() -> None:
    """The rule, on the fields servers write: a name that says it, or a general name whose
    description says so; a file path or a field with its own default is left alone."""
    from toolscout.core.calls.form_model import fields_of

    schema = {"type": "object", "properties": {
        "repo_path": {"type": "string"},
        "cwd": {"type": "string", "description": "Working directory"},
        "path": {"type": "string", "description": "The folder to list"},
        "directory": {"type": "string", "description": "Root of the project"},
        "file": {"type": "string", "description": "The repository file to read"},
        "target": {"type": "string", "description": "A path"},
        "root": {"type": "string", "description": "Where to start", "default": "/"},
        "dir": {"type": "integer", "description": "folder depth"},
    }}
    assert [f.name for f in fields_of(schema) if f.project_folder] == ["repo_path", "cwd", "path", "directory"]


# -- 6f: a resumed ToolSearch looks as it did live ------------------------------------------------
async def test_a_resumed_tool_search_shows_as_it_did_live() -> None:
    """An offline search (the person's words become a ToolSearch), then ``--resume``: the same
    search entry (title, hits, in that order) instead of a folded ``⚙ ToolSearch`` tool call."""
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app

    settings = sc.make_settings()
    engine = sc.make_engine(settings)
    live_app = make_app(settings, engine, new_session=lambda asker: Session(
        engine, settings=settings, provider=OfflineProvider(), asker=asker))
    async with live_app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "weather forecast")
        (live,) = live_app.screen.chat.query(SearchEntry)
        live_title, live_hits = str(live.title), [o.id for o in live.hits.options]
        session_id = live_app.session.id
    assert live_hits and "weather" in live_title

    engine = sc.make_engine(settings)
    resumed = Session.resume(engine, session_id, settings=settings, provider=OfflineProvider())
    app = make_app(settings, engine, resumed)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        chat = app.screen.chat
        assert not [e for e in chat.query(ToolCallEntry) if e.tool_name == "ToolSearch"]
        (entry,) = chat.query(SearchEntry)
        assert str(entry.title) == live_title and [o.id for o in entry.hits.options] == live_hits
        assert "1. 0.943 mcp__weather__get_forecast" in sc.screen_text(app)


