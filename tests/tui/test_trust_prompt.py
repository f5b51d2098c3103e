"""The trust prompt: an unapproved folder's servers wait for the person's yes (real stdio server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tui_scenarios as sc

from toolscout.core.factory import create_engine
from toolscout.core.models import ServerState
from toolscout.core.settings import SettingsPaths, load_settings
from toolscout.core.trust import check_folder
from toolscout.tui.factory import make_app
from toolscout.tui.screens.trust import TrustScreen
from toolscout.tui.widgets.catalog import CatalogTree

RECORDER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "recorder.py"
SIZE = (120, 36)


def hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo, log = tmp_path / "repo", tmp_path / "recorder.jsonl"
    (repo / ".toolscout").mkdir(parents=True)
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj\x1b]52;c;cHduZWQ=\x07": {
        "command": sys.executable, "args": [str(RECORDER), "proj", str(log)]}}}))
    (repo / ".toolscout" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    return repo, log


def app_for(tmp_path: Path, monkeypatch):
    """The app in an unapproved hostile repo: ``(app, repo, the recorder's log)``."""
    repo, log = hostile_repo(tmp_path)
    monkeypatch.chdir(repo)
    settings = load_settings(SettingsPaths.discover(repo), project_trusted=False)
    return make_app(settings, create_engine(settings, project_dir=repo)), repo, log


async def test_approving_the_folder_starts_its_servers_and_applies_its_grants(tmp_path, monkeypatch):
    app, repo, log = app_for(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        assert isinstance(app.screen, TrustScreen)
        shown = str(app.screen.query_one("#trust-items").render())
        assert "would run" in shown and "\x1b" not in shown and "recorder.py" in shown
        assert "permissions.allow" in shown
        assert not log.exists()
        await pilot.press("y")
        await sc.settle(pilot)
        assert not isinstance(app.screen, TrustScreen)
        assert app.engine.server_statuses()[0].state is ServerState.CONNECTED
        assert app.engine.policy.decide(app.engine.tool("Bash")).decision.value == "allow"
    assert check_folder(repo).approved
    assert json.loads(log.read_text().splitlines()[0]) == {"event": "start"}


async def test_not_now_starts_nothing(tmp_path, monkeypatch):
    app, repo, log = app_for(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("n")
        await sc.settle(pilot)
        assert not isinstance(app.screen, TrustScreen)
        tree = app.screen.query_one(CatalogTree)
        shown = [str(leaf.label) for group in tree.root.children for leaf in group.children]
        assert any("would run" in line and "recorder.py" in line for line in shown), shown
        assert app.engine.server_statuses()[0].state is ServerState.NOT_APPROVED
        assert app.engine.policy.decide(app.engine.tool("Bash")).decision.value == "ask"
    assert not check_folder(repo).approved
    assert not log.exists()


async def test_after_approval_the_offline_session_keeps_tool_search_on_everywhere(tmp_path, monkeypatch):
    from toolscout.cli.app_cmd import offline_tool_search
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.tui.widgets.chat import NoticeEntry
    from toolscout.tui.widgets.status import StatusBar

    repo, _log = hostile_repo(tmp_path)
    monkeypatch.chdir(repo)
    settings = load_settings(SettingsPaths.discover(repo), project_trusted=False)
    engine = create_engine(settings, project_dir=repo)
    session = Session(engine, settings=settings, provider=OfflineProvider(), persist=False)
    settings = offline_tool_search(session, settings)  # as `toolscout` with no model does
    assert settings["toolSearch.enabled"] == "true"
    app = make_app(settings, engine, session)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("y")
        await sc.settle(pilot)
        for where in (app.settings, app.session.settings, app.engine.settings):
            assert where["toolSearch.enabled"] == "true" and where["permissions.allow"] == ["Bash"]
        assert app.engine.settings.sources["toolSearch.enabled"] == "offline session default"
        assert "tool search on" in str(app.screen.query_one(StatusBar).render())
        notices = [str(n.render()) for n in app.screen.query(NoticeEntry)]
        welcome = app.screen.welcome.body() if hasattr(app.screen, "welcome") else ""
        assert "every tool is inline" not in str(welcome)
        assert any("now trusted" in n for n in notices), notices
