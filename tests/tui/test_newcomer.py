"""Small things a Claude Code user expects of the app (issue 24 item 6), each a full-app journey
with the keys a newcomer presses: how to quit (6a), ``/permissions`` (6b), a folder field filled
in with the project folder (6d), the palette's Screenshot where ``~/Downloads`` is missing (6h).
A resumed ToolSearch shown as live (6f) is in ``test_resume.py``."""

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
from toolscout.tui.widgets.chat import NoticeEntry, ToolCallEntry

SIZE = (120, 36)


async def until(predicate, timeout_s: float = 15.0) -> None:
    """Wait (bounded) until ``predicate()`` holds."""
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.02)


# -- 6a: how to quit ---------------------------------------------------------------------------
async def test_the_footer_and_help_say_how_to_quit() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        assert "^q Quit" in sc.screen_text(app).splitlines()[-1]  # the footer
        await pilot.press("f1")
        await sc.chat_at_end(pilot)
        help_entry = [e for e in app.screen.chat.query(NoticeEntry) if e.border_title == "help"][-1]
        text = "\n".join(painted_lines(help_entry))
        assert "ctrl+q" in text and "/exit" in text and "/quit" in text


@pytest.mark.parametrize(
    "keys", [["ctrl+q"], [*"/exit", "enter"], [*"/quit", "enter"]], ids=["ctrl+q", "/exit", "/quit"]
)
async def test_quit_with_ctrl_q_or_exit_or_quit(keys: list[str]) -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press(*keys)
        await until(lambda: app.return_code is not None)
        assert app.return_code == 0


# -- 6b: /permissions ------------------------------------------------------------------------
def project_settings(project: Path):
    """Settings of ``project`` (approved: its grants apply) with the hermetic user file."""
    paths = SettingsPaths.discover(project)
    return load_settings(SettingsPaths(paths.user, paths.project, paths.project_local, None), env={}).with_overrides(
        {"toolSearch.ranker": "hybrid", "toolSearch.enabled": "true"}
    )


async def test_permissions_lists_rules_with_their_files_and_removes_a_saved_answer(tmp_path: Path) -> None:
    """ "Always allow" on get_forecast saves the rule; ``/permissions`` lists it with that file
    beside a user rule with its own file; Delete on the saved one rewrites the file without it,
    and the next call asks again (it ran without asking before)."""
    project = tmp_path / "proj"
    project.mkdir()
    user = Path(SettingsPaths.discover(project).user)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"]}}), encoding="utf-8")
    settings = project_settings(project)
    engine = sc.make_engine(settings, project_dir=project)
    from toolscout.tui.factory import make_app

    app = make_app(settings, engine, new_session=sc.session_factory(engine, settings))
    local = project / ".toolscout" / "settings.local.json"
    forecast = {"city": "Oslo"}
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await sc.settle(pilot)
        app.controller.run_tool("mcp__weather__get_forecast", forecast)
        await msgs.wait_for(pilot, lambda _m: isinstance(app.screen, PermissionScreen))
        await pilot.press("a")  # always allow: saved to the project-local file
        await sc.settle(pilot)
        saved = json.loads(local.read_text(encoding="utf-8"))["permissions"]
        assert saved["allow"] == ["mcp__weather__get_forecast"]
        assert list(saved["approvedTools"]) == ["mcp__weather__get_forecast"]  # what was approved, beside it
        app.controller.run_tool("mcp__weather__get_forecast", forecast)  # runs without asking
        await sc.settle(pilot)
        assert len(app.screen.chat.query(ToolCallEntry)) == 2 and not isinstance(app.screen, PermissionScreen)

        await sc.type_text(pilot, "/permissions")
        await pilot.press("enter")
        await sc.until_screen(pilot, "PermissionsScreen")
        from toolscout.tui.screens.permissions import PermissionsScreen

        screen = app.screen
        assert isinstance(screen, PermissionsScreen)
        assert [(r.kind, r.rule, r.source, r.saved_answer) for r in screen.rows] == [
            ("deny", "Bash(rm *)", str(user), False),
            ("allow", "mcp__weather__get_forecast", str(local), True),
        ]
        text = sc.screen_text(app)
        assert "deny  Bash(rm *)" in text and "allow mcp__weather__get_forecast" in text and "saved answer" in text
        await pilot.press("delete")  # on the deny rule: not a saved answer, so it stays and says where it is
        await pilot.pause()
        assert "Bash(rm *) is not a saved answer: it comes from" in sc.screen_text(app)
        await pilot.press("down", "delete")
        await pilot.pause()
        assert json.loads(local.read_text(encoding="utf-8")) == {"permissions": {"allow": []}}  # its fingerprint too
        assert "removed mcp__weather__get_forecast" in sc.screen_text(app)
        assert [r.rule for r in screen.rows] == ["Bash(rm *)"]
        await pilot.press("escape")
        await sc.settle(pilot)

        app.controller.run_tool("mcp__weather__get_forecast", forecast)  # asks again at once
        await msgs.wait_for(pilot, lambda _m: isinstance(app.screen, PermissionScreen))
        await pilot.press("n")
        await sc.settle(pilot)


# -- 6d: the project folder in a folder field ---------------------------------------------------
async def test_git_repo_path_starts_as_the_project_folder_and_the_real_server_gets_it(tmp_path: Path) -> None:
    """Ctrl+P → Run tool… → git_status: ``repo_path`` shows ``.`` (the project folder), and Run
    sends the folder itself: the real mcp-server-git (confined to the project with
    ``--repository``, running in another folder) reports the project's own untracked file."""
    project = tmp_path / "repo"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "hello-newcomer.txt").write_text("hi\n", encoding="utf-8")
    git = ServerConfig(
        "git", command=sys.executable, args=("-m", "mcp_server_git", "--repository", str(project)), cwd=str(tmp_path)
    )
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
        await msgs.wait_for(
            pilot, lambda _m: isinstance(app.screen, CommandPalette) and "Run which tool?" in sc.screen_text(app)
        )
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

    schema = {
        "type": "object",
        "properties": {
            "repo_path": {"type": "string"},
            "cwd": {"type": "string", "description": "Working directory"},
            "path": {"type": "string", "description": "The folder to list"},
            "directory": {"type": "string", "description": "Root of the project"},
            "file": {"type": "string", "description": "The repository file to read"},
            "target": {"type": "string", "description": "A path"},
            "root": {"type": "string", "description": "Where to start", "default": "/"},
            "dir": {"type": "integer", "description": "folder depth"},
        },
    }
    assert [f.name for f in fields_of(schema) if f.project_folder] == ["repo_path", "cwd", "path", "directory"]


# -- 6h: Screenshot without ~/Downloads -----------------------------------------------------------
async def test_screenshot_is_saved_in_the_data_dir_without_downloads(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no ~/Downloads, no XDG user-dirs file
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    folder = Path(os.environ["TOOLSCOUT_DATA_DIR"]) / "screenshots"
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("ctrl+p")
        await sc.type_text(pilot, "screenshot")
        await sc.settle(pilot, servers=False)
        await pilot.press("enter")
        await until(lambda: folder.is_dir() and list(folder.glob("*.svg")))
        (saved,) = folder.glob("*.svg")
        # the notice comes once the file is written (the file exists, empty, a moment before: seen in CI)
        await until(lambda: any(str(saved) in str(n.message) for n in app._notifications))
        assert "<svg" in saved.read_text(encoding="utf-8")[:2000]
        assert not (home / "Downloads").exists()
