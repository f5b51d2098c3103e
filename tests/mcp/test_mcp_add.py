"""``toolscout mcp add`` / ``mcp remove`` (issue 24 item 6c), typed as a Claude Code user types
``claude mcp add``, in a subprocess with a fresh ``HOME`` (the ``toolscout`` fixture of
``tests/conftest.py``): the server lands in ``~/.config/toolscout/mcp.json`` and the next
command starts it, with its environment and headers reaching the real server; a name already
there is refused; secrets go to the file only."""

from __future__ import annotations

import asyncio
import json
import stat
import sys

from mcp_helpers import server_path
from test_http import serving, web_server

SECRET = "s3cret-value-0042"


def test_add_a_stdio_server_then_use_it_then_remove_it(toolscout) -> None:
    added = toolscout(
        "mcp", "add", "-e", f"PROBE_KEY={SECRET}", "probe", "--", sys.executable, server_path("probe"), "--flag", "x"
    )
    assert added.returncode == 0, added.stderr
    assert SECRET not in added.stdout + added.stderr  # the value goes to the file only
    assert "Added stdio MCP server probe to the user config ~/.config/toolscout/mcp.json" in added.stdout
    assert "env: PROBE_KEY" in added.stdout
    path = toolscout.user_mcp_json
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "mcpServers": {
            "probe": {
                "command": sys.executable,
                "args": [server_path("probe"), "--flag", "x"],
                "env": {"PROBE_KEY": SECRET},
            }
        }
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds a secret: the owner's alone
    assert not list(path.parent.glob("*.tmp"))  # written atomically, nothing left behind

    called = toolscout(
        "call",
        "mcp__probe__probe",
        "--params",
        '{"variable": "PROBE_KEY"}',
        "--json",
        "--allowed-tools",
        "mcp__probe__probe",
    )
    assert called.returncode == 0, called.stderr
    seen = json.loads(json.loads(called.stdout)["content"][0]["text"])
    assert seen["value"] == SECRET and seen["argv"] == ["--flag", "x"]  # what the server was started with

    removed = toolscout("mcp", "remove", "probe")
    assert removed.returncode == 0, removed.stderr
    assert "Removed MCP server probe from the user config ~/.config/toolscout/mcp.json" in removed.stdout
    assert json.loads(path.read_text(encoding="utf-8")) == {"mcpServers": {}}
    again = toolscout("mcp", "remove", "probe")
    assert again.returncode == 1 and "no server named 'probe'" in again.stderr


def test_an_existing_name_is_refused_and_the_file_kept(toolscout) -> None:
    assert toolscout("mcp", "add", "clock", "--", sys.executable, "-m", "mcp_server_time").returncode == 0
    path = toolscout.user_mcp_json
    before = path.read_bytes()
    proc = toolscout("mcp", "add", "clock", "--", "somethingelse")
    assert proc.returncode == 1 and proc.stdout == ""
    assert f"a server named 'clock' is already in {path}; nothing was changed" in proc.stderr
    assert "toolscout mcp remove clock" in proc.stderr
    assert path.read_bytes() == before


def test_other_keys_and_servers_of_the_file_are_kept(toolscout) -> None:
    path = toolscout.user_mcp_json
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"old": {"command": "old-cmd"}}, "note": "mine"}), encoding="utf-8")
    assert toolscout("mcp", "add", "new", "--", "new-cmd", "-v").returncode == 0
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "mcpServers": {"old": {"command": "old-cmd"}, "new": {"command": "new-cmd", "args": ["-v"]}},
        "note": "mine",
    }


def test_a_broken_user_file_is_never_overwritten(toolscout) -> None:
    path = toolscout.user_mcp_json
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {', encoding="utf-8")
    proc = toolscout("mcp", "add", "x", "--", "cmd")
    assert proc.returncode == 1 and "malformed JSON" in proc.stderr and "left as is" in proc.stderr
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {'


def test_usage_mistakes_say_how_to_fix_them(toolscout) -> None:
    bad_name = toolscout("mcp", "add", "my server", "--", "cmd")
    assert bad_name.returncode == 1 and "invalid server name 'my server'" in bad_name.stderr
    assert "'my_server'" in bad_name.stderr
    scope = toolscout("mcp", "add", "--scope", "project", "x", "--", "cmd")
    assert scope.returncode == 2 and "a project's servers go in its .mcp.json" in scope.stderr
    env = toolscout("mcp", "add", "-e", "NOVALUE", "x", "--", "cmd")
    assert env.returncode == 2 and "expected KEY=VALUE" in env.stderr
    late = toolscout("mcp", "add", "--transport", "http", "api", "https://example.com/mcp", "--header", "A: b")
    assert late.returncode == 2 and "options go before NAME" in late.stderr
    header = toolscout("mcp", "add", "-H", "A: b", "x", "--", "cmd")
    assert header.returncode == 1 and "--header is for http and sse servers" in header.stderr
    assert not toolscout.user_mcp_json.exists()  # nothing was written by any of them


async def test_add_an_http_server_with_a_header_the_server_receives(toolscout) -> None:
    """``claude mcp add --transport http NAME URL --header ...``: the header's value is in the
    file, not on the screen, and the real server receives it."""
    async with serving(web_server().streamable_http_app()) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        added = await asyncio.to_thread(
            toolscout, "mcp", "add", "--transport", "http", "--header", f"Authorization: Bearer {SECRET}", "web", url
        )
        assert added.returncode == 0, added.stderr
        assert SECRET not in added.stdout and "headers: Authorization" in added.stdout
        assert json.loads(toolscout.user_mcp_json.read_text(encoding="utf-8"))["mcpServers"]["web"] == {
            "type": "http",
            "url": url,
            "headers": {"Authorization": f"Bearer {SECRET}"},
        }
        called = await asyncio.to_thread(
            toolscout, "call", "mcp__web__whoami", "--json", "--allowed-tools", "mcp__web__whoami"
        )
        assert called.returncode == 0, called.stderr
        assert json.loads(called.stdout)["content"][0]["text"] == f"Bearer {SECRET}"


def test_removing_a_server_removes_its_login(toolscout) -> None:
    """A removed remote server's OAuth tokens are not left in the config dir for whatever is
    added under its name next (the login file is the one ``mcp login`` writes)."""
    added = toolscout("mcp", "add", "--transport", "http", "notes", "https://notes.example/mcp")
    assert added.returncode == 0, added.stderr
    login = toolscout.user_mcp_json.parent / "oauth" / "notes.json"
    login.parent.mkdir(mode=0o700, exist_ok=True)
    login.write_text(json.dumps({"url": "https://notes.example/mcp", "tokens": {"access_token": "t"}}))
    other = login.parent / "keep.json"
    other.write_text("{}")

    removed = toolscout("mcp", "remove", "notes")
    assert removed.returncode == 0, removed.stderr
    assert "Removed its OAuth login ~/.config/toolscout/oauth/notes.json" in removed.stdout
    assert not login.exists() and other.exists()  # that server's login only
