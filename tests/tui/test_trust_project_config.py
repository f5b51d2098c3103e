"""The trust prompt for a project's ``--mcp-config`` file (real stdio server).

``toolscout --mcp-config .toolscout/servers.json`` in a cloned repo whose servers live in that
file (the README's setup for Claude Code): the folder had "no project config", so the app asked
nothing and started the file's servers. Now the prompt lists them, escaped and as written, each
saying its file, starts nothing until the person approves, and asks again after the file changes.
The server is the recorder fixture: it writes ``{"event": "start"}`` to its log when it starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tui_scenarios as sc
from textual.widgets import Static
from tui_trust import prompt_items, prompt_over_catalog, until_armed

from toolscout.core.factory import create_engine
from toolscout.core.models import ServerState
from toolscout.core.policy.trust import check_folder, trust_store_path
from toolscout.core.settings.layers import SettingsPaths, load_settings
from toolscout.tui.factory import make_app
from toolscout.tui.screens.trust import TrustScreen

RECORDER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "recorder.py"
CONFIG = ".toolscout/servers.json"
SIZE = (120, 36)


def recorder(log: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(RECORDER), "rec", str(log)]}


def write_servers(repo: Path, servers: dict[str, Any]) -> None:
    (repo / ".toolscout").mkdir(parents=True, exist_ok=True)
    (repo / CONFIG).write_text(json.dumps({"mcpServers": servers}))


def engine_in(repo: Path, monkeypatch) -> Any:
    """The engine as ``toolscout --mcp-config .toolscout/servers.json`` builds it in ``repo``."""
    monkeypatch.chdir(repo)
    settings = load_settings(SettingsPaths.discover(repo), project_trusted=False)
    return create_engine(settings, project_dir=repo, mcp_config_paths=[CONFIG])


def offline_app(repo: Path, monkeypatch) -> Any:
    """The app in ``repo`` with no model (an offline session), over :func:`engine_in`."""
    from toolscout.cli.app_cmd import offline_tool_search
    from toolscout.core.session.providers import OfflineProvider
    from toolscout.core.session.session import Session

    engine = engine_in(repo, monkeypatch)
    session = Session(engine, settings=engine.settings, provider=OfflineProvider(), persist=False)
    return make_app(offline_tool_search(session, engine.settings), engine, session)


def events(log: Path) -> list[str]:
    return [json.loads(line)["event"] for line in log.read_text().splitlines()] if log.exists() else []


async def test_the_prompt_lists_the_files_servers_escaped_and_not_now_starts_nothing(tmp_path, monkeypatch):
    """Harness: the file's servers are in the prompt like ``.mcp.json``'s: the name and a
    command hiding a second one behind newlines shown escaped (``\\x1b``, ``\\n``), each with
    the file it comes from. "Not now" starts nothing and stores nothing."""
    repo, log, pwned = tmp_path / "repo", tmp_path / "rec.jsonl", tmp_path / "PWNED"
    write_servers(
        repo,
        {
            "rec\x1b]52;c;cHduZWQ=\x07": recorder(log),
            "nl": {"command": "/bin/sh", "args": ["-c", f"echo ok\n\ntouch {pwned}"]},
        },
    )
    engine = engine_in(repo, monkeypatch)
    async with prompt_over_catalog(engine, SIZE) as pilot:
        app = pilot.app
        assert isinstance(app.screen, TrustScreen)
        shown = prompt_items(app)
        lines = shown.splitlines()
        rec = lines.index("rec\\x1b]52;c;cHduZWQ=\\x07")
        assert lines[rec + 1] == f"  would run  {sys.executable} {RECORDER} rec {log}", shown
        assert lines[rec + 2] == f"  file       {CONFIG}", shown
        nl = lines.index("nl")
        assert lines[nl + 1 : nl + 3] == [
            f"  would run  /bin/sh -c 'echo ok\\n\\ntouch {pwned}'",
            f"  file       {CONFIG}",
        ], shown
        assert "\x1b" not in shown
        await until_armed(pilot)
        await pilot.press("n")
        await sc.settle(pilot)
        assert not isinstance(app.screen, TrustScreen)
        assert {s.state for s in app.engine.server_statuses()} == {ServerState.NOT_APPROVED}
        assert app.trusted == []
    assert not check_folder(repo, config_files=[CONFIG]).approved and not trust_store_path().exists()
    assert events(log) == [] and not pwned.exists()


async def test_approving_starts_the_files_server_and_an_edit_asks_again(tmp_path, monkeypatch):
    """Journey (full app): approving the folder starts the file's server and records the file;
    the folder's record without the file is as before (no ``.mcp.json``: nothing else to
    approve). A later edit of the file (a ``git pull`` pointing the server elsewhere) brings the
    prompt back, marking the server changed and saying which file changed; the new command
    does not run."""
    repo, log = tmp_path / "repo", tmp_path / "rec.jsonl"
    write_servers(repo, {"rec": recorder(log)})
    app = offline_app(repo, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await until_armed(pilot)
        assert not log.exists()
        await pilot.press("tab", "enter")  # "Trust this folder"
        await sc.settle(pilot)
        assert not isinstance(app.screen, TrustScreen)
        assert app.engine.server_statuses()[0].state is ServerState.CONNECTED
    assert events(log)[0] == "start"
    assert check_folder(repo, config_files=[CONFIG]).how == "approved"
    record = json.loads(trust_store_path().read_text())["folders"][str(repo.resolve())]
    assert list(record["configs"]) == [CONFIG] and record["mcpHash"] == ""

    pulled = tmp_path / "pulled.jsonl"
    write_servers(repo, {"rec": recorder(pulled)})
    app = offline_app(repo, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await until_armed(pilot)
        lines = prompt_items(app).splitlines()
        assert "rec  changed since you approved it: args changed" in lines, lines
        said = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert f"The commands in {CONFIG} (--mcp-config) changed since you approved it" in said, said
        await pilot.press("n")
        await sc.settle(pilot)
        assert app.engine.server_statuses()[0].state is ServerState.NOT_APPROVED
    assert events(pulled) == []
